package main

import (
	"context"
	"fmt"
	"testing"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/imageupdate"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// updateImage adds platform-images (project platform, to the staging
// cluster, now the operator's own: see rotateStaging), an Application
// with Argo CD Image Updater's annotations writing back to Git's
// kustomization, waits until it runs team/app:1.0.0, pushes 1.0.1 and
// waits for the Image Updater's commit on the Git server and the app
// running 1.0.1 at it. It returns the commit.
func (a *argoNamespace) updateImage(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	image := a.reg.Host + "/team/app"
	app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: a.ns, Name: "platform-images", Annotations: map[string]string{
		imageupdate.Prefix + "image-list":               "web=" + image + ":~1.0",
		imageupdate.Prefix + "web.kustomize.image-name": "app",
		imageupdate.Prefix + "write-back-method":        "git",
		imageupdate.Prefix + "write-back-target":        "kustomization",
	}}, Spec: v1alpha1.ApplicationSpec{
		Project:     "platform",
		Source:      &v1alpha1.ApplicationSource{RepoURL: a.gs.RepoURL("team"), Path: "images", TargetRevision: "HEAD"},
		Destination: v1alpha1.ApplicationDestination{Name: "staging", Namespace: a.stagingNS},
		SyncPolicy:  &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{}},
	}}
	if err := a.c.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	got, cj := &v1alpha1.Application{}, &batchv1.CronJob{}
	runs := func(tag, revision string) func(context.Context) bool {
		return func(ctx context.Context) bool {
			if a.c.Get(ctx, types.NamespacedName{Namespace: a.ns, Name: app.Name}, got) != nil ||
				a.c.Get(ctx, types.NamespacedName{Namespace: a.stagingNS, Name: "web"}, cj) != nil {
				return false
			}
			return got.Status.Sync.Status == "Synced" && got.Status.Health.Status == "Healthy" && got.Status.Sync.Revision == revision &&
				cj.Spec.JobTemplate.Spec.Template.Spec.Containers[0].Image == image+":"+tag
		}
	}
	status := func(what string) func() string {
		return func() string {
			return fmt.Sprintf("%s: status %+v; CronJob %+v", what, got.Status, cj.Spec.JobTemplate.Spec.Template.Spec)
		}
	}
	waitUntil(t, status("platform-images runs 1.0.0"), runs("1.0.0", a.head))
	a.reg.PushImage("team/app", "1.0.1")
	var commit string
	waitUntil(t, func() string { return "the Image Updater's commit on the Git server" }, func(ctx context.Context) bool {
		var err error
		commit, err = a.gs.Head(ctx, "team")
		return err == nil && commit != a.head
	})
	waitUntil(t, status("platform-images runs 1.0.1 at the Image Updater's commit"), runs("1.0.1", commit))
	return commit
}

// refresh asks for a refresh of each app (Argo CD's refresh annotation).
func (a *argoNamespace) refresh(t *testing.T, apps ...string) {
	t.Helper()
	patch := []byte(`{"metadata":{"annotations":{"argocd.argoproj.io/refresh":"normal"}}}`)
	for _, name := range apps {
		app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: a.ns, Name: name}}
		if err := a.c.Patch(context.Background(), app, client.RawPatch(types.MergePatchType, patch)); err != nil {
			t.Fatal(err)
		}
	}
}

// waitRevision waits until each app is Synced and Healthy at revision.
func (a *argoNamespace) waitRevision(t *testing.T, revision string, apps ...string) {
	t.Helper()
	got := &v1alpha1.Application{}
	for _, name := range apps {
		waitUntil(t, func() string { return fmt.Sprintf("%s Synced at %s: status %+v", name, revision, got.Status) }, func(ctx context.Context) bool {
			return a.c.Get(ctx, types.NamespacedName{Namespace: a.ns, Name: name}, got) == nil &&
				got.Status.Sync.Status == "Synced" && got.Status.Health.Status == "Healthy" && got.Status.Sync.Revision == revision
		})
	}
}
