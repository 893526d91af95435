package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/internal/sopsexe"
	"github.com/kubegitops/gitops/notify"
	"github.com/kubegitops/gitops/testenv"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// newArgoClient is a client of cfg's cluster knowing core, CRD and
// Argo CD types.
func newArgoClient(t *testing.T, cfg *rest.Config) client.Client {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := errors.Join(clientgoscheme.AddToScheme(scheme), apiextensionsv1.AddToScheme(scheme), v1alpha1.AddToScheme(scheme)); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// startStaging starts a second local cluster (API server only, as
// TestClusterSecretsAsDestinations does) holding stagingNS.
func (a *argoNamespace) startStaging(t *testing.T) {
	t.Helper()
	remote, err := testenv.Start(context.Background(), testenv.Options{APIServerOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = remote.Stop() })
	a.remoteCfg = remote.Config()
	a.remote = newArgoClient(t, a.remoteCfg)
	if err := a.remote.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: a.stagingNS}}); err != nil {
		t.Fatal(err)
	}
}

// waitSyncedOn waits until each app (name -> the ConfigMap it deploys) is
// Synced and Healthy at the repository's revision with its ConfigMap on
// the cluster of c (in teamNS for web, else in stagingNS).
func (a *argoNamespace) waitSyncedOn(t *testing.T, c client.Client, apps map[string]string) {
	t.Helper()
	got := &v1alpha1.Application{}
	cm := &corev1.ConfigMap{}
	for name, object := range apps {
		dest := a.stagingNS
		if name == "web" {
			dest = a.teamNS
		}
		waitUntil(t, func() string {
			return fmt.Sprintf("%s Synced and Healthy, ConfigMap %s/%s on its cluster: status %+v; ConfigMap %v", name, dest, object, got.Status, cm.Data)
		}, func(ctx context.Context) bool {
			if a.c.Get(ctx, types.NamespacedName{Namespace: a.ns, Name: name}, got) != nil ||
				got.Status.Sync.Status != "Synced" || got.Status.Health.Status != "Healthy" || got.Status.Sync.Revision != a.head {
				return false
			}
			return c.Get(ctx, types.NamespacedName{Namespace: dest, Name: object}, cm) == nil && cm.Data["greeting"] == "hello"
		})
	}
}

// waitRefused waits until outside (project team, destination kube-system)
// has Argo CD's InvalidSpecError naming the project's destinations and
// has not synced.
func (a *argoNamespace) waitRefused(t *testing.T) {
	t.Helper()
	got := &v1alpha1.Application{}
	waitUntil(t, func() string {
		return fmt.Sprintf("outside refused by project team's destinations: status %+v", got.Status)
	}, func(ctx context.Context) bool {
		if a.c.Get(ctx, types.NamespacedName{Namespace: a.ns, Name: "outside"}, got) != nil {
			return false
		}
		for _, cond := range got.Status.Conditions {
			if cond.Type == "InvalidSpecError" && strings.Contains(cond.Message, "kube-system") && strings.Contains(cond.Message, "destinations") {
				return got.Status.Sync.Status != "Synced"
			}
		}
		return false
	})
}

// waitBadInputReported waits for a Warning Event on each bad object naming
// it and its key.
func (a *argoNamespace) waitBadInputReported(t *testing.T) {
	t.Helper()
	want := []struct{ object, reason, message string }{
		{"cluster-broken", "InvalidClusterSecret", "cluster secret " + a.ns + "/cluster-broken: config:"},
		{"argocd-cm", ReasonUnusedSetting, "argocd-cm: not an Argo CD setting this program knows: no.such.key"},
		{notify.ConfigMapName, ReasonNotificationConfig, "key template.broken left out"},
	}
	var seen []string
	waitUntil(t, func() string { return fmt.Sprintf("Events naming each bad object and key %+v; Events %q", want, seen) }, func(ctx context.Context) bool {
		var list corev1.EventList
		if a.c.List(ctx, &list, client.InNamespace(a.ns)) != nil {
			return false
		}
		seen = seen[:0]
		for _, e := range list.Items {
			if e.Type == corev1.EventTypeWarning {
				seen = append(seen, e.InvolvedObject.Name+" "+e.Reason+": "+e.Message)
			}
		}
		for _, w := range want {
			if !containsEvent(seen, w.object, w.reason, w.message) {
				return false
			}
		}
		return true
	})
	if all := strings.Join(seen, "\n"); strings.Contains(all, "s3cr3t-token") || strings.Contains(all, "deploy-SECRET-pw") {
		t.Errorf("an Event holds a secret: %s", all)
	}
}

// containsEvent reports whether one of seen ("object reason: message") is
// about object, with reason, and its message holds message.
func containsEvent(seen []string, object, reason, message string) bool {
	for _, s := range seen {
		if strings.HasPrefix(s, object+" "+reason+": ") && strings.Contains(s, message) {
			return true
		}
	}
	return false
}

// waitNotifications waits until the webhook has had exactly want
// ("app@revision" -> POSTs).
func (a *argoNamespace) waitNotifications(t *testing.T, what string, want map[string]int) {
	t.Helper()
	byApp := map[string]int{}
	waitUntil(t, func() string {
		return fmt.Sprintf("%s: POSTs %v, want %v; refused %v", what, byApp, want, a.recv.bad)
	}, func(context.Context) bool {
		_, posts := a.recv.revisions()
		byApp = map[string]int{}
		for _, p := range posts {
			byApp[p["app"]+"@"+p["revision"]]++
		}
		return fmt.Sprint(byApp) == fmt.Sprint(want)
	})
}

// rotateStaging points the cluster Secret cluster-staging at cfg's API
// server (its server, bearer token and CA).
func (a *argoNamespace) rotateStaging(t *testing.T, cfg *rest.Config) {
	t.Helper()
	rotated := clusterSecret(a.ns, "cluster-staging", "staging", cfg)
	waitUntil(t, func() string { return "rotate cluster-staging" }, func(ctx context.Context) bool {
		cur := &corev1.Secret{}
		if a.c.Get(ctx, types.NamespacedName{Namespace: a.ns, Name: "cluster-staging"}, cur) != nil {
			return false
		}
		cur.StringData = rotated.StringData
		return a.c.Update(ctx, cur) == nil
	})
}

// waitPlaintext waits until Secret db (platform/secret.enc.yaml,
// SOPS-encrypted in Git) is on the cluster of c in stagingNS, decrypted.
func (a *argoNamespace) waitPlaintext(t *testing.T, c client.Client) {
	t.Helper()
	secret := &corev1.Secret{}
	waitUntil(t, func() string { return fmt.Sprintf("Secret %s/db in plaintext: keys %v", a.stagingNS, len(secret.Data)) }, func(ctx context.Context) bool {
		return c.Get(ctx, types.NamespacedName{Namespace: a.stagingNS, Name: "db"}, secret) == nil && string(secret.Data["password"]) == sopsexe.Plaintext
	})
}
