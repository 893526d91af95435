package main

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/imageupdate"
	"github.com/kubegitops/gitops/internal/chartserver"
	"github.com/kubegitops/gitops/internal/gitserver"
	"github.com/kubegitops/gitops/internal/testfiles"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// webCronJob runs the image "app" (kustomize sets it). A CronJob is
// Healthy before its first run: the test cluster runs no controllers.
const webCronJob = `apiVersion: batch/v1
kind: CronJob
metadata: {name: web}
spec:
  schedule: "0 0 1 1 *"
  jobTemplate:
    spec:
      template:
        spec: {restartPolicy: Never, containers: [{name: web, image: app}]}
`

// The operator runs the image updater continuously: a registry holds
// team/app:1.0.0, two Applications run it with ~1.0, one writing back to
// Git (the kustomization, pushed with the credentials of the namespace's
// Argo CD repository Secret) and one to its own spec (argocd). Rounds with
// no new tag write nothing; once 1.0.1 is pushed a commit lands on the Git
// server and its app syncs to it, and the other app's spec gets the
// kustomize image override and syncs to it; the rounds after write
// nothing again.
func TestOperatorUpdatesImages(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	reg := chartserver.NewRegistry(t, "", "")
	image := reg.Host + "/team/app"
	reg.PushImage("team/app", "1.0.0")

	gopts := gitserver.DefaultOptions()
	gopts.PushUsername, gopts.PushPassword = "updater", "push-secret"
	gs := testfiles.GitServer(t, gopts)
	kust := "resources: [cronjob.yaml]\nimages:\n- name: app\n  newName: " + image + "\n  newTag: 1.0.0\n"
	if _, err := gs.CreateRepository(ctx, "images", fstest.MapFS{
		"git/kustomization.yaml": {Data: []byte(kust)}, "git/cronjob.yaml": {Data: []byte(webCronJob)},
		"api/kustomization.yaml": {Data: []byte(kust)}, "api/cronjob.yaml": {Data: []byte(webCronJob)},
		"helm/Chart.yaml":             {Data: []byte("apiVersion: v2\nname: web\nversion: 0.1.0\n")},
		"helm/values.yaml":            {Data: []byte("image: {name: " + image + ", tag: 1.0.0}\n")},
		"helm/templates/cronjob.yaml": {Data: []byte(strings.Replace(webCronJob, "image: app", "image: '{{ .Values.image.name }}:{{ .Values.image.tag }}'", 1))},
	}); err != nil {
		t.Fatal(err)
	}
	repoURL := gs.RepoURL("images")

	scheme := runtime.NewScheme()
	if err := errors.Join(clientgoscheme.AddToScheme(scheme), v1alpha1.AddToScheme(scheme)); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cluster.Config(), client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	ns, destGit, destAPI := cluster.TestNamespace(t), cluster.TestNamespace(t), cluster.TestNamespace(t)
	// The push credentials are only in the Argo CD repository Secret.
	if err := c.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "images-repo", Labels: map[string]string{"argocd.argoproj.io/secret-type": "repository"}},
		StringData: map[string]string{"url": repoURL, "username": "updater", "password": "push-secret"},
	}); err != nil {
		t.Fatal(err)
	}

	ended := make(chan struct{})
	var runErr error
	go func() {
		defer close(ended)
		runErr = run(ctx, []string{"-kubeconfig", cluster.Kubeconfig(), "-namespace", ns, "-interval", "5s",
			"-image-update-interval", "2s", "-metrics-bind-address", "0", "-health-probe-bind-address", "0", "-applicationsets=false"})
	}()
	defer func() {
		cancel()
		<-ended
		if runErr != nil && !errors.Is(runErr, context.Canceled) {
			t.Errorf("run: %v", runErr)
		}
	}()
	poll := func(what string, cond func(ctx context.Context) (bool, error)) {
		t.Helper()
		err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
			select {
			case <-ended:
				return false, fmt.Errorf("run ended: %v", runErr)
			default:
			}
			return cond(ctx)
		})
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	mk := func(name, path, dest, method string) *v1alpha1.Application {
		a := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: map[string]string{
			imageupdate.Prefix + "image-list":               "web=" + image + ":~1.0",
			imageupdate.Prefix + "web.kustomize.image-name": "app",
			imageupdate.Prefix + "write-back-method":        method,
		}}, Spec: v1alpha1.ApplicationSpec{
			Project:     "default",
			Source:      &v1alpha1.ApplicationSource{RepoURL: repoURL, Path: path, TargetRevision: gs.Branch()},
			Destination: v1alpha1.ApplicationDestination{Name: "in-cluster", Namespace: dest},
			SyncPolicy:  &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{}},
		}}
		if method == "git" {
			a.Annotations[imageupdate.Prefix+"write-back-target"] = "kustomization"
		}
		return a
	}
	gitApp, apiApp := mk("web-git", "git", destGit, "git"), mk("web-api", "api", destAPI, "argocd")
	// A Helm chart with method argocd: Helm parameters image.name and
	// image.tag (Image Updater's defaults) on the spec.
	destHelm := cluster.TestNamespace(t)
	helmApp := mk("web-helm", "helm", destHelm, "argocd")
	delete(helmApp.Annotations, imageupdate.Prefix+"web.kustomize.image-name")
	helmApp.Spec.Source.Helm = &v1alpha1.ApplicationSourceHelm{ValueFiles: []string{"values.yaml"}}
	// An app whose annotations Image Updater does not define: reported by
	// name, and the others still update.
	badApp := mk("web-bad", "api", cluster.TestNamespace(t), "argocd")
	badApp.Spec.SyncPolicy = nil
	badApp.Annotations[imageupdate.Prefix+"web.update-stratgy"] = "semver"
	// The CRD is installed by run: create once it is served.
	for _, a := range []*v1alpha1.Application{gitApp, apiApp, helmApp, badApp} {
		poll("create Application "+a.Name, func(ctx context.Context) (bool, error) {
			return c.Create(ctx, a.DeepCopy()) == nil, nil
		})
	}
	// synced reports whether app is Synced at revision (any when empty)
	// and Healthy, and its CronJob runs image:tag.
	synced := func(app *v1alpha1.Application, dest, tag, revision string) func(ctx context.Context) (bool, error) {
		return func(ctx context.Context) (bool, error) {
			got := &v1alpha1.Application{}
			cj := &batchv1.CronJob{}
			if c.Get(ctx, client.ObjectKeyFromObject(app), got) != nil || c.Get(ctx, types.NamespacedName{Namespace: dest, Name: "web"}, cj) != nil {
				return false, nil
			}
			return got.Status.Sync.Status == "Synced" && got.Status.Health.Status == "Healthy" &&
				(revision == "" || got.Status.Sync.Revision == revision) &&
				cj.Spec.JobTemplate.Spec.Template.Spec.Containers[0].Image == image+":"+tag, nil
		}
	}
	poll("the apps run 1.0.0", func(ctx context.Context) (bool, error) {
		a, err := synced(gitApp, destGit, "1.0.0", "")(ctx)
		b, err2 := synced(apiApp, destAPI, "1.0.0", "")(ctx)
		h, err3 := synced(helmApp, destHelm, "1.0.0", "")(ctx)
		return a && b && h, errors.Join(err, err2, err3)
	})

	poll("a Warning Event naming the bad annotation", func(ctx context.Context) (bool, error) {
		var evs corev1.EventList
		if err := c.List(ctx, &evs, client.InNamespace(ns)); err != nil {
			return false, nil
		}
		for _, e := range evs.Items {
			if e.InvolvedObject.Name == badApp.Name && e.Reason == "ImageUpdateFailed" && e.Type == corev1.EventTypeWarning &&
				strings.Contains(e.Message, "update-stratgy") {
				return true, nil
			}
		}
		return false, nil
	})

	// Rounds with nothing new write nothing: each round lists the tags
	// once (the registry cache lasts one interval).
	head, err := gs.Head(ctx, "images")
	if err != nil {
		t.Fatal(err)
	}
	apiGen, helmGen := generation(ctx, t, c, apiApp), generation(ctx, t, c, helmApp)
	waitRounds := func(what string, n int64) {
		t.Helper()
		from := reg.TagLists()
		poll(what, func(context.Context) (bool, error) { return reg.TagLists() >= from+n, nil })
	}
	waitRounds("two image update rounds", 2)
	if now, _ := gs.Head(ctx, "images"); now != head {
		t.Fatalf("a round without a new tag committed %s", now)
	}
	if g, h := generation(ctx, t, c, apiApp), generation(ctx, t, c, helmApp); g != apiGen || h != helmGen {
		t.Fatalf("a round without a new tag changed an argocd app's spec (generations %d -> %d, %d -> %d)", apiGen, g, helmGen, h)
	}

	// A new tag within the constraint, and one outside it.
	reg.PushImage("team/app", "1.0.1")
	reg.PushImage("team/app", "1.1.0")
	var commit string
	poll("the updater's commit on the Git server", func(ctx context.Context) (bool, error) {
		commit, err = gs.Head(ctx, "images")
		return err == nil && commit != head, nil
	})
	poll("the git app runs 1.0.1 at the updater's commit", synced(gitApp, destGit, "1.0.1", commit))
	poll("the argocd app's spec holds the override", func(ctx context.Context) (bool, error) {
		got := &v1alpha1.Application{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(apiApp), got); err != nil {
			return false, nil
		}
		k := got.Spec.Source.Kustomize
		return k != nil && slices.Equal([]string(k.Images), []string{"app=" + image + ":1.0.1"}), nil
	})
	poll("the argocd app runs 1.0.1", synced(apiApp, destAPI, "1.0.1", ""))
	poll("the Helm app's spec holds the parameters", func(ctx context.Context) (bool, error) {
		got := &v1alpha1.Application{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(helmApp), got); err != nil || got.Spec.Source.Helm == nil {
			return false, nil
		}
		return reflect.DeepEqual(got.Spec.Source.Helm.Parameters, []v1alpha1.HelmParameter{
			{Name: "image.name", Value: image, ForceString: true}, {Name: "image.tag", Value: "1.0.1", ForceString: true},
		}) && slices.Equal(got.Spec.Source.Helm.ValueFiles, []string{"values.yaml"}), nil
	})
	poll("the Helm app runs 1.0.1", synced(helmApp, destHelm, "1.0.1", ""))

	// The rounds after: nothing new, nothing written.
	apiGen, helmGen = generation(ctx, t, c, apiApp), generation(ctx, t, c, helmApp)
	waitRounds("two more image update rounds", 2)
	if now, _ := gs.Head(ctx, "images"); now != commit {
		t.Fatalf("a round after the update committed again: head %s, want %s", now, commit)
	}
	if g, h := generation(ctx, t, c, apiApp), generation(ctx, t, c, helmApp); g != apiGen || h != helmGen {
		t.Fatalf("a round after the update changed an argocd app's spec again (generations %d -> %d, %d -> %d)", apiGen, g, helmGen, h)
	}
}

// generation returns app's metadata.generation (it moves with every spec
// change).
func generation(ctx context.Context, t *testing.T, c client.Client, app *v1alpha1.Application) int64 {
	t.Helper()
	got := &v1alpha1.Application{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(app), got); err != nil {
		t.Fatal(err)
	}
	return got.Generation
}

// -image-update-interval is Image Updater's 2m by default; 0 turns the
// loop off.
func TestImageUpdateIntervalFlag(t *testing.T) {
	f, err := parseFlags(nil)
	if err != nil || f.imageUpdateInterval != 2*time.Minute {
		t.Errorf("default %v, err %v; want 2m", f.imageUpdateInterval, err)
	}
	f, err = parseFlags([]string{"-image-update-interval", "0"})
	if err != nil || f.imageUpdateInterval != 0 {
		t.Errorf("-image-update-interval 0: %v, err %v", f.imageUpdateInterval, err)
	}
}
