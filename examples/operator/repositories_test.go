package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/internal/gitserver"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestRepositorySecretsAreLive: a private repository on the real Git
// server (basic auth, answering 404 without a challenge as GitHub does) is
// refused while no Secret gives its credentials; an Argo CD repository
// Secret created while the operator runs, with forceHttpBasicAuth and
// enableLfs (fields that once dropped the whole Secret), makes it sync, a
// changed password makes it fail again (the message names neither
// password), the right one syncs a new commit, and once the Secret is
// deleted the next refresh fails again. A repo-creds template with a
// misspelt field is named once in a Warning Event, and its credentials
// serve (without the misspelt password: refused); when its password is
// fixed the app syncs through it, and when it is deleted it is refused.
func TestRepositorySecretsAreLive(t *testing.T) {
	ctx := context.Background()
	ns, dest := cluster.TestNamespace(t), cluster.TestNamespace(t)
	opts := gitserver.DefaultOptions()
	opts.ReadUsername, opts.ReadPassword = "reader", "right-SECRET-pw"
	opts.NoChallenge = true
	gs, err := gitserver.Start(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = gs.Close() })
	manifest := func(v string) []byte {
		return []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: private}\ndata: {v: \"" + v + "\"}\n")
	}
	if _, err := gs.CreateRepository(ctx, "private", fstest.MapFS{"app/cm.yaml": {Data: manifest("1")}}); err != nil {
		t.Fatal(err)
	}
	scheme := runtime.NewScheme()
	if err := errors.Join(clientgoscheme.AddToScheme(scheme), v1alpha1.AddToScheme(scheme)); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cluster.Config(), client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	startOperatorArgs(t, ns, "-interval", "3s", "-notifications=false")
	app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "private-app"}, Spec: v1alpha1.ApplicationSpec{
		Project:     "default",
		Source:      &v1alpha1.ApplicationSource{RepoURL: gs.RepoURL("private"), Path: "app", TargetRevision: gs.Branch()},
		Destination: v1alpha1.ApplicationDestination{Name: "in-cluster", Namespace: dest},
		SyncPolicy:  &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{}},
	}}
	waitUntil(t, func() string { return "create Application" }, func(ctx context.Context) bool {
		return c.Create(ctx, app.DeepCopy()) == nil
	})
	got := &v1alpha1.Application{}
	refused := func(what string) {
		t.Helper()
		waitUntil(t, func() string { return fmt.Sprintf("%s: want a ComparisonError; status %+v", what, got.Status) }, func(ctx context.Context) bool {
			if c.Get(ctx, types.NamespacedName{Namespace: ns, Name: "private-app"}, got) != nil {
				return false
			}
			for _, cond := range got.Status.Conditions {
				if cond.Type == "ComparisonError" {
					if strings.Contains(cond.Message, "SECRET") {
						t.Fatalf("%s: the condition holds a password: %s", what, cond.Message)
					}
					return true
				}
			}
			return false
		})
	}
	deployed := func(what, v string) {
		t.Helper()
		cm := &corev1.ConfigMap{}
		waitUntil(t, func() string {
			return fmt.Sprintf("%s: want v %s deployed and the app Synced; status %+v", what, v, got.Status)
		}, func(ctx context.Context) bool {
			return c.Get(ctx, types.NamespacedName{Namespace: ns, Name: "private-app"}, got) == nil &&
				got.Status.Sync.Status == "Synced" && len(got.Status.Conditions) == 0 &&
				c.Get(ctx, types.NamespacedName{Namespace: dest, Name: "private"}, cm) == nil && cm.Data["v"] == v
		})
	}
	refused("no Secret")

	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "private-repo",
		Labels: map[string]string{"argocd.argoproj.io/secret-type": "repository"}},
		StringData: map[string]string{"url": gs.RepoURL("private"), "username": "reader", "password": "right-SECRET-pw",
			"forceHttpBasicAuth": "true", "enableLfs": "true", "useAzureWorkloadIdentity": "false"}}
	if err := c.Create(ctx, secret); err != nil {
		t.Fatal(err)
	}
	deployed("Secret created", "1")

	setPassword := func(pw string) {
		t.Helper()
		cur := &corev1.Secret{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(secret), cur); err != nil {
			t.Fatal(err)
		}
		cur.Data["password"] = []byte(pw)
		if err := c.Update(ctx, cur); err != nil {
			t.Fatal(err)
		}
	}
	commit := func(v string) {
		t.Helper()
		if _, err := gs.Commit(ctx, "private", "v"+v, map[string][]byte{"app/cm.yaml": manifest(v)}); err != nil {
			t.Fatal(err)
		}
	}
	setPassword("wrong-SECRET-pw")
	commit("2")
	refused("password changed to a wrong one")
	setPassword("right-SECRET-pw")
	deployed("password changed back", "2")

	// A misspelt field: the Secret is named once, the good one still
	// serves.
	typo := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "typo-repo",
		Labels: map[string]string{"argocd.argoproj.io/secret-type": "repo-creds"}},
		StringData: map[string]string{"url": gs.URL(), "username": "reader", "passwd": "typo-SECRET"}}
	if err := c.Create(ctx, typo); err != nil {
		t.Fatal(err)
	}
	typoEvent := func() *corev1.Event {
		var evs corev1.EventList
		if err := c.List(ctx, &evs, client.InNamespace(ns)); err != nil {
			return nil
		}
		for i, ev := range evs.Items {
			if ev.InvolvedObject.Name == "typo-repo" && ev.Reason == ReasonRepositorySecretField && strings.Contains(ev.Message, `"passwd"`) {
				if strings.Contains(ev.Message, "SECRET") {
					t.Fatalf("the Event holds a secret: %s", ev.Message)
				}
				return &evs.Items[i]
			}
		}
		return nil
	}
	waitUntil(t, func() string { return "Warning Event naming typo-repo and passwd" }, func(ctx context.Context) bool { return typoEvent() != nil })
	commit("3")
	deployed("a Secret with a misspelt field beside the good one", "3")

	if err := c.Delete(ctx, secret); err != nil {
		t.Fatal(err)
	}
	commit("4")
	refused("Secret deleted: the template has no password")

	// The template rotated to a right password: the app syncs through it.
	cur := &corev1.Secret{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(typo), cur); err != nil {
		t.Fatal(err)
	}
	cur.Data["password"] = []byte("right-SECRET-pw")
	if err := c.Update(ctx, cur); err != nil {
		t.Fatal(err)
	}
	deployed("repo-creds template with the right password", "4")
	if ev := typoEvent(); ev == nil || ev.Count > 1 {
		t.Errorf("the misspelt field's Event, after several loads: %+v, want it written once", ev)
	}
	if err := c.Delete(ctx, cur); err != nil {
		t.Fatal(err)
	}
	commit("5")
	refused("repo-creds template deleted")
}
