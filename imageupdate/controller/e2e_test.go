package controller

import (
	"context"
	"errors"
	"io"
	"log"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/appstatus"
	"github.com/kubegitops/gitops/health"
	"github.com/kubegitops/gitops/imageupdate"
	"github.com/kubegitops/gitops/internal/gitserver"
	"github.com/kubegitops/gitops/internal/testfiles"
	"github.com/kubegitops/gitops/source"
	"github.com/kubegitops/gitops/state"
)

const imageDeployment = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: app}]}
`

// Image updates end to end: a registry on loopback holds 1.0.0, 1.0.1,
// 1.1.0-rc1 and latest; two apps run 1.0.0 with ~1.0. The git app's
// update is committed to the real Git server, hinted, and synced; the
// argocd app's override is held by the engine and synced; a third app's
// update goes to Argo's .argocd-source-<app>.yaml, which the engine
// merges when it renders. The Deployments end up running 1.0.1, Synced and Healthy, and the next
// round changes nothing.
func TestImageUpdaterSyncsNewImage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	regSrv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(regSrv.Close)
	host := strings.TrimPrefix(regSrv.URL, "http://")
	for _, tag := range []string{"1.0.0", "1.0.1", "1.1.0-rc1", "latest"} {
		img, err := random.Image(64, 1)
		if err != nil {
			t.Fatal(err)
		}
		ref, err := name.NewTag(host + "/team/app:" + tag)
		if err != nil {
			t.Fatal(err)
		}
		if err := remote.Write(ref, img); err != nil {
			t.Fatal(err)
		}
	}
	opts := gitserver.DefaultOptions()
	opts.PushUsername, opts.PushPassword = "updater", "push-secret"
	gs := testfiles.GitServer(t, opts)
	kust := "resources: [deployment.yaml]\nimages:\n- name: app\n  newName: " + host + "/team/app\n  newTag: 1.0.0\n"
	if _, err := gs.CreateRepository(ctx, "images", fstest.MapFS{
		"git/kustomization.yaml": {Data: []byte(kust)}, "git/deployment.yaml": {Data: []byte(imageDeployment)},
		"api/kustomization.yaml": {Data: []byte(kust)}, "api/deployment.yaml": {Data: []byte(imageDeployment)},
		"file/kustomization.yaml": {Data: []byte(kust)}, "file/deployment.yaml": {Data: []byte(imageDeployment)},
	}); err != nil {
		t.Fatal(err)
	}
	url := gs.RepoURL("images")
	e := newEngine(t, func(o *gitops.Options) {
		o.Interval = time.Hour // only the updater's hint can explain a refresh
		o.Credentials = func(string) *source.Credentials {
			return &source.Credentials{Username: "updater", Password: "push-secret"}
		}
	})
	nsGit, nsAPI, nsFile := cluster.TestNamespace(t), cluster.TestNamespace(t), cluster.TestNamespace(t)
	mk := func(ns, path, method string) *gitops.Application {
		a := gitApp(ns, url, gs.Branch(), ns)
		a.Spec.Source.Path = path
		a.Annotations = map[string]string{
			imageupdate.Prefix + "image-list":               "web=" + host + "/team/app:~1.0",
			imageupdate.Prefix + "web.kustomize.image-name": "app",
			imageupdate.Prefix + "write-back-method":        method,
		}
		if method == "git" && path == "git" {
			a.Annotations[imageupdate.Prefix+"write-back-target"] = "kustomization"
		}
		return a
	}
	// fileA has no write-back-target: Argo's .argocd-source-<app>.yaml,
	// which the engine merges onto the source when it renders.
	gitA, apiA, fileA := mk(nsGit, "git", "git"), mk(nsAPI, "api", "argocd"), mk(nsFile, "file", "git")
	startRun(t, e, gitA, apiA, fileA)
	cs, _ := kubernetes.NewForConfig(cluster.Config())
	running := func(ns, tag string) func() bool {
		return func() bool {
			d, err := cs.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
			st, _ := e.Apps().AppStatus(v1alpha1.AppKey{Name: ns})
			return err == nil && d.Spec.Template.Spec.Containers[0].Image == host+"/team/app:"+tag && st.Sync == appstatus.Synced && st.Health.Code == health.Healthy
		}
	}
	eventually(t, 2*time.Minute, "the apps run 1.0.0", func() bool {
		return running(nsGit, "1.0.0")() && running(nsAPI, "1.0.0")() && running(nsFile, "1.0.0")()
	})

	u := imageupdate.New(imageupdate.DefaultOptions())
	results, err := UpdateApps(ctx, e, u, []gitops.Application{*gitA, *apiA, *fileA})
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 3 || results[0].Commit == "" || results[0].Changes[0].NewTag != "1.0.1" || results[1].Override == nil ||
		results[2].Commit == "" || results[2].Files[0].Path != "file/.argocd-source-"+nsFile+".yaml" {
		t.Fatalf("results %+v", results)
	}
	if u.Registry().Stats().TagLists != 1 {
		t.Fatalf("%d tag listings for one image, want 1", u.Registry().Stats().TagLists)
	}
	// Both git write-backs committed to one branch: the apps compare its
	// head, the second commit.
	eventually(t, 2*time.Minute, "the git app runs 1.0.1 at the updater's commit", func() bool {
		st, _ := e.Apps().AppStatus(v1alpha1.AppKey{Name: nsGit})
		return running(nsGit, "1.0.1")() && st.Revision == results[2].Commit
	})
	eventually(t, 2*time.Minute, "the argocd app runs 1.0.1", running(nsAPI, "1.0.1"))
	eventually(t, 2*time.Minute, "the override-file app runs 1.0.1 at the updater's commit", func() bool {
		st, _ := e.Apps().AppStatus(v1alpha1.AppKey{Name: nsFile})
		return running(nsFile, "1.0.1")() && st.Revision == results[2].Commit
	})

	// The next round: the git app renders 1.0.1 now, nothing to commit;
	// the argocd app with its held override likewise.
	apiHeld := *apiA
	apiHeld, err = ApplyOverride(ctx, e, apiHeld, *results[1].Override)
	if err != nil {
		t.Fatal(err)
	}
	head, _ := gs.Head(ctx, "images")
	again, err := UpdateApps(ctx, e, u, []gitops.Application{*gitA, apiHeld, *fileA})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range again {
		if len(r.Changes) != 0 || r.Commit != "" || r.Override != nil {
			t.Fatalf("second round changed something: %+v", r)
		}
	}
	if now, _ := gs.Head(ctx, "images"); now != head {
		t.Fatal("second round committed")
	}
}

// The updater inside the engine's loop: Run finds the app the engine's Run
// manages, holds the argocd override, the engine syncs 1.0.1, and the
// rounds after see the held override and change nothing.
func TestRunInEngineLoop(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	regSrv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(regSrv.Close)
	host := strings.TrimPrefix(regSrv.URL, "http://")
	for _, tag := range []string{"1.0.0", "1.0.1", "1.1.0-rc1", "latest"} {
		img, err := random.Image(64, 1)
		if err != nil {
			t.Fatal(err)
		}
		ref, err := name.NewTag(host + "/team/app:" + tag)
		if err != nil {
			t.Fatal(err)
		}
		if err := remote.Write(ref, img); err != nil {
			t.Fatal(err)
		}
	}
	dir := repoDir(t, map[string]string{
		"app/kustomization.yaml": "resources: [deployment.yaml]\nimages:\n- name: app\n  newName: " + host + "/team/app\n  newTag: 1.0.0\n",
		"app/deployment.yaml":    imageDeployment,
	})
	ns := cluster.TestNamespace(t)
	app := automated(dirApp(ns, dir, ns))
	app.Annotations = map[string]string{
		imageupdate.Prefix + "image-list":               "web=" + host + "/team/app:~1.0",
		imageupdate.Prefix + "web.kustomize.image-name": "app",
	}
	e := newEngine(t, nil)
	startRun(t, e, app)

	rounds := make(chan []imageupdate.Result, 100)
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	u := imageupdate.New(imageupdate.DefaultOptions())
	go func() {
		done <- Run(rctx, e, u, 100*time.Millisecond, func(r []imageupdate.Result, err error) {
			if err == nil {
				select {
				case rounds <- r:
				default:
				}
			}
		})
	}()
	t.Cleanup(func() { cancel(); <-done })

	cs, _ := kubernetes.NewForConfig(cluster.Config())
	eventually(t, 2*time.Minute, "the app runs 1.0.1, Synced", func() bool {
		d, err := cs.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
		st, _ := e.Apps().AppStatus(v1alpha1.AppKey{Name: ns})
		return err == nil && d.Spec.Template.Spec.Containers[0].Image == host+"/team/app:1.0.1" && st.Sync == appstatus.Synced
	})
	// A round after the sync changes nothing: the held override is seen.
	eventually(t, time.Minute, "a round without changes", func() bool {
		select {
		case r := <-rounds:
			return len(r) == 1 && len(r[0].Changes) == 0 && r[0].Override == nil && len(r[0].Skipped) == 1
		default:
			return false
		}
	})
	if n := u.Registry().Stats().TagLists; n != 1 {
		t.Fatalf("%d tag listings within one interval, want 1", n)
	}
}

// The argocd override is kept in the engine's state store: after a
// restart, with the registry gone, the next round applies the held
// override to the spec the host hands over and the app runs 1.0.1 again
// (the round reports the registry error, and changes nothing else).
func TestHeldOverrideSurvivesRestart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	regSrv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	host := strings.TrimPrefix(regSrv.URL, "http://")
	for _, tag := range []string{"1.0.0", "1.0.1"} {
		img, err := random.Image(64, 1)
		if err != nil {
			t.Fatal(err)
		}
		ref, err := name.NewTag(host + "/team/app:" + tag)
		if err != nil {
			t.Fatal(err)
		}
		if err := remote.Write(ref, img); err != nil {
			t.Fatal(err)
		}
	}
	dir := repoDir(t, map[string]string{
		"app/kustomization.yaml": "resources: [deployment.yaml]\nimages:\n- name: app\n  newName: " + host + "/team/app\n  newTag: 1.0.0\n",
		"app/deployment.yaml":    imageDeployment,
	})
	ns := cluster.TestNamespace(t)
	app := automated(dirApp(ns, dir, ns))
	app.Annotations = map[string]string{
		imageupdate.Prefix + "image-list":               "web=" + host + "/team/app:~1.0",
		imageupdate.Prefix + "web.kustomize.image-name": "app",
	}
	store := state.NewMemoryStore()
	cs, _ := kubernetes.NewForConfig(cluster.Config())
	runs := func(tag string) func() bool {
		return func() bool {
			d, err := cs.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
			return err == nil && d.Spec.Template.Spec.Containers[0].Image == host+"/team/app:"+tag
		}
	}

	first := newEngine(t, func(o *gitops.Options) { o.State = store })
	rctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = first.Run(rctx, []gitops.Application{*app}) }()
	eventually(t, 2*time.Minute, "1.0.0 runs", runs("1.0.0"))
	if _, err := UpdateApps(ctx, first, imageupdate.New(imageupdate.DefaultOptions()), []gitops.Application{*app}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 2*time.Minute, "1.0.1 runs", runs("1.0.1"))
	stop()
	<-done
	first.Close()
	regSrv.Close()

	// The restarted engine gets the spec without the override: it would
	// roll back to 1.0.0 by itself; the held override keeps 1.0.1.
	second := newEngine(t, func(o *gitops.Options) { o.State = store })
	held, err := HeldOverride(ctx, second, v1alpha1.KeyOf(app))
	if err != nil || held == nil || len(held.KustomizeImages) != 1 || held.KustomizeImages[0] != "app="+host+"/team/app:1.0.1" {
		t.Fatalf("held override %+v, %v", held, err)
	}
	startRun(t, second, app)
	eventually(t, 2*time.Minute, "the restarted engine runs the app", func() bool {
		_, ok := second.Apps().AppStatus(v1alpha1.AppKey{Name: ns})
		return ok
	})
	opts := imageupdate.DefaultOptions()
	opts.Registry.Timeout = 2 * time.Second
	_, err = UpdateApps(ctx, second, imageupdate.New(opts), []gitops.Application{*app})
	if !errors.Is(err, imageupdate.ErrRegistry) && !errors.Is(err, imageupdate.ErrTimeout) {
		t.Fatalf("with the registry gone: %v", err)
	}
	eventually(t, 2*time.Minute, "1.0.1 runs after the restart, Synced", func() bool {
		st, _ := second.Apps().AppStatus(v1alpha1.AppKey{Name: ns})
		return runs("1.0.1")() && st.Sync == appstatus.Synced
	})
}
