package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/internal/argodocs"
	"github.com/kubegitops/gitops/internal/gitserver"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestArgoCDDocsSSHKnownHostsLive runs Argo CD's
// docs/operator-manual/argocd-ssh-known-hosts-cm.yaml (v3.6.1, from the
// release's zip), applied as it is, with a repository Secret holding an
// sshPrivateKey for a real SSH Git server (internal/gitserver running git
// upload-pack), under the operator:
//
//   - the docs' ConfigMap knows github.com, gitlab.com and the like, not
//     our server: the app is refused with Argo CD's "knownhosts: key is
//     unknown", naming the repository and argocd-ssh-known-hosts-cm, and
//     deploys nothing, while an app of a repository whose Secret says
//     insecure: "true" syncs from the same server (no host key check);
//   - the user adds the server's known_hosts line to the ConfigMap (an
//     edit, no restart): the app syncs, Synced and Healthy;
//   - a commit pushed to the server is deployed at the next refresh.
//
// No Event or condition quotes the private key.
func TestArgoCDDocsSSHKnownHostsLive(t *testing.T) {
	ctx := context.Background()
	w := &docsWorld{rel: argodocs.ForTest(t), c: newArgoClient(t, cluster.Config()), ns: cluster.TestNamespace(t), dest: cluster.TestNamespace(t),
		applied: map[string][]*unstructured.Unstructured{}}
	opts := gitserver.DefaultOptions()
	opts.SSH = true
	gs, err := gitserver.Start(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = gs.Close() })
	first, err := gs.CreateRepository(ctx, "argocd-example-apps", fstest.MapFS{
		"guestbook/cm.yaml": {Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: guestbook}\ndata: {version: one}\n")},
	})
	if err != nil {
		t.Fatal(err)
	}
	key, err := gs.NewSSHKey()
	if err != nil {
		t.Fatal(err)
	}
	repoURL := gs.SSHRepoURL("argocd-example-apps")
	if _, err := gs.CreateRepository(ctx, "insecure-apps", fstest.MapFS{
		"app/cm.yaml": {Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: insecure}\ndata: {a: b}\n")},
	}); err != nil {
		t.Fatal(err)
	}

	knownHosts := w.docObjects(t, "docs/operator-manual/argocd-ssh-known-hosts-cm.yaml", nil)
	if len(knownHosts) != 1 || knownHosts[0].GetName() != "argocd-ssh-known-hosts-cm" {
		t.Fatalf("argocd-ssh-known-hosts-cm.yaml holds %d objects", len(knownHosts))
	}
	docsLines, _, _ := unstructured.NestedString(knownHosts[0].Object, "data", "ssh_known_hosts")
	if !strings.Contains(docsLines, "github.com ssh-ed25519 ") || strings.Contains(docsLines, "127.0.0.1") {
		t.Fatalf("the docs' ssh_known_hosts no longer lists github.com only among the hosts it knows:\n%s", docsLines)
	}
	w.create(t, knownHosts...)
	repoSecret := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret",
		"metadata":   map[string]any{"name": "ssh-repo", "namespace": w.ns, "labels": map[string]any{"argocd.argoproj.io/secret-type": "repository"}},
		"stringData": map[string]any{"type": "git", "url": repoURL, "sshPrivateKey": string(key)}}}
	// A second repository of the same server, its Secret insecure: Argo
	// CD skips host key checking for it.
	insecureSecret := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret",
		"metadata":   map[string]any{"name": "ssh-insecure-repo", "namespace": w.ns, "labels": map[string]any{"argocd.argoproj.io/secret-type": "repository"}},
		"stringData": map[string]any{"type": "git", "url": gs.SSHRepoURL("insecure-apps"), "sshPrivateKey": string(key), "insecure": "true"}}}
	w.create(t, repoSecret, insecureSecret)
	startOperatorArgs(t, w.ns, "-interval", "5s", "-notifications=false")

	app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: "guestbook-ssh"}, Spec: v1alpha1.ApplicationSpec{
		Project:     "default",
		Source:      &v1alpha1.ApplicationSource{RepoURL: repoURL, Path: "guestbook", TargetRevision: "main"},
		Destination: v1alpha1.ApplicationDestination{Name: "in-cluster", Namespace: w.dest},
		SyncPolicy:  &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{}}}}
	insecureApp := app.DeepCopy()
	insecureApp.Name, insecureApp.Spec.Source = "insecure-ssh", &v1alpha1.ApplicationSource{RepoURL: gs.SSHRepoURL("insecure-apps"), Path: "app", TargetRevision: "main"}
	for _, a := range []*v1alpha1.Application{app, insecureApp} {
		waitUntil(t, func() string { return "create Application " + a.Name }, func(ctx context.Context) bool { return w.c.Create(ctx, a.DeepCopy()) == nil })
	}
	appKey := types.NamespacedName{Namespace: w.ns, Name: app.Name}

	// 1. Refused: the docs' hosts do not include ours.
	got := &v1alpha1.Application{}
	var refusal v1alpha1.ApplicationCondition
	waitUntil(t, func() string { return fmt.Sprintf("app refused with the unknown-host condition: %+v", got.Status) }, func(ctx context.Context) bool {
		if w.c.Get(ctx, appKey, got) != nil {
			return false
		}
		for _, c := range got.Status.Conditions {
			if strings.Contains(c.Message, "knownhosts: key is unknown") {
				refusal = c
				return true
			}
		}
		return false
	})
	t.Logf("refused: %s: %s", refusal.Type, refusal.Message)
	for _, want := range []string{repoURL, "argocd-ssh-known-hosts-cm"} {
		if !strings.Contains(refusal.Message, want) {
			t.Errorf("the refusal does not name %s: %s", want, refusal.Message)
		}
	}
	if refusal.Type != "ComparisonError" {
		t.Errorf("the refusal is a %s condition, want ComparisonError (Argo CD's)", refusal.Type)
	}
	if got.Status.Sync.Status == "Synced" {
		t.Errorf("the refused app says Synced: %+v", got.Status.Sync)
	}
	cm := &corev1.ConfigMap{}
	if err := w.c.Get(ctx, types.NamespacedName{Namespace: w.dest, Name: "guestbook"}, cm); err == nil {
		t.Error("the refused app deployed its ConfigMap")
	}
	// Meanwhile the insecure repository's app syncs from the same server.
	insecureGot := &v1alpha1.Application{}
	waitUntil(t, func() string { return fmt.Sprintf("insecure app Synced: %+v", insecureGot.Status) }, func(ctx context.Context) bool {
		return w.c.Get(ctx, types.NamespacedName{Namespace: w.ns, Name: insecureApp.Name}, insecureGot) == nil &&
			insecureGot.Status.Sync.Status == "Synced" && insecureGot.Status.Health.Status == "Healthy" && len(insecureGot.Status.Conditions) == 0
	})
	if err := w.c.Get(ctx, appKey, got); err != nil || got.Status.Sync.Status == "Synced" {
		t.Errorf("the strict app synced before its host was known: %+v, %v", got.Status.Sync, err)
	}

	// 2. The user adds the server's line to the ConfigMap: no restart.
	waitUntil(t, func() string { return "add our host to argocd-ssh-known-hosts-cm" }, func(ctx context.Context) bool {
		cur := &corev1.ConfigMap{}
		if w.c.Get(ctx, types.NamespacedName{Namespace: w.ns, Name: "argocd-ssh-known-hosts-cm"}, cur) != nil {
			return false
		}
		cur.Data["ssh_known_hosts"] = strings.TrimRight(cur.Data["ssh_known_hosts"], "\n") + "\n" + gs.SSHKnownHosts() + "\n"
		return w.c.Update(ctx, cur) == nil
	})
	waitUntil(t, func() string { return fmt.Sprintf("app Synced and Healthy at %s: %+v", first, got.Status) }, func(ctx context.Context) bool {
		return w.c.Get(ctx, appKey, got) == nil && got.Status.Sync.Status == "Synced" && got.Status.Health.Status == "Healthy" &&
			got.Status.Sync.Revision == first && len(got.Status.Conditions) == 0
	})
	if err := w.c.Get(ctx, types.NamespacedName{Namespace: w.dest, Name: "guestbook"}, cm); err != nil || cm.Data["version"] != "one" {
		t.Fatalf("guestbook ConfigMap after the sync: %v, %v", cm.Data, err)
	}

	// 3. A commit is deployed at the next refresh.
	second, err := gs.Commit(ctx, "argocd-example-apps", "two", map[string][]byte{
		"guestbook/cm.yaml": []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: guestbook}\ndata: {version: two}\n"),
	})
	if err != nil {
		t.Fatal(err)
	}
	committed := time.Now()
	waitUntil(t, func() string { return fmt.Sprintf("app Synced at %s: %+v", second, got.Status) }, func(ctx context.Context) bool {
		return w.c.Get(ctx, appKey, got) == nil && got.Status.Sync.Status == "Synced" && got.Status.Sync.Revision == second
	})
	waitUntil(t, func() string { return fmt.Sprintf("guestbook ConfigMap at version two: %v", cm.Data) }, func(ctx context.Context) bool {
		return w.c.Get(ctx, types.NamespacedName{Namespace: w.dest, Name: "guestbook"}, cm) == nil && cm.Data["version"] == "two"
	})
	t.Logf("the commit was deployed %s after it was pushed", time.Since(committed).Round(time.Second))

	// The private key is in no Event of the namespace.
	var evs corev1.EventList
	if err := w.c.List(ctx, &evs, client.InNamespace(w.ns)); err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(key), "\n") {
		if len(l) < 16 || strings.HasPrefix(l, "-----") {
			continue
		}
		for _, ev := range evs.Items {
			if strings.Contains(ev.Message, l) {
				t.Errorf("an Event quotes the private key: %s", ev.Message)
			}
		}
	}
}
