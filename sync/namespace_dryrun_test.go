package sync

import (
	"context"
	"strings"
	"testing"

	"github.com/kubegitops/gitops/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// namespaceDryRunObjects are a ConfigMap, a Deployment and a Secret; with
// invalid set the Secret carries a field its schema does not declare (a
// SOPS file synced without a decryptor), which only the server refuses.
func namespaceDryRunObjects(invalid bool) string {
	secret := "apiVersion: v1\nkind: Secret\nmetadata: {name: creds}\nstringData: {password: x}\n"
	if invalid {
		secret += "sops: {mac: 'ENC[AES256_GCM,data:x]', version: 3.9.0}\n"
	}
	return `apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
data: {a: '1'}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 0
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: c, image: nginx:1.27}]}
---
` + secret
}

// TestCreateNamespaceDryRunsEveryObjectFirst: a sync that creates its
// namespace (CreateNamespace=true) skipped the dry run of every object in
// it, so an invalid Secret was found only when written, after the
// ConfigMap and the Deployment were. The namespace is now created first and
// every object dry-run in it: nothing but the namespace is written.
func TestCreateNamespaceDryRunsEveryObjectFirst(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := cluster.TestNamespace(t) + "-created"
	t.Cleanup(func() {
		_ = dynamic0(t).Resource(gvrNamespace).Delete(context.Background(), ns, metav1.DeleteOptions{})
	})
	s, _ := newSyncer(t, nil)
	opts, err := resource.ParseOptions("CreateNamespace=true")
	if err != nil {
		t.Fatal(err)
	}
	req := Request{App: "shop", Desired: decode(t, ns, namespaceDryRunObjects(true)), Namespace: ns, Options: opts}
	res, err := s.Sync(ctx, req)
	if err == nil || res.Phase == Succeeded {
		t.Fatalf("a sync with an invalid Secret succeeded: %s", res.Summary())
	}
	if !strings.Contains(err.Error(), "dry run") || !strings.Contains(err.Error(), "Secret "+ns+"/creds") || !strings.Contains(err.Error(), "sops") {
		t.Fatalf("the error does not name the invalid object and its field: %v", err)
	}
	if _, ok := get(t, gvrNamespace, "", ns); !ok {
		t.Fatal("the namespace was not created")
	}
	written := func() []string {
		var out []string
		for _, o := range []struct {
			gvr  schema.GroupVersionResource
			name string
		}{{gvrConfigMaps, "settings"}, {gvrDeployments, "web"}, {schema.GroupVersionResource{Version: "v1", Resource: "secrets"}, "creds"}} {
			if _, found := get(t, o.gvr, ns, o.name); found {
				out = append(out, o.gvr.Resource+"/"+o.name)
			}
		}
		return out
	}
	if w := written(); len(w) > 0 {
		t.Fatalf("a sync whose dry run failed wrote %v", w)
	}

	// Fixed, the next sync writes everything.
	req.Desired = decode(t, ns, namespaceDryRunObjects(false))
	res, err = s.Sync(ctx, req)
	mustSucceed(t, res, err)
	if w := written(); len(w) != 3 {
		t.Fatalf("the fixed sync wrote only %v", w)
	}
}
