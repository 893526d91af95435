package main

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/examples/operator/controller"
	"github.com/kubegitops/gitops/imageupdate"
	imagecontroller "github.com/kubegitops/gitops/imageupdate/controller"
	"github.com/kubegitops/gitops/source/repocreds"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// imageUpdates is Argo CD Image Updater inside the operator: every
// interval it checks the Applications the operator serves that carry an
// argocd-image-updater.argoproj.io/image-list annotation, and writes back
// what changed by the app's method: argocd merges the override into the
// Application custom resource's spec.source (kustomize images, Helm
// parameters); git commits to the repository with the credentials of the
// Argo CD repository Secrets of the operator's namespace and asks the
// Application reconciler for a hard refresh, so the app syncs the commit
// at once.
type imageUpdates struct {
	client    client.Client
	reader    client.Reader // the API server, for the read before a write
	engine    *gitops.Engine
	updater   *imageupdate.Updater
	recorder  record.EventRecorder
	namespace string
	interval  time.Duration
	log       logr.Logger
	creds     *repocreds.Live
}

// setupImageUpdates adds the image updater's loop to mgr (it runs on the
// leader only) unless f.imageUpdateInterval is 0.
func setupImageUpdates(mgr manager.Manager, engine *gitops.Engine, creds *repocreds.Live, cfg *rest.Config, f flags, log logr.Logger) error {
	if f.imageUpdateInterval <= 0 {
		return nil
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	opts := imageupdate.DefaultOptions()
	// One registry scan per image and round.
	opts.Registry.Interval = f.imageUpdateInterval
	opts.Secrets = secretGetter(kube)
	opts.Logger = log.WithName("imageupdate")
	u := &imageUpdates{
		client: mgr.GetClient(), reader: mgr.GetAPIReader(), engine: engine,
		updater: imageupdate.New(opts), recorder: mgr.GetEventRecorderFor("gitops-operator"),
		namespace: f.namespace, interval: f.imageUpdateInterval, log: log.WithName("imageupdate"), creds: creds,
	}
	return mgr.Add(manager.RunnableFunc(u.run))
}

// secretGetter reads the Secrets the pull-secret and git:secret:
// annotations name.
func secretGetter(kube kubernetes.Interface) imageupdate.SecretGetter {
	return func(ctx context.Context, namespace, name string) (map[string][]byte, error) {
		s, err := kube.CoreV1().Secrets(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		return s.Data, nil
	}
}

// run checks the Applications at once and then every interval until ctx
// ends.
func (u *imageUpdates) run(ctx context.Context) error {
	t := time.NewTicker(u.interval)
	defer t.Stop()
	for {
		u.round(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// round checks every Application with an image-list once, in
// namespace/name order; a failing app is reported (log and a Warning
// Event ImageUpdateFailed on it) and the others go on.
func (u *imageUpdates) round(ctx context.Context) {
	var list v1alpha1.ApplicationList
	if err := u.client.List(ctx, &list); err != nil {
		u.log.Error(err, "list Applications")
		return
	}
	apps := list.Items[:0]
	for _, app := range list.Items {
		if _, ok := app.Annotations[imageupdate.Prefix+"image-list"]; ok && app.DeletionTimestamp == nil {
			apps = append(apps, app)
		}
	}
	if len(apps) == 0 {
		return
	}
	sort.Slice(apps, func(i, j int) bool {
		return apps[i].Namespace+"/"+apps[i].Name < apps[j].Namespace+"/"+apps[j].Name
	})
	// The repository Secrets as the refreshes use them (repoSecrets keeps
	// them current; a bad Secret is left out and reported there).
	creds := u.creds.Store()
	for i := range apps {
		if ctx.Err() != nil {
			return
		}
		app := &apps[i]
		res, wrote, err := u.update(ctx, app, creds)
		switch {
		case err != nil:
			u.log.Error(err, "image update failed", "application", app.Namespace+"/"+app.Name)
			u.recorder.Event(app, corev1.EventTypeWarning, "ImageUpdateFailed", err.Error())
		case wrote:
			msg := describe(res)
			u.log.Info("images updated", "application", app.Namespace+"/"+app.Name, "changes", msg)
			u.recorder.Event(app, corev1.EventTypeNormal, "ImagesUpdated", msg)
		default:
			u.log.V(1).Info("images checked: nothing to write", "application", app.Namespace+"/"+app.Name, "skipped", len(res.Skipped))
		}
	}
}

// update checks one app and writes back what changed; wrote says whether
// anything was written (a commit pushed, or the spec changed).
func (u *imageUpdates) update(ctx context.Context, app *v1alpha1.Application, creds *repocreds.Store) (res imageupdate.Result, wrote bool, err error) {
	in, err := imagecontroller.AppOf(ctx, u.engine, app)
	if err != nil {
		return res, false, err
	}
	if in.Credentials == nil && creds != nil {
		project := app.Spec.Project
		if project == "" {
			project = "default"
		}
		if in.Credentials, err = creds.CredentialsForProject(ctx, project, in.RepoURL); err != nil {
			return res, false, fmt.Errorf("application %s/%s: repository credentials: %w", app.Namespace, app.Name, err)
		}
	}
	if res, err = u.updater.Update(ctx, in); err != nil {
		return res, false, err
	}
	if res.Override != nil {
		wrote, err = u.writeOverride(ctx, types.NamespacedName{Namespace: app.Namespace, Name: app.Name}, *res.Override)
		return res, wrote, err
	}
	if res.Commit == "" {
		return res, false, nil
	}
	// A hard refresh resolves the branch again: the app syncs the commit
	// now rather than at its next interval.
	patch := []byte(fmt.Sprintf(`{"metadata":{"annotations":{%q:"hard"}}}`, controller.AnnotationRefresh))
	if err := u.client.Patch(ctx, app, client.RawPatch(types.MergePatchType, patch)); err != nil && !apierrors.IsNotFound(err) {
		return res, true, fmt.Errorf("application %s/%s: request a refresh after commit %s: %w", app.Namespace, app.Name, res.Commit, err)
	}
	return res, true, nil
}

// writeOverride merges ov into the Application's spec.source as Argo CD
// Image Updater's argocd write-back does, reading the resource fresh and
// retrying on a conflict; a spec that already holds ov is not written
// (wrote false).
func (u *imageUpdates) writeOverride(ctx context.Context, key types.NamespacedName, ov imageupdate.Override) (wrote bool, err error) {
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur := &v1alpha1.Application{}
		if err := u.reader.Get(ctx, key, cur); err != nil {
			return err
		}
		next := imagecontroller.WithOverride(*cur, ov)
		if reflect.DeepEqual(next.Spec.Source, cur.Spec.Source) {
			wrote = false
			return nil
		}
		wrote = true
		return u.client.Update(ctx, &next)
	})
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("application %s: write the image override: %w", key, err)
	}
	return wrote, nil
}

// describe says what a result changed, for the log and the Event.
func describe(res imageupdate.Result) string {
	var parts []string
	for _, c := range res.Changes {
		to := c.NewTag
		if c.NewDigest != "" {
			to += "@" + c.NewDigest
		}
		parts = append(parts, fmt.Sprintf("%s: %q -> %q", c.Repository, c.OldTag, to))
	}
	out := strings.Join(parts, ", ")
	if res.Commit != "" {
		return out + fmt.Sprintf(" (committed %s to %s)", res.Commit, res.Branch)
	}
	return out + " (written to spec.source)"
}
