package main

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/fstest"
	"time"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/internal/gitserver"
	"github.com/kubegitops/gitops/internal/testfiles"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// With argocd-cmd-params-cm hydrator.enabled "true", the operator
// hydrates an Application's Helm chart dry source onto env/dev with the
// namespace's repository-write Secret (the repository Secret only reads),
// writes status.sourceHydrator, and the app syncs the hydrated commit; a
// dry commit changing only a comment is compared and makes no commit.
func TestOperatorHydratesAndSyncs(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	gopts := gitserver.DefaultOptions()
	gopts.PushUsername, gopts.PushPassword = "hydrator", "write-secret"
	gs := testfiles.GitServer(t, gopts)
	values := "# greeting of the day\ngreeting: hello\n"
	if _, err := gs.CreateRepository(ctx, "deploy", fstest.MapFS{
		"chart/Chart.yaml":               {Data: []byte("apiVersion: v2\nname: greeter\nversion: 0.1.0\n")},
		"chart/values.yaml":              {Data: []byte(values)},
		"chart/templates/configmap.yaml": {Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: '{{ .Release.Name }}'}\ndata: {greeting: '{{ .Values.greeting }}'}\n")},
	}); err != nil {
		t.Fatal(err)
	}
	repoURL := gs.RepoURL("deploy")

	scheme := runtime.NewScheme()
	if err := errors.Join(clientgoscheme.AddToScheme(scheme), v1alpha1.AddToScheme(scheme)); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cluster.Config(), client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	ns, dest := cluster.TestNamespace(t), cluster.TestNamespace(t)
	for _, obj := range []client.Object{
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "argocd-cmd-params-cm"}, Data: map[string]string{"hydrator.enabled": "true"}},
		&corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "deploy-write", Labels: map[string]string{"argocd.argoproj.io/secret-type": "repository-write"}},
			StringData: map[string]string{"url": repoURL, "username": "hydrator", "password": "write-secret"},
		},
	} {
		if err := c.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}

	ended := make(chan struct{})
	var runErr error
	go func() {
		defer close(ended)
		runErr = run(ctx, []string{"-kubeconfig", cluster.Kubeconfig(), "-namespace", ns, "-interval", "5s", "-hydrator-interval", "1s",
			"-image-update-interval", "0", "-metrics-bind-address", "0", "-health-probe-bind-address", "0", "-applicationsets=false", "-notifications=false"})
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
	app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "greeter"}, Spec: v1alpha1.ApplicationSpec{
		Project: "default",
		SourceHydrator: &v1alpha1.SourceHydrator{
			DrySource:  v1alpha1.DrySource{RepoURL: repoURL, TargetRevision: "HEAD", Path: "chart"},
			SyncSource: v1alpha1.SyncSource{TargetBranch: "env/dev", Path: "dev"},
		},
		Destination: v1alpha1.ApplicationDestination{Server: v1alpha1.KubernetesInternalAPIServerAddr, Namespace: dest},
		SyncPolicy:  &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{}},
	}}
	poll("create the Application once the CRD is served", func(ctx context.Context) (bool, error) {
		return c.Create(ctx, app.DeepCopy()) == nil, nil
	})
	dry1, err := gs.Head(ctx, "deploy")
	if err != nil {
		t.Fatal(err)
	}
	got := &v1alpha1.Application{}
	key := types.NamespacedName{Namespace: ns, Name: "greeter"}
	var hydrated string
	poll("hydrated and synced from env/dev", func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, key, got); err != nil {
			return false, nil
		}
		cur := got.Status.SourceHydrator.CurrentOperation
		if cur == nil || cur.Phase != v1alpha1.HydrateOperationPhaseHydrated || cur.DrySHA != dry1 {
			return false, nil
		}
		hydrated = cur.HydratedSHA
		return got.Status.Sync.Status == "Synced" && got.Status.Sync.Revision == hydrated, nil
	})
	if tip, err := gs.Git(ctx, "deploy", "rev-parse", "refs/heads/env/dev"); err != nil || tip != hydrated {
		t.Fatalf("env/dev at %s (%v), status says %s", tip, err, hydrated)
	}
	cm := &corev1.ConfigMap{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: dest, Name: "greeter"}, cm); err != nil || cm.Data["greeting"] != "hello" {
		t.Fatalf("ConfigMap %v, %v", cm.Data, err)
	}
	if last := got.Status.SourceHydrator.LastSuccessfulOperation; last == nil || last.HydratedSHA != hydrated || last.SourceHydrator.SyncSource.TargetBranch != "env/dev" {
		t.Errorf("lastSuccessfulOperation %+v", last)
	}

	dry2, err := gs.Commit(ctx, "deploy", "reword a comment", map[string][]byte{"chart/values.yaml": []byte("# the greeting\ngreeting: hello\n")})
	if err != nil {
		t.Fatal(err)
	}
	poll("the comment-only dry commit compared", func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, key, got); err != nil {
			return false, nil
		}
		cur := got.Status.SourceHydrator.CurrentOperation
		return cur != nil && cur.Phase == v1alpha1.HydrateOperationPhaseHydrated && cur.DrySHA == dry2, nil
	})
	if cur := got.Status.SourceHydrator.CurrentOperation; cur.HydratedSHA != hydrated {
		t.Errorf("comment-only dry commit hydrated as %s, want the first hydrated commit %s", cur.HydratedSHA, hydrated)
	}
	if tip, err := gs.Git(ctx, "deploy", "rev-parse", "refs/heads/env/dev"); err != nil || tip != hydrated {
		t.Errorf("env/dev moved to %s (%v) on a comment-only dry commit", tip, err)
	}

	// argocd-cm's hydrator keys apply to the next hydration, without a
	// restart: the author and the message of the next hydrated commit.
	settingsCM := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "argocd-cm"}, Data: map[string]string{
		"commit.author.name":                   "Hydra Bot",
		"commit.author.email":                  "hydra@example.com",
		"sourceHydrator.commitMessageTemplate": "hydrate {{ .metadata.drySha | trunc 7 }} live",
	}}
	if err := c.Create(ctx, settingsCM); err != nil {
		t.Fatal(err)
	}
	dry3, err := gs.Commit(ctx, "deploy", "greet anew", map[string][]byte{"chart/values.yaml": []byte("greeting: hi\n")})
	if err != nil {
		t.Fatal(err)
	}
	poll("the next dry commit hydrated with argocd-cm's new author", func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, key, got); err != nil {
			return false, nil
		}
		cur := got.Status.SourceHydrator.CurrentOperation
		if cur == nil || cur.Phase != v1alpha1.HydrateOperationPhaseHydrated || cur.DrySHA != dry3 {
			return false, nil
		}
		author, err := gs.Git(ctx, "deploy", "log", "-1", "--format=%an <%ae>", cur.HydratedSHA)
		return err == nil && author == "Hydra Bot <hydra@example.com>", nil
	})
	if subject, err := gs.Git(ctx, "deploy", "log", "-1", "--format=%s", got.Status.SourceHydrator.CurrentOperation.HydratedSHA); err != nil || subject != "hydrate "+dry3[:7]+" live" {
		t.Errorf("hydrated commit's subject %q (%v), want argocd-cm's template", subject, err)
	}
}
