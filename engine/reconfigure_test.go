package engine

import (
	"context"
	"strings"
	"testing"

	"github.com/kubegitops/gitops/appstatus"
	"github.com/kubegitops/gitops/cache"
	"github.com/kubegitops/gitops/resource"
)

// TestReconfigureAppliesLive: a running engine takes new options without
// a restart. A new ignore rule makes a drifted app Synced with no cluster
// reconnected; a resource exclusion reconnects the cluster (its cache
// lists its kinds again) and the app's ConfigMap is then excluded; an
// invalid Tracking is refused, changing nothing; impersonation enforced
// fails a sync whose project names no service account, with Argo CD's
// message.
func TestReconfigureAppliesLive(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := cluster.TestNamespace(t)
	dir := repoDir(t, map[string]string{"app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {a: b}\n"})
	e := newEngine(t, nil)
	app := dirApp(ns, dir, ns)
	if _, err := e.Sync(ctx, app, SyncRequest{}); err != nil {
		t.Fatal(err)
	}
	refreshUntil(t, e, app, "synced", func(s appstatus.Status) bool { return s.Sync == appstatus.Synced })
	editConfigMap(t, ns, "settings", "a", "drifted")
	refreshUntil(t, e, app, "drift seen", func(s appstatus.Status) bool { return s.Sync == appstatus.OutOfSync })

	opts := e.Settings().Options()
	opts.IgnoreDifferences = []ResourceIgnoreDifferences{{Kind: "ConfigMap", JSONPointers: []string{"/data"}}}
	names, err := e.Settings().Reconfigure(ctx, opts)
	if err != nil || len(names) != 0 {
		t.Fatalf("Reconfigure with an ignore rule: %v, clusters reconnected %v (want none)", err, names)
	}
	refreshUntil(t, e, app, "Synced under the new ignore rule", func(s appstatus.Status) bool { return s.Sync == appstatus.Synced })

	opts = e.Settings().Options()
	opts.Cache.Filter.Exclude = append(cache.DefaultExclusions(), cache.GroupKindMatch{Group: "", Kind: "ConfigMap"})
	names, err = e.Settings().Reconfigure(ctx, opts)
	if err != nil || strings.Join(names, ",") != "https://kubernetes.default.svc,in-cluster" {
		t.Fatalf("Reconfigure with an exclusion: %v, clusters reconnected %v", err, names)
	}
	refreshUntil(t, e, app, "the ConfigMap excluded", func(s appstatus.Status) bool {
		for _, c := range s.Conditions {
			if c.Type == appstatus.ConditionExcludedResource && strings.Contains(c.Message, "settings") {
				return true
			}
		}
		return false
	})

	bad := e.Settings().Options()
	bad.Tracking = resource.Tracking{Method: "nonsense", AnnotationKey: "x"}
	if _, err := e.Settings().Reconfigure(ctx, bad); err == nil {
		t.Fatal("an invalid Tracking was taken")
	}
	if e.Settings().Options().Tracking.Method == "nonsense" {
		t.Fatal("a refused Reconfigure changed the options")
	}

	opts = e.Settings().Options()
	opts.Cache.Filter.Exclude = nil
	opts.Impersonation = ImpersonationEnforced
	if _, err := e.Settings().Reconfigure(ctx, opts); err != nil {
		t.Fatal(err)
	}
	res, err := e.Sync(ctx, app, SyncRequest{})
	if err == nil || !strings.Contains(res.Message, "no matching service account found for destination server https://kubernetes.default.svc and namespace "+ns) {
		t.Fatalf("sync with impersonation enforced and no service account: %v (%s)", err, res.Message)
	}
}
