package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/kubegitops/gitops/appstatus"
	"github.com/kubegitops/gitops/diff"
	"github.com/kubegitops/gitops/sync"
)

// A cluster-scoped CRD and an object of it, in one render, for an app with a
// destination namespace: the refresh before the first sync (the cluster
// does not serve the kind yet) takes the object's scope from the CRD, as the
// sync does, so the object's key has no namespace before and after.
func TestRefreshScopesByCRDOfTheSameRender(t *testing.T) {
	t.Parallel()
	ns := cluster.TestNamespace(t)
	group := ns + ".gitops.test"
	manifests := fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.%[1]s}
spec:
  group: %[1]s
  names: {kind: Gadget, plural: gadgets, singular: gadget, listKind: GadgetList}
  scope: Cluster
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
---
apiVersion: %[1]s/v1
kind: Gadget
metadata: {name: g1}
spec: {size: 1}
`, group)
	e := newEngine(t, nil)
	app := dirApp(ns, repoDir(t, map[string]string{"app/gadget.yaml": manifests}), ns)
	t.Cleanup(func() {
		dyn := dynamic.NewForConfigOrDie(cluster.Config())
		crds := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
		_ = dyn.Resource(crds).Delete(context.Background(), "gadgets."+group, metav1.DeleteOptions{})
	})
	gadgetKey := func(st appstatus.Status) (string, bool) {
		for _, r := range st.Resources {
			if r.Key.Kind == "Gadget" {
				return r.Key.Namespace, true
			}
		}
		return "", false
	}
	st, err := e.Refresh(context.Background(), app)
	if err != nil || st.Sync != appstatus.OutOfSync {
		t.Fatalf("before the first sync: %v %+v", err, st)
	}
	if got, ok := gadgetKey(st); !ok || got != "" {
		t.Fatalf("before the first sync the cluster-scoped Gadget is keyed in namespace %q (found %v)", got, ok)
	}
	res, err := e.Sync(context.Background(), app, SyncRequest{})
	if err != nil || res.Phase != sync.Succeeded {
		t.Fatalf("sync: %v %s", err, res.Summary())
	}
	st = refreshUntil(t, e, app, "Synced", func(s appstatus.Status) bool { return s.Sync == appstatus.Synced })
	if got, ok := gadgetKey(st); !ok || got != "" {
		t.Fatalf("after the sync the Gadget is keyed in namespace %q (found %v)", got, ok)
	}
}

// Strategic-merge directives in an app's manifests: $patch: delete and
// $setElementOrder are resolved (the sync writes the object they describe,
// and the next refresh says Synced); $patch: replace is refused with a
// DirectiveError naming the object, before anything of the app is written.
func TestPatchDirectivesOnTheCluster(t *testing.T) {
	t.Parallel()
	ns := cluster.TestNamespace(t)
	ok := `apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  $setElementOrder/ports: [{port: 443}, {port: 80}]
  ports:
  - {name: http, port: 80}
  - {name: https, port: 443}
  - {name: debug, port: 9000, $patch: delete}
`
	e := newEngine(t, nil)
	app := dirApp(ns, repoDir(t, map[string]string{"app/svc.yaml": ok}), ns)
	res, err := e.Sync(context.Background(), app, SyncRequest{})
	if err != nil || res.Phase != sync.Succeeded {
		t.Fatalf("sync: %v %s", err, res.Summary())
	}
	refreshUntil(t, e, app, "Synced", func(s appstatus.Status) bool { return s.Sync == appstatus.Synced })
	svc, err := dynamic.NewForConfigOrDie(cluster.Config()).Resource(schema.GroupVersionResource{Version: "v1", Resource: "services"}).Namespace(ns).Get(context.Background(), "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ports, _, _ := unstructuredPorts(svc.Object)
	if strings.Join(ports, ",") != "https,http" {
		t.Fatalf("service ports %v, want https,http", ports)
	}
	res, err = e.Sync(context.Background(), app, SyncRequest{})
	if err != nil || res.Phase != sync.Succeeded {
		t.Fatalf("second sync: %v %s", err, res.Summary())
	}

	bad := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: first}\ndata: {a: b}\n---\n" + `apiVersion: v1
kind: Service
metadata: {name: replaced}
spec:
  ports:
  - {name: http, port: 80, $patch: replace}
`
	badApp := dirApp(ns+"-bad", repoDir(t, map[string]string{"app/svc.yaml": bad}), ns)
	_, err = e.Sync(context.Background(), badApp, SyncRequest{})
	var de *diff.DirectiveError
	if !errors.As(err, &de) || de.Key.Name != "replaced" || de.Directive != "$patch: replace" {
		t.Fatalf("sync of a $patch: replace: %v, want a DirectiveError naming v1/Service replaced", err)
	}
	if _, err := dynamic.NewForConfigOrDie(cluster.Config()).Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace(ns).Get(context.Background(), "first", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the refused app's ConfigMap was written (get: %v)", err)
	}
	st, err := e.Refresh(context.Background(), badApp)
	if err == nil || st.Sync != appstatus.Unknown || len(st.Conditions) == 0 || !strings.Contains(st.Conditions[0].Message, "$patch: replace") {
		t.Fatalf("refresh of the refused app: %v %+v", err, st)
	}
}

func unstructuredPorts(obj map[string]any) ([]string, bool, error) {
	spec, _ := obj["spec"].(map[string]any)
	list, _ := spec["ports"].([]any)
	var names []string
	for _, p := range list {
		if m, ok := p.(map[string]any); ok {
			n, _ := m["name"].(string)
			names = append(names, n)
		}
	}
	return names, len(names) > 0, nil
}
