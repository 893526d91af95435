package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestAPIDescendantsHealthAndLive checks the objects the app does not
// track but owns (the Deployment's ReplicaSet and Pod): the tree judges
// a ready Pod Healthy, and their Live view is the whole object (spec and
// status), not the metadata the cache keeps of them; an object outside
// the app's tree is not served.
func TestAPIDescendantsHealthAndLive(t *testing.T) {
	f := newFixture(t)
	f.syncAndWait("guestbook", tokAdmin)
	var pod, rs treeNode
	waitFor(t, 90*time.Second, "a Healthy Pod under the Deployment", func() (bool, string) {
		code, _, raw := f.call("GET", "/api/v1/apps/guestbook", tokReaderA, "", nil)
		var v appView
		if err := json.Unmarshal([]byte(raw), &v); code != http.StatusOK || err != nil {
			return false, fmt.Sprintf("%d %v %s", code, err, raw)
		}
		pod, rs = treeNode{}, treeNode{}
		walkTree(v.Tree.Roots, func(n treeNode) {
			switch n.Kind {
			case "Pod":
				pod = n
			case "ReplicaSet":
				rs = n
			}
		})
		return pod.Health == "Healthy" && rs.Health == "Healthy", fmt.Sprintf("pod %+v, replicaset %+v", pod, rs)
	})
	for _, n := range []treeNode{rs, pod} {
		code, out, raw := f.call("GET", "/api/v1/apps/guestbook/resource?key="+url.QueryEscape(n.Key), tokReaderA, "", nil)
		if code != http.StatusOK {
			t.Fatalf("resource %s: %d %s", n.Key, code, raw)
		}
		live, _ := out["live"].(string)
		for _, want := range []string{"\nspec:", "\nstatus:", "registry.k8s.io/guestbook:v3", "creationTimestamp:"} {
			if !strings.Contains(live, want) {
				t.Errorf("live %s lacks %q:\n%s", n.Key, want, live)
			}
		}
		if out["health"] != "Healthy" {
			t.Errorf("resource %s: health %v, want Healthy", n.Key, out["health"])
		}
	}

	// An object in the namespace that is not in the app's tree is no
	// resource of the app.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	stray := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "stray", Namespace: f.ns}, Data: map[string]string{"k": "v"}}
	if _, err := f.kube.CoreV1().ConfigMaps(f.ns).Create(ctx, stray, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if code, _, raw := f.call("GET", "/api/v1/apps/guestbook/resource?key="+url.QueryEscape("ConfigMap "+f.ns+"/stray"), tokAdmin, "", nil); code != http.StatusNotFound {
		t.Errorf("a ConfigMap outside the app: %d %s, want 404", code, raw)
	}
}

// walkTree calls fn on every node, depth first.
func walkTree(nodes []treeNode, fn func(treeNode)) {
	for _, n := range nodes {
		fn(n)
		walkTree(n.Children, fn)
	}
}

// TestAPIRefusedAudited sends state-changing requests that are refused
// (by the caller's role, by the project policy hiding the app, by a
// missing CSRF token) and checks that each wrote an audit record saying
// refused and why, and that none ran; then an allowed sync is audited as
// started and Succeeded, not refused.
func TestAPIRefusedAudited(t *testing.T) {
	f := newFixture(t)
	readerCSRF, adminACSRF := f.csrfOf(tokReaderA), f.csrfOf(tokAdminA)
	for _, tc := range []struct {
		user, token, csrf, op, app string
		body                       any
		code                       int
		why                        string
	}{
		{"bob", tokReaderA, readerCSRF, "sync", "guestbook", map[string]any{"prune": true}, http.StatusForbidden, "needs an admin role"},
		{"bob", tokReaderA, readerCSRF, "rollback", "guestbook", map[string]any{"id": 1}, http.StatusForbidden, "needs an admin role"},
		{"bob", tokReaderA, readerCSRF, "terminate", "guestbook", map[string]any{}, http.StatusForbidden, "needs an admin role"},
		{"carol", tokAdminA, adminACSRF, "sync", "other", map[string]any{}, http.StatusNotFound, "not found or not permitted"},
		{"alice", tokAdmin, "", "sync", "guestbook", map[string]any{"prune": true}, http.StatusForbidden, "CSRF"},
		{"alice", tokAdmin, "wrong-token", "rollback", "guestbook", map[string]any{"id": 1}, http.StatusForbidden, "CSRF"},
	} {
		before := len(f.auditRecords())
		if code, _, raw := f.call("POST", "/api/v1/apps/"+tc.app+"/"+tc.op, tc.token, tc.csrf, tc.body); code != tc.code {
			t.Errorf("%s %s %s: %d %s, want %d", tc.user, tc.op, tc.app, code, raw, tc.code)
		}
		recs := f.auditRecords()[before:]
		if len(recs) != 1 {
			t.Errorf("%s %s %s: %d audit records, want 1: %+v", tc.user, tc.op, tc.app, len(recs), recs)
			continue
		}
		r := recs[0]
		if r.User != tc.user || r.Action != tc.op || r.App != tc.app || !strings.HasPrefix(r.Outcome, "refused: ") || !strings.Contains(r.Outcome, tc.why) {
			t.Errorf("%s %s %s: audit record %+v, want user, action, app and an outcome refused naming %q", tc.user, tc.op, tc.app, r, tc.why)
		}
	}
	if op, _ := f.portal.engine.LastOperation(context.Background(), v1alpha1.AppKey{Name: "guestbook"}); op != nil {
		t.Fatalf("a refused request ran: %+v", op)
	}
	// The step after: an allowed sync is audited as started and ended.
	f.syncAndWait("guestbook", tokAdmin)
	f.waitAudit("sync", "started", 1)
	f.waitAudit("sync", "Succeeded", 1)
}
