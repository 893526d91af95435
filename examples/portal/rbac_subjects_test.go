package main

import (
	"context"
	"fmt"
	"github.com/kubegitops/gitops/apis/v1alpha1"
	"net/http"
	"net/url"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestRBACTwoGroups: erin is in platform (may sync everything but team-b)
// and freeze-a (denied sync on team-a). Argo CD checks each subject on its
// own (argo-cd#17547), so platform's allow is not taken away by
// freeze-a's deny: she syncs guestbook through the portal, twice, and her
// page shows Sync. Her sync of team-b's app is refused, and the 403 (and
// the audit log) names every subject checked and the line that refused
// each, or that no line matched.
func TestRBACTwoGroups(t *testing.T) {
	f := newFixtureWith(t, fixtureOptions{RBACConfigMap: fixtureRBAC, Projects: fixtureRBACProjects})
	f.syncAndWait("guestbook", tokTwoGroups)
	f.syncAndWait("guestbook", tokTwoGroups) // the step after: a second sync
	code, out, raw := f.call("GET", "/api/v1/apps/guestbook/permissions", tokTwoGroups, "", nil)
	if code != http.StatusOK || out["sync"] != true {
		t.Errorf("erin's permissions on guestbook: %d %s, want sync", code, raw)
	}
	if _, _, page := f.call("GET", "/apps/guestbook", tokTwoGroups, "", nil); !contains(page, `id="sync"`) {
		t.Error("erin's guestbook page has no Sync button")
	}
	if a := f.audit.String(); !contains(a, `"user":"erin","groups":["platform","freeze-a"],"via":"token","action":"sync","app":"guestbook","project":"team-a"`) {
		t.Errorf("the audit log lacks erin's sync: %s", a)
	}

	code, out, raw = f.call("POST", "/api/v1/apps/other/sync", tokTwoGroups, f.csrfOf(tokTwoGroups), map[string]any{"dryRun": true})
	want := `application other: permission denied: applications, sync, team-b/other: role:viewer-a (policy.default): no line matched; ` +
		`erin: no line matched; platform: denied by policy.csv line 3 "p, role:deployer, applications, sync, team-b/*, deny"; ` +
		`freeze-a: no line matched`
	if code != http.StatusForbidden || out["error"] != want {
		t.Errorf("erin's sync of other: %d %s\nwant 403 %s", code, raw, want)
	}
	if a := f.audit.String(); !contains(a, `"user":"erin","groups":["platform","freeze-a"],"via":"token","action":"sync","app":"other","project":"team-b","outcome":"refused: application other: permission denied`) {
		t.Errorf("the audit log lacks erin's refusal: %s", a)
	}
	if op, _ := f.portal.engine.LastOperation(context.Background(), v1alpha1.AppKey{Name: "other"}); op != nil {
		t.Errorf("a refused sync of other ran: %+v", op)
	}
}

// resourceDeleteRBAC is the argocd-rbac-cm of the resource deletion tests:
// alice (platform) is admin; carol (admins-a) may get and delete team-a's
// apps; dave (secret-admins) may get them and delete their ConfigMaps,
// with Argo CD 3's fine-grained action, but not the apps.
const resourceDeleteRBAC = `apiVersion: v1
kind: ConfigMap
metadata: {name: argocd-rbac-cm}
data:
  policy.csv: |
    g, platform, role:admin
    p, role:reader, applications, get, */*, allow
    g, admins-a, role:reader
    g, secret-admins, role:reader
    p, role:app-deleter, applications, delete, team-a/*, allow
    g, admins-a, role:app-deleter
    p, role:cm-deleter, applications, delete//ConfigMap/*/*, team-a/*, allow
    g, secret-admins, role:cm-deleter
`

// TestRBACResourceDelete deletes resources of guestbook through the
// portal on the local cluster, authorised as Argo CD 3 does: carol's
// "applications, delete" on the app does not reach its resources (403
// naming the fine-grained action), dave's "delete//ConfigMap/*/*" deletes
// the ConfigMap but not the Deployment nor the app. Then argocd-cm sets
// server.rbac.disableApplicationFineGrainedRBACInheritance "false" in the
// cluster, and without a restart carol's app-level delete reaches the
// Deployment, which goes.
func TestRBACResourceDelete(t *testing.T) {
	f := newFixtureWith(t, fixtureOptions{RBACConfigMap: resourceDeleteRBAC, Projects: fixtureRBACProjects, RBACNamespace: true})
	f.syncAndWait("guestbook", tokAdmin)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmKey, depKey := "ConfigMap "+f.ns+"/guestbook-config", "apps/Deployment "+f.ns+"/guestbook"
	deleteRes := func(token, key, name string) (int, string) {
		code, out, raw := f.call("POST", "/api/v1/apps/guestbook/resource/delete", token, f.csrfOf(token),
			map[string]any{"key": key, "mode": "delete", "confirm": name})
		if e, ok := out["error"].(string); ok {
			return code, e
		}
		return code, raw
	}
	mayDelete := func(token, key string) any {
		_, out, _ := f.call("GET", "/api/v1/apps/guestbook/permissions?key="+url.QueryEscape(key), token, "", nil)
		return out["deleteResource"]
	}

	// carol: the app's delete only.
	if code, out, raw := f.call("GET", "/api/v1/apps/guestbook/permissions?key="+url.QueryEscape(cmKey), tokAdminA, "", nil); code != http.StatusOK ||
		out["delete"] != true || out["deleteResource"] != false {
		t.Errorf("carol's permissions on the ConfigMap: %d %s, want delete true, deleteResource false", code, raw)
	}
	code, msg := deleteRes(tokAdminA, cmKey, "guestbook-config")
	want := "application guestbook: ConfigMap " + f.ns + "/guestbook-config: permission denied: applications, delete//ConfigMap/" + f.ns +
		"/guestbook-config, team-a/guestbook: carol: no line matched; admins-a: no line matched"
	if code != http.StatusForbidden || msg != want {
		t.Errorf("carol deletes the ConfigMap: %d %s\nwant 403 %s", code, msg, want)
	}

	// dave: ConfigMaps only, not the app.
	if mayDelete(tokSecretAdmin, cmKey) != true || mayDelete(tokSecretAdmin, depKey) != false {
		t.Errorf("dave may delete the ConfigMap %v, the Deployment %v; want true, false", mayDelete(tokSecretAdmin, cmKey), mayDelete(tokSecretAdmin, depKey))
	}
	if code, msg := deleteRes(tokSecretAdmin, depKey, "guestbook"); code != http.StatusForbidden || !contains(msg, "delete/apps/Deployment/"+f.ns+"/guestbook") {
		t.Errorf("dave deletes the Deployment: %d %s, want 403 naming the fine-grained action", code, msg)
	}
	if code, _, raw := f.call("POST", "/api/v1/apps/guestbook/delete", tokSecretAdmin, f.csrfOf(tokSecretAdmin), map[string]any{"confirm": "guestbook"}); code != http.StatusForbidden {
		t.Errorf("dave deletes the app: %d %s, want 403", code, raw)
	}
	if code, msg := deleteRes(tokSecretAdmin, cmKey, "guestbook-config"); code != http.StatusOK {
		t.Fatalf("dave deletes the ConfigMap: %d %s", code, msg)
	}
	waitFor(t, 30*time.Second, "guestbook-config deleted", func() (bool, string) {
		_, err := f.kube.CoreV1().ConfigMaps(f.ns).Get(ctx, "guestbook-config", metav1.GetOptions{})
		return apierrors.IsNotFound(err), errString(err)
	})
	if a := f.audit.String(); !contains(a, `"user":"dave","groups":["secret-admins"],"via":"token","action":"delete-resource","app":"guestbook","project":"team-a","details":{"key":"`+cmKey+`","mode":"delete"},"outcome":"deleted"`) ||
		!contains(a, `"user":"carol","groups":["admins-a"],"via":"token","action":"delete-resource","app":"guestbook","project":"team-a","details":{"key":"`+cmKey+`","mode":"delete"},"outcome":"refused: `) {
		t.Errorf("the audit log lacks dave's deletion or carol's refusal: %s", a)
	}

	// argocd-cm turns Argo CD 2's inheritance on, live: carol's delete on
	// the app now reaches its resources; dave still lacks the Deployment.
	acm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: argoCDConfigMapName},
		Data: map[string]string{"server.rbac.disableApplicationFineGrainedRBACInheritance": "false"}}
	if _, err := f.kube.CoreV1().ConfigMaps(f.ns).Create(ctx, acm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "carol may delete the Deployment after argocd-cm's change", func() (bool, string) {
		v := mayDelete(tokAdminA, depKey)
		return v == true, fmt.Sprint("deleteResource ", v)
	})
	if mayDelete(tokSecretAdmin, depKey) != false {
		t.Error("dave may delete the Deployment with inheritance, but has no delete on the app")
	}
	if code, msg := deleteRes(tokAdminA, depKey, "guestbook"); code != http.StatusOK {
		t.Fatalf("carol deletes the Deployment with inheritance: %d %s", code, msg)
	}
	waitFor(t, 60*time.Second, "the Deployment deleted", func() (bool, string) {
		_, err := f.kube.AppsV1().Deployments(f.ns).Get(ctx, "guestbook", metav1.GetOptions{})
		return apierrors.IsNotFound(err), errString(err)
	})
}
