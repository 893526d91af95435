package engine

import (
	"context"
	"fmt"
	"testing"

	"github.com/kubegitops/gitops/appstatus"
	"github.com/kubegitops/gitops/internal/testfiles"
	"github.com/kubegitops/gitops/sync"
)

// crdApp is a CustomResourceDefinition (with a keyed list, so the
// comparison needs the CRD's own schema) and one object of it.
func crdApp(group string) string {
	return testfiles.WidgetCRD(group) + fmt.Sprintf(`---
apiVersion: %[1]s/v1
kind: Widget
metadata: {name: w1}
spec:
  size: 3
  ports: [{name: http, port: 80}, {name: https, port: 443}]
`, group)
}

// An app holding a CRD and an object of it goes Synced after its sync and
// stays Synced: the comparison models the CRD (apiextensions) and the
// custom resource (the CRD's schema, from the cluster's OpenAPI v3).
func TestCRDAndItsObjectGoSynced(t *testing.T) {
	t.Parallel()
	ns := cluster.TestNamespace(t)
	e := newEngine(t, nil)
	app := dirApp(ns, repoDir(t, map[string]string{"app/crd.yaml": crdApp(ns + ".gitops.test")}), ns)
	st, err := e.Refresh(context.Background(), app)
	if err != nil || st.Sync != appstatus.OutOfSync {
		t.Fatalf("before sync: %v %+v", err, st)
	}
	res, err := e.Sync(context.Background(), app, SyncRequest{})
	if err != nil || res.Phase != sync.Succeeded {
		t.Fatalf("sync: %v %s", err, res.Summary())
	}
	refreshUntil(t, e, app, "Synced", func(s appstatus.Status) bool { return s.Sync == appstatus.Synced })
	st, err = e.Refresh(context.Background(), app)
	if err != nil || st.Sync != appstatus.Synced || len(st.Conditions) != 0 {
		t.Fatalf("the refresh after Synced: %v %+v", err, st)
	}
	for _, r := range st.Resources {
		if r.Status != appstatus.Synced {
			t.Fatalf("%s is %s", r.Key, r.Status)
		}
	}
	// A second sync writes nothing.
	res, err = e.Sync(context.Background(), app, SyncRequest{})
	if err != nil || res.Phase != sync.Succeeded {
		t.Fatalf("second sync: %v %s", err, res.Summary())
	}
	for _, r := range res.Results {
		if r.Action != sync.Unchanged {
			t.Fatalf("second sync wrote %s: %s", r.Key, r.Action)
		}
	}
}
