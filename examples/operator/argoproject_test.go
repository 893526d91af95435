package main

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/examples/operator/config"
	"github.com/kubegitops/gitops/internal/argodocs"
	"github.com/kubegitops/gitops/internal/gitserver"
	"github.com/kubegitops/gitops/internal/testfiles"
	"github.com/kubegitops/gitops/resource"
	"github.com/kubegitops/gitops/source/integrity"
	"github.com/kubegitops/gitops/testenv"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// deployment is a Deployment of one replica (kwok makes it Available)
// whose pod template carries word, so a new revision rolls it.
func deployment(name, word string) []byte {
	return []byte(fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: %[1]s}
spec:
  replicas: 1
  selector: {matchLabels: {app: %[1]s}}
  template:
    metadata: {labels: {app: %[1]s}, annotations: {word: %[2]s}}
    spec: {containers: [{name: web, image: nginx}]}
`, name, word))
}

// signedProject is the project of the GnuPG checks, as the user guide's
// source integrity page writes one (head mode: the synced commit).
const signedProject = `apiVersion: argoproj.io/v1alpha1
kind: AppProject
metadata: {name: signed, namespace: argocd}
spec:
  sourceRepos: ['*']
  destinations: [{server: https://kubernetes.default.svc, namespace: 'guestbook-*'}]
  sourceIntegrity:
    git:
      policies:
        - repos:
            - url: "%s/*"
          gpg:
            mode: head
            keys:
              - "%s"
`

// projectWorld is an Argo CD namespace ("argocd") on a cluster of its own
// with controllers and a fake node, so Deployments become Available.
type projectWorld struct {
	c      client.Client
	full   *testenv.Cluster
	gitURL string
	pusher *testfiles.GitPusher
}

func (w *projectWorld) create(t *testing.T, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		if err := w.c.Create(context.Background(), o); err != nil {
			t.Fatalf("create %T %s: %v", o, o.GetName(), err)
		}
	}
}

// app is an Application of argocd reading path of the Git repository at
// main, into namespace ns of cluster; a manual sync operation is set when
// sync is.
func (w *projectWorld) app(name, project, path, cluster, ns string, sync bool) *v1alpha1.Application {
	a := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: "argocd", Name: name}, Spec: v1alpha1.ApplicationSpec{
		Project:     project,
		Source:      &v1alpha1.ApplicationSource{RepoURL: w.gitURL, Path: path, TargetRevision: "main"},
		Destination: v1alpha1.ApplicationDestination{Name: cluster, Namespace: ns},
	}}
	if sync {
		a.Operation = &v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{}, InitiatedBy: v1alpha1.OperationInitiator{Username: "tester"}}
	}
	return a
}

// wait polls Application name until cond holds.
func (w *projectWorld) wait(t *testing.T, name, what string, cond func(*v1alpha1.Application) bool) *v1alpha1.Application {
	t.Helper()
	got := &v1alpha1.Application{}
	waitUntil(t, func() string { return fmt.Sprintf("%s: %s; status %+v", name, what, got.Status) }, func(ctx context.Context) bool {
		return w.c.Get(ctx, types.NamespacedName{Namespace: "argocd", Name: name}, got) == nil && cond(got)
	})
	return got
}

func syncedHealthyAt(revision string) func(*v1alpha1.Application) bool {
	return func(a *v1alpha1.Application) bool {
		return a.Status.Sync.Status == "Synced" && a.Status.Health.Status == "Healthy" && (revision == "" || a.Status.Sync.Revision == revision)
	}
}

func hasCondition(a *v1alpha1.Application, typ, msg string) bool {
	for _, c := range a.Status.Conditions {
		if c.Type == typ && strings.Contains(c.Message, msg) {
			return true
		}
	}
	return false
}

// TestArgoCDDocumentedProjectWorksWhole applies Argo CD's documented
// project (docs/operator-manual/project.yaml of the current release,
// unchanged) and a copy with permitOnlyProjectScopedClusters, a
// declarative cluster Secret scoped to that copy, and a project verifying
// GnuPG signatures with argocd-gpg-keys-cm, then runs the operator:
//
//   - apps of my-project (named *-prod, whose allow window lets manual
//     syncs through at any hour) sync on request and are Synced and
//     Healthy; an app deploying a ConfigMap (not in
//     namespaceResourceWhitelist) and a Namespace named kube-* (denied by
//     name) is refused with Argo CD's messages, nothing written; the
//     project's jwtTokens are named once in an Event;
//   - the scoped copy's app syncs to the cluster of the Secret, and is
//     refused on in-cluster with Argo CD's destination message;
//   - a commit signed by a key missing from argocd-gpg-keys-cm gets Argo
//     CD's ComparisonError and is not synced until the key is added to the
//     ConfigMap (no restart); an unsigned commit is refused (condition,
//     and a requested sync's operation message) while the synced one stays
//     live; the next signed commit syncs; a bad entry of the ConfigMap is
//     named in an Event and the other keys apply.
func TestArgoCDDocumentedProjectWorksWhole(t *testing.T) {
	ctx := context.Background()
	full, err := testenv.Start(ctx, testenv.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = full.Stop() })
	w := &projectWorld{c: newArgoClient(t, full.Config()), full: full}
	for _, ns := range []string{"argocd", "guestbook", "guestbook-dev", "guestbook-scoped", "guestbook-signed"} {
		w.create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	}
	// kubectl apply -f examples/operator/config/
	if err := config.Install(ctx, w.c, time.Minute); err != nil {
		t.Fatal(err)
	}
	gopts := gitserver.DefaultOptions()
	gopts.PushUsername, gopts.PushPassword = "dev", "push-secret"
	gs, _ := testfiles.GitRepo(t, gopts, "apps", fstest.MapFS{
		"guestbook/deploy.yaml": {Data: deployment("guestbook-ui", "hello")},
		"violation/ns.yaml":     {Data: []byte("apiVersion: v1\nkind: Namespace\nmetadata: {name: kube-extra}\n")},
		"violation/cm.yaml":     {Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {a: b}\n")},
		"signed/deploy.yaml":    {Data: deployment("signed", "initial")},
	})
	w.gitURL = gs.RepoURL("apps")
	w.pusher = testfiles.NewGitPusher(t, w.gitURL, "dev", "push-secret")

	// Argo CD's project.yaml as it ships, and the same project under
	// another name with permitOnlyProjectScopedClusters.
	objs, err := resource.Decode("project.yaml", argodocs.ForTest(t).MustReadFile(t, "docs/operator-manual/project.yaml"), resource.DecodeOptions{})
	if err != nil || len(objs) != 1 {
		t.Fatalf("project.yaml: %d objects, %v", len(objs), err)
	}
	scopedProject := objs[0].DeepCopy()
	scopedProject.SetName("my-scoped-project")
	if err := unstructured.SetNestedField(scopedProject.Object, true, "spec", "permitOnlyProjectScopedClusters"); err != nil {
		t.Fatal(err)
	}
	alice, mallory := testfiles.GPGKey(t, "alice", "alice@example.com"), testfiles.GPGKey(t, "mallory", "mallory@example.com")
	signed, err := resource.Decode("signed.yaml", []byte(fmt.Sprintf(signedProject, gs.URL(), testfiles.GPGKeyID(alice))), resource.DecodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// argocd-gpg-keys-cm as `argocd gpg add` leaves it: mallory's key only.
	keys := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "argocd", Name: integrity.ConfigMapName},
		Data: map[string]string{testfiles.GPGKeyID(mallory): testfiles.GPGPublicKey(t, mallory)}}
	// A declarative cluster Secret (declarative-setup.md), scoped to
	// my-scoped-project: the cluster's own API server under its address.
	cfg := full.Config()
	clusterConfig := fmt.Sprintf(`{"bearerToken": %q, "tlsClientConfig": {"insecure": false, "caData": %q}}`, cfg.BearerToken, base64.StdEncoding.EncodeToString(cfg.CAData))
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "argocd", Name: "mycluster-secret", Labels: map[string]string{"argocd.argoproj.io/secret-type": "cluster"}},
		Type: corev1.SecretTypeOpaque, StringData: map[string]string{"name": "scoped", "project": "my-scoped-project", "server": cfg.Host, "config": clusterConfig}}
	w.create(t, objs[0], scopedProject, signed[0], keys, secret)

	opctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- run(opctx, []string{"-kubeconfig", full.Kubeconfig(), "-namespace", "argocd", "-interval", "5s",
			"-metrics-bind-address", "0", "-health-probe-bind-address", "0", "-applicationsets=false", "-notifications=false"})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("run: %v", err)
		}
	})

	w.checkMyProject(t)
	w.checkScopedClusters(t)
	w.checkSignatures(t, alice)
	w.checkTokensNamedOnce(t)
}

// checkMyProject: apps of Argo CD's documented project sync and are
// Healthy; a violation is refused with Argo CD's messages; the project's
// jwtTokens are named in an Event.
func (w *projectWorld) checkMyProject(t *testing.T) {
	t.Helper()
	w.create(t, w.app("guestbook-prod", "my-project", "guestbook", "in-cluster", "guestbook", true),
		w.app("guestbook-dev-prod", "my-project", "guestbook", "in-cluster", "guestbook-dev", true),
		w.app("violation-prod", "my-project", "violation", "in-cluster", "guestbook", true))
	for _, name := range []string{"guestbook-prod", "guestbook-dev-prod"} {
		w.wait(t, name, "Synced and Healthy", syncedHealthyAt(""))
	}
	namespaceRefused := "resource :Namespace is not permitted in project my-project"
	configMapRefused := "resource :ConfigMap is not permitted in project my-project"
	got := w.wait(t, "violation-prod", "refused with Argo CD's messages", func(a *v1alpha1.Application) bool {
		op := a.Status.OperationState
		return hasCondition(a, "InvalidSpecError", namespaceRefused) && hasCondition(a, "InvalidSpecError", configMapRefused) &&
			op != nil && (op.Phase == "Failed" || op.Phase == "Error") && strings.Contains(op.Message, namespaceRefused)
	})
	if got.Status.Sync.Status == "Synced" {
		t.Errorf("the refused app is %s", got.Status.Sync.Status)
	}
	ctx := context.Background()
	if err := w.c.Get(ctx, types.NamespacedName{Name: "kube-extra"}, &corev1.Namespace{}); !apierrors.IsNotFound(err) {
		t.Errorf("Namespace kube-extra: %v, want not found", err)
	}
	if err := w.c.Get(ctx, types.NamespacedName{Namespace: "guestbook", Name: "settings"}, &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
		t.Errorf("ConfigMap guestbook/settings: %v, want not found", err)
	}
	w.waitEvent(t, "my-project", "UnusedField", "jwtTokens of role ci-role (1)")
}

// waitEvent waits for an Event of argocd about object with reason whose
// message holds msg, and returns how many times it was recorded.
func (w *projectWorld) waitEvent(t *testing.T, object, reason, msg string) int {
	t.Helper()
	var events corev1.EventList
	n := 0
	waitUntil(t, func() string {
		return fmt.Sprintf("a %s Event of %s saying %q: %+v", reason, object, msg, events.Items)
	}, func(ctx context.Context) bool {
		if w.c.List(ctx, &events, client.InNamespace("argocd")) != nil {
			return false
		}
		n = 0
		for _, e := range events.Items {
			if e.InvolvedObject.Name == object && e.Reason == reason && strings.Contains(e.Message, msg) {
				n += int(e.Count)
			}
		}
		return n > 0
	})
	return n
}

// checkTokensNamedOnce: another project's change loads every project
// again; my-project's jwtTokens, unchanged, are not named again.
func (w *projectWorld) checkTokensNamedOnce(t *testing.T) {
	t.Helper()
	waitUntil(t, func() string { return "give project signed a role with a token" }, func(ctx context.Context) bool {
		p := &unstructured.Unstructured{}
		p.SetGroupVersionKind(v1alpha1.SchemeGroupVersion.WithKind(v1alpha1.AppProjectKind))
		if w.c.Get(ctx, types.NamespacedName{Namespace: "argocd", Name: "signed"}, p) != nil {
			return false
		}
		roles := []any{map[string]any{"name": "ci", "jwtTokens": []any{map[string]any{"iat": int64(1700000000), "id": "t1"}}}}
		if unstructured.SetNestedSlice(p.Object, roles, "spec", "roles") != nil {
			return false
		}
		return w.c.Update(ctx, p) == nil
	})
	w.waitEvent(t, "signed", "UnusedField", "jwtTokens of role ci (1)")
	if n := w.waitEvent(t, "my-project", "UnusedField", "jwtTokens of role ci-role (1)"); n != 1 {
		t.Errorf("my-project's jwtTokens named %d times, want once", n)
	}
}

// checkScopedClusters: the project with permitOnlyProjectScopedClusters
// deploys to the cluster scoped to it (its implicit destination), and is
// refused on in-cluster.
func (w *projectWorld) checkScopedClusters(t *testing.T) {
	t.Helper()
	w.create(t, w.app("scoped-prod", "my-scoped-project", "guestbook", "scoped", "guestbook-scoped", true),
		w.app("unscoped-prod", "my-scoped-project", "guestbook", "in-cluster", "guestbook", false))
	w.wait(t, "scoped-prod", "Synced and Healthy on the scoped cluster", syncedHealthyAt(""))
	want := "application destination server 'in-cluster' and namespace 'guestbook' do not match any of the allowed destinations in project 'my-scoped-project'"
	w.wait(t, "unscoped-prod", "refused on in-cluster", func(a *v1alpha1.Application) bool {
		return hasCondition(a, "InvalidSpecError", want) && a.Status.Sync.Status != "Synced"
	})
}

// checkSignatures: GnuPG verification of the synced commit against
// argocd-gpg-keys-cm, which applies when it changes.
func (w *projectWorld) checkSignatures(t *testing.T, alice *openpgp.Entity) {
	t.Helper()
	ctx := context.Background()
	subkey := func(e *openpgp.Entity) string { return e.Subkeys[len(e.Subkeys)-1].PublicKey.KeyIdString() }
	word := func() string {
		d := &appsv1.Deployment{}
		if err := w.c.Get(ctx, types.NamespacedName{Namespace: "guestbook-signed", Name: "signed"}, d); err != nil {
			return ""
		}
		return d.Spec.Template.Annotations["word"]
	}
	first := w.pusher.Commit("by alice", map[string][]byte{"signed/deploy.yaml": deployment("signed", "first")}, "alice", alice)
	app := w.app("signed", "signed", "signed", "in-cluster", "guestbook-signed", false)
	app.Spec.SyncPolicy = &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{}}
	w.create(t, app)
	missing := fmt.Sprintf("GIT/GPG: Failed verifying revision %s by 'alice <alice@example.com>': signed with key not in keyring (key_id=%s)", first, subkey(alice))
	w.wait(t, "signed", "refused while alice's key is not in argocd-gpg-keys-cm", func(a *v1alpha1.Application) bool {
		return hasCondition(a, "ComparisonError", missing) && a.Status.Sync.Status == "OutOfSync"
	})
	if got := word(); got != "" {
		t.Fatalf("the unverified revision was deployed (%s)", got)
	}

	// `argocd gpg add` of alice's key: the ConfigMap changes, no restart.
	waitUntil(t, func() string { return "add alice's key to " + integrity.ConfigMapName }, func(ctx context.Context) bool {
		cm := &corev1.ConfigMap{}
		if w.c.Get(ctx, types.NamespacedName{Namespace: "argocd", Name: integrity.ConfigMapName}, cm) != nil {
			return false
		}
		cm.Data[testfiles.GPGKeyID(alice)] = testfiles.GPGPublicKey(t, alice)
		cm.Data["0123456789ABCDEF"] = "not a key" // a bad entry: named, the others apply
		return w.c.Update(ctx, cm) == nil
	})
	w.wait(t, "signed", "Synced and Healthy at alice's commit once her key is known", func(a *v1alpha1.Application) bool {
		return syncedHealthyAt(first)(a) && !hasCondition(a, "ComparisonError", "GIT/GPG")
	})
	w.waitEvent(t, integrity.ConfigMapName, "InvalidGnuPGKey", "GnuPG key 0123456789ABCDEF: not an ASCII-armored public key")

	unsigned := w.pusher.Commit("by bob", map[string][]byte{"signed/deploy.yaml": deployment("signed", "unsigned")}, "bob", nil)
	refused := fmt.Sprintf("GIT/GPG: Failed verifying revision %s by 'bob <bob@example.com>': unsigned (key_id=)", unsigned)
	w.wait(t, "signed", "the unsigned commit refused", func(a *v1alpha1.Application) bool {
		return hasCondition(a, "ComparisonError", refused) && a.Status.Sync.Status == "OutOfSync" && a.Status.Sync.Revision == unsigned
	})
	// A sync asked for (argocd app sync): refused with Argo CD's message.
	waitUntil(t, func() string { return "ask for a sync of signed" }, func(ctx context.Context) bool {
		a := &v1alpha1.Application{}
		if w.c.Get(ctx, types.NamespacedName{Namespace: "argocd", Name: "signed"}, a) != nil {
			return false
		}
		a.Operation = &v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{}, InitiatedBy: v1alpha1.OperationInitiator{Username: "tester"}}
		return w.c.Update(ctx, a) == nil
	})
	w.wait(t, "signed", "the requested sync refused", func(a *v1alpha1.Application) bool {
		op := a.Status.OperationState
		return a.Operation == nil && op != nil && op.Phase == "Error" && op.Message == "ComparisonError: "+refused
	})
	if got := word(); got != "first" {
		t.Fatalf("live Deployment at %q, want alice's first commit", got)
	}

	second := w.pusher.Commit("by alice again", map[string][]byte{"signed/deploy.yaml": deployment("signed", "second")}, "alice", alice)
	w.wait(t, "signed", "Synced and Healthy at alice's next commit", func(a *v1alpha1.Application) bool {
		return syncedHealthyAt(second)(a) && !hasCondition(a, "ComparisonError", "GIT/GPG")
	})
	if got := word(); got != "second" {
		t.Fatalf("live Deployment at %q, want alice's second commit", got)
	}
}
