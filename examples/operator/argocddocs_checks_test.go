package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/source/repocreds"
	"golang.org/x/crypto/ssh"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// waitApp waits until cond holds of Application name of w.ns.
func (w *docsWorld) waitApp(t *testing.T, name, what string, cond func(*v1alpha1.Application) bool) *v1alpha1.Application {
	t.Helper()
	got := &v1alpha1.Application{}
	waitUntil(t, func() string { return fmt.Sprintf("%s: %s; status %+v", name, what, got.Status) }, func(ctx context.Context) bool {
		return w.c.Get(ctx, types.NamespacedName{Namespace: w.ns, Name: name}, got) == nil && cond(got)
	})
	return got
}

// events are the Events of w.ns about object, as "Reason: message".
func (w *docsWorld) events(ctx context.Context, object string) []string {
	var list corev1.EventList
	if w.c.List(ctx, &list, client.InNamespace(w.ns)) != nil {
		return nil
	}
	var out []string
	for _, e := range list.Items {
		if e.InvolvedObject.Name == object {
			out = append(out, e.Reason+": "+e.Message)
		}
	}
	return out
}

// checkDeclarativeCluster: an app whose destination names the declarative
// cluster Secret's cluster syncs there.
func (w *docsWorld) checkDeclarativeCluster(t *testing.T) {
	t.Helper()
	app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: "on-mycluster"}, Spec: v1alpha1.ApplicationSpec{
		Project:     "default",
		Source:      &v1alpha1.ApplicationSource{RepoURL: w.gitURL, Path: "guestbook", TargetRevision: "HEAD"},
		Destination: v1alpha1.ApplicationDestination{Name: "mycluster.example.com", Namespace: w.dest},
		SyncPolicy:  &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{}},
	}}
	waitUntil(t, func() string { return "create on-mycluster" }, func(ctx context.Context) bool { return w.c.Create(ctx, app.DeepCopy()) == nil })
	w.waitApp(t, "on-mycluster", "Synced and Healthy on mycluster.example.com", func(a *v1alpha1.Application) bool {
		return a.Status.Sync.Status == "Synced" && a.Status.Health.Status == "Healthy"
	})
	if err := w.c.Get(context.Background(), types.NamespacedName{Namespace: w.dest, Name: "guestbook"}, &corev1.ConfigMap{}); err != nil {
		t.Errorf("the app's ConfigMap on mycluster.example.com: %v", err)
	}
}

// checkNotifications: an app subscribing to on-sync-status-unknown
// through the slack service named mattermost gets my-custom-template
// there once its sync status is Unknown (its repository is missing).
func (w *docsWorld) checkNotifications(t *testing.T) {
	t.Helper()
	app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: "unknown-app",
		Annotations: map[string]string{"notifications.argoproj.io/subscribe.on-sync-status-unknown.mattermost": "my-channel"}},
		Spec: v1alpha1.ApplicationSpec{
			Project:     "default",
			Source:      &v1alpha1.ApplicationSource{RepoURL: strings.TrimSuffix(w.gitURL, "argocd-example-apps.git") + "missing.git", Path: "guestbook"},
			Destination: v1alpha1.ApplicationDestination{Name: "in-cluster", Namespace: w.dest},
		}}
	waitUntil(t, func() string { return "create unknown-app" }, func(ctx context.Context) bool { return w.c.Create(ctx, app.DeepCopy()) == nil })
	w.waitApp(t, "unknown-app", "sync status Unknown", func(a *v1alpha1.Application) bool { return a.Status.Sync.Status == "Unknown" })
	want := "Application details: https://cd.apps.argoproj.io//applications/unknown-app."
	waitUntil(t, func() string { return fmt.Sprintf("%q posted to the mattermost service: %q", want, w.slack.received()) }, func(ctx context.Context) bool {
		for _, p := range w.slack.received() {
			if body, err := url.QueryUnescape(p); err == nil && strings.Contains(body, want) && strings.Contains(body, "my-channel") {
				return true
			}
		}
		return false
	})
	// The keys that cannot deliver, each named; the rest delivered above.
	// service.opsgenie: its "..." (more keys go here) is no YAML;
	// service.telegram: argocd-notifications-secret.yaml has no
	// telegram-token; trigger.on-deployed: app-sync-succeeded is a
	// template of the catalog, not of this ConfigMap.
	leftOut := map[string]string{
		"service.opsgenie":    "not YAML",
		"service.telegram":    "refers to $telegram-token, which argocd-notifications-secret does not have",
		"trigger.on-deployed": `no template "app-sync-succeeded"`,
	}
	var named []string
	waitUntil(t, func() string { return fmt.Sprintf("the left-out keys named: %q", named) }, func(ctx context.Context) bool {
		named = named[:0]
		for _, e := range w.events(ctx, "argocd-notifications-cm") {
			if strings.HasPrefix(e, ReasonNotificationConfig+": ") {
				named = append(named, e)
			}
		}
		for key, why := range leftOut {
			if !containsAll(named, "key "+key+" left out", why) {
				return false
			}
		}
		return len(named) == len(leftOut)
	})
}

// containsAll reports whether one of list holds every one of parts.
func containsAll(list []string, parts ...string) bool {
	for _, s := range list {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(s, p)
		}
		if all {
			return true
		}
	}
	return false
}

// checkWebhookSecrets: argocd-secret's webhook keys verify the
// ApplicationSet webhook's events.
func (w *docsWorld) checkWebhookSecrets(t *testing.T) {
	t.Helper()
	push := []byte(`{"ref":"refs/heads/main","before":"0000000000000000000000000000000000000000","after":"1111111111111111111111111111111111111111","repository":{"html_url":"https://github.com/argoproj/argo-cd","clone_url":"https://github.com/argoproj/argo-cd.git","default_branch":"main"},"commits":[]}`)
	github := func(secret string) int {
		mac := hmac.New(sha256.New, []byte(secret))
		mac.Write(push)
		return w.postWebhook(t, push, map[string]string{"X-GitHub-Event": "push", "X-Hub-Signature-256": "sha256=" + hex.EncodeToString(mac.Sum(nil))}, "", "")
	}
	var code int
	waitUntil(t, func() string {
		return fmt.Sprintf("the GitHub push signed with webhook.github.secret accepted (%d)", code)
	}, func(context.Context) bool {
		code = github("shhhh! it's a github secret")
		return code == http.StatusOK
	})
	if code := github("another secret"); code != http.StatusUnauthorized {
		t.Errorf("a GitHub push signed with another secret: %d, want 401", code)
	}
	azure := map[string]string{"X-Vss-Activityid": "1"}
	if code := w.postWebhook(t, []byte(`{"eventType":"git.push","resource":{}}`), azure, "shhhh! it's an azure devops secret", "shhhh! it's an azure devops secret"); code != http.StatusOK {
		t.Errorf("an Azure DevOps event with webhook.azuredevops.username/password: %d, want 200", code)
	}
	if code := w.postWebhook(t, []byte(`{}`), azure, "shhhh! it's an azure devops secret", "wrong"); code != http.StatusUnauthorized {
		t.Errorf("an Azure DevOps event with another password: %d, want 401", code)
	}
}

// postWebhook posts body to the ApplicationSet webhook and returns the
// status (0 when it does not answer yet).
func (w *docsWorld) postWebhook(t *testing.T, body []byte, headers map[string]string, user, pass string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, "http://"+w.webhook+"/api/webhook", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	if user != "" {
		req.SetBasicAuth(user, pass)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	_ = resp.Body.Close()
	return resp.StatusCode
}

// checkReferencesStoredWhole: application.yaml and applicationset.yaml are
// stored whole, and the operator reports on each.
func (w *docsWorld) checkReferencesStoredWhole(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	for _, entry := range []string{"docs/operator-manual/application.yaml", "docs/operator-manual/applicationset.yaml"} {
		for _, o := range w.applied[entry] {
			stored := &unstructured.Unstructured{}
			stored.SetGroupVersionKind(o.GroupVersionKind())
			if err := w.c.Get(ctx, client.ObjectKeyFromObject(o), stored); err != nil {
				t.Fatal(err)
			}
			spec, _ := o.Object["spec"].(map[string]any)
			storedSpec, _ := stored.Object["spec"].(map[string]any)
			if lost := lostFields(spec, storedSpec); len(lost) > 0 {
				t.Errorf("%s: fields lost when stored: spec%v", entry, lost)
			}
		}
	}
	// application.yaml sets every field at once (source, sources and
	// sourceHydrator; a chart and a path; helm, kustomize, directory and
	// plugin): refused with InvalidSpecError naming them, nothing synced.
	got := w.waitApp(t, "guestbook", "refused naming its conflicting fields", func(a *v1alpha1.Application) bool {
		return hasCondition(a, "InvalidSpecError", "spec.sourceHydrator: Invalid value: set source, sources or sourceHydrator, not more than one") &&
			hasCondition(a, "InvalidSpecError", "spec.source: Invalid value: set at most one of helm, kustomize, directory and plugin") &&
			hasCondition(a, "InvalidSpecError", "spec.source.chart: Invalid value: set chart or path, not both")
	})
	if got.Status.Sync.Status == "Synced" || len(got.Status.Resources) > 0 || got.Status.OperationState != nil {
		t.Errorf("application.yaml's app was synced: %+v", got.Status)
	}
	// applicationset.yaml: every generator is read whole (none unknown or
	// empty); the set reports, per generator, why it generates nothing
	// here (no GitHub, no such ConfigMaps or Secrets).
	set := &unstructured.Unstructured{}
	set.SetGroupVersionKind(v1alpha1.SchemeGroupVersion.WithKind("ApplicationSet"))
	var msg string
	waitUntil(t, func() string { return "the set's generators reported: " + msg }, func(ctx context.Context) bool {
		if w.c.Get(ctx, types.NamespacedName{Namespace: w.ns, Name: "test-hello-world-appset"}, set) != nil {
			return false
		}
		conds, _, _ := unstructured.NestedSlice(set.Object, "status", "conditions")
		for _, c := range conds {
			m, _ := c.(map[string]any)
			if m["type"] == "ErrorOccurred" && m["status"] == "True" {
				msg, _ = m["message"].(string)
				return strings.Contains(msg, "generators[")
			}
		}
		return false
	})
	// The plugin's ConfigMap is looked up in the operator's namespace,
	// where Argo CD's controller looks in its own.
	if want := "generators[7] (plugin): plugin " + w.ns + "/my-plugin"; !strings.Contains(msg, want) {
		t.Errorf("applicationset.yaml: the set's conditions do not say %q: %s", want, msg)
	}
	for _, bad := range []string{"want exactly one generator kind", "unknown field"} {
		if strings.Contains(msg, bad) {
			t.Errorf("applicationset.yaml: a generator not read whole (%s): %s", bad, msg)
		}
	}
}

// checkRepositoryConfigMaps: argocd-tls-certs-cm.yaml and
// argocd-ssh-known-hosts-cm.yaml, read by the operator without a
// complaint, give server.example.com's certificate to its HTTPS
// repositories and the known hosts to SSH ones (github.com's, checked
// here as loaded; TestArgoCDDocsSSHKnownHostsLive checks the ConfigMap
// live, against a real SSH Git server).
func (w *docsWorld) checkRepositoryConfigMaps(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	for _, name := range []string{"argocd-tls-certs-cm", "argocd-ssh-known-hosts-cm"} {
		var list corev1.EventList
		if err := w.c.List(ctx, &list, client.InNamespace(w.ns)); err != nil {
			t.Fatal(err)
		}
		for _, e := range list.Items {
			if e.Type == corev1.EventTypeWarning && (e.InvolvedObject.Name == name || strings.Contains(e.Message, name)) {
				t.Errorf("%s: %s %s", name, e.Reason, e.Message)
			}
		}
	}
	_, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		t.Fatal(err)
	}
	sshRepo := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret",
		"metadata":   map[string]any{"name": "ssh-repo", "namespace": w.ns, "labels": map[string]any{"argocd.argoproj.io/secret-type": "repository"}},
		"stringData": map[string]any{"url": "git@github.com:argoproj/argocd-example-apps.git", "sshPrivateKey": string(pem.EncodeToMemory(block))}}}
	objs := append(append([]*unstructured.Unstructured{sshRepo}, w.applied["docs/operator-manual/argocd-tls-certs-cm.yaml"]...), w.applied["docs/operator-manual/argocd-ssh-known-hosts-cm.yaml"]...)
	for _, o := range objs[1:] {
		o.SetNamespace(w.ns)
	}
	// As the operator reads a Secret: stringData is data once stored.
	sd := sshRepo.Object["stringData"]
	delete(sshRepo.Object, "stringData")
	data := map[string]any{}
	for k, v := range sd.(map[string]any) {
		data[k] = base64.StdEncoding.EncodeToString([]byte(v.(string)))
	}
	sshRepo.Object["data"] = data
	store, err := repocreds.FromObjects(objs)
	if err != nil {
		t.Fatal(err)
	}
	cert, _, _ := unstructured.NestedString(objs[1].Object, "data", "server.example.com")
	if c := store.For("https://server.example.com/team/apps.git"); c == nil || string(c.CAData) != cert {
		t.Errorf("server.example.com's certificate not given to its repositories: %+v", c)
	}
	if c := store.For("git@github.com:argoproj/argocd-example-apps.git"); c == nil || !bytes.Contains(c.KnownHosts, []byte("github.com ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl")) {
		t.Errorf("github.com's host keys not given to its SSH repositories: %v", c)
	}
}
