package project

import (
	"testing"
	"time"

	"github.com/kubegitops/gitops/apis/v1alpha1"
)

func windowApp(name, server, namespace string) *v1alpha1.Application {
	app := &v1alpha1.Application{Spec: v1alpha1.ApplicationSpec{Destination: v1alpha1.ApplicationDestination{Server: server, Namespace: namespace}}}
	app.Name = name
	return app
}

func TestWindowMatchesWithAndOperator(t *testing.T) {
	shopProd := windowApp("shop", "https://prod", "web")
	shopDev := windowApp("shop", "https://dev", "web")
	blog := windowApp("blog", "https://prod", "web")
	for _, c := range []struct {
		name string
		w    v1alpha1.SyncWindow
		app  *v1alpha1.Application
		want bool
	}{
		{"or: any list matches", v1alpha1.SyncWindow{Applications: []string{"shop"}, Clusters: []string{"https://prod"}}, shopDev, true},
		{"or: none matches", v1alpha1.SyncWindow{Applications: []string{"shop"}, Clusters: []string{"https://prod"}}, windowApp("blog", "https://dev", "db"), false},
		{"and: all set lists match", v1alpha1.SyncWindow{AndOperator: true, Applications: []string{"sh*"}, Clusters: []string{"https://prod"}}, shopProd, true},
		{"and: cluster differs", v1alpha1.SyncWindow{AndOperator: true, Applications: []string{"sh*"}, Clusters: []string{"https://prod"}}, shopDev, false},
		{"and: name differs", v1alpha1.SyncWindow{AndOperator: true, Applications: []string{"sh*"}, Clusters: []string{"https://prod"}}, blog, false},
		{"and: namespace too", v1alpha1.SyncWindow{AndOperator: true, Applications: []string{"shop"}, Namespaces: []string{"db"}}, shopProd, false},
		{"and: one list set", v1alpha1.SyncWindow{AndOperator: true, Namespaces: []string{"web"}}, blog, true},
		{"and: no list set", v1alpha1.SyncWindow{AndOperator: true}, shopProd, false},
	} {
		if got := WindowMatches(c.w, c.app); got != c.want {
			t.Errorf("%s: WindowMatches = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestSyncAllowedWithAndOperator: a deny window with andOperator blocks
// only the apps every one of its lists selects; others sync.
func TestSyncAllowedWithAndOperator(t *testing.T) {
	now := time.Date(2026, 11, 30, 22, 30, 0, 0, time.UTC)
	p := &v1alpha1.AppProject{Spec: v1alpha1.AppProjectSpec{SyncWindows: []v1alpha1.SyncWindow{{
		Kind: "deny", Schedule: "0 22 * * *", Duration: "1h", AndOperator: true,
		Applications: []string{"shop"}, Clusters: []string{"https://prod"},
	}}}}
	d, err := SyncAllowed(p, windowApp("shop", "https://prod", "web"), now, false)
	if err != nil || d.Allowed || d.Blocking == nil {
		t.Fatalf("shop on prod: %+v %v, want blocked", d, err)
	}
	if d, err := SyncAllowed(p, windowApp("shop", "https://dev", "web"), now, false); err != nil || !d.Allowed {
		t.Errorf("shop on dev: %+v %v, want allowed (the cluster list does not match)", d, err)
	}
	p.Spec.SyncWindows[0].AndOperator = false
	if d, err := SyncAllowed(p, windowApp("shop", "https://dev", "web"), now, false); err != nil || d.Allowed {
		t.Errorf("shop on dev without andOperator: %+v %v, want blocked", d, err)
	}
}
