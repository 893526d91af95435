package sync

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var gvrServices = schema.GroupVersionResource{Version: "v1", Resource: "services"}

// service is a Service with a fixed cluster IP and sync-options ann.
func service(ip, syncOptions string) string {
	ann := "{}"
	if syncOptions != "" {
		ann = "{argocd.argoproj.io/sync-options: " + syncOptions + "}"
	}
	return fmt.Sprintf(`apiVersion: v1
kind: Service
metadata: {name: front, annotations: %s}
spec:
  clusterIP: %s
  selector: {app: front}
  ports: [{port: 80}]
`, ann, ip)
}

// A Service whose clusterIP changed is refused with an ImmutableFieldError
// that names the field and the options; Force=true on the Service, and the
// RecreateOnImmutable policy, re-create it with the new address.
func TestImmutableServiceClusterIPRecreated(t *testing.T) {
	t.Parallel()
	ns := cluster.TestNamespace(t)
	ctx := context.Background()
	// Three addresses of the 10.96.0.0/16 service range, apart from other
	// tests' (the cluster allocates from the low end).
	base := 100 + rand.IntN(150)
	ips := []string{fmt.Sprintf("10.96.%d.11", base), fmt.Sprintf("10.96.%d.12", base), fmt.Sprintf("10.96.%d.13", base)}
	s, _ := newSyncer(t, nil)
	res, err := s.Sync(ctx, Request{App: "shop", Desired: decode(t, ns, service(ips[0], "")), Namespace: ns})
	mustSucceed(t, res, err)
	first, _ := get(t, gvrServices, ns, "front")

	res, err = s.Sync(ctx, Request{App: "shop", Desired: decode(t, ns, service(ips[1], "")), Namespace: ns})
	var imm *ImmutableFieldError
	if !errors.As(err, &imm) || res.Phase != Failed {
		t.Fatalf("without Force: phase %s, err %v", res.Phase, err)
	}
	if len(imm.Fields) == 0 || !strings.HasPrefix(imm.Fields[0], "spec.clusterIP") || !strings.Contains(err.Error(), "Force=true") {
		t.Fatalf("fields %v, message %v", imm.Fields, err)
	}

	res, err = s.Sync(ctx, Request{App: "shop", Desired: decode(t, ns, service(ips[1], "Force=true")), Namespace: ns})
	mustSucceed(t, res, err)
	checkRecreated(t, res, ns, first, ips[1])
	second, _ := get(t, gvrServices, ns, "front")

	policy, _ := newSyncer(t, func(o *syncerSetup) { o.RecreateOnImmutable = true })
	res, err = policy.Sync(ctx, Request{App: "shop", Desired: decode(t, ns, service(ips[2], "")), Namespace: ns})
	mustSucceed(t, res, err)
	checkRecreated(t, res, ns, second, ips[2])

	// The step after: the same desired state again is no re-creation.
	res, err = policy.Sync(ctx, Request{App: "shop", Desired: decode(t, ns, service(ips[2], "")), Namespace: ns})
	mustSucceed(t, res, err)
	if a := row(t, res, "Service "+ns+"/front").Action; a != Unchanged {
		t.Fatalf("a resync of the re-created Service: %s", a)
	}
}

func checkRecreated(t *testing.T, res Result, ns string, before *unstructured.Unstructured, ip string) {
	t.Helper()
	after, _ := get(t, gvrServices, ns, "front")
	got, _, _ := unstructured.NestedString(after.Object, "spec", "clusterIP")
	if after.GetUID() == before.GetUID() || got != ip || row(t, res, "Service "+ns+"/front").Action != Recreated {
		t.Fatalf("not re-created: uid %s -> %s, clusterIP %s (want %s), row %+v", before.GetUID(), after.GetUID(), got, ip, row(t, res, "Service "+ns+"/front"))
	}
}

// selectorDeployment is a Deployment whose selector and pod labels are app: label.
func selectorDeployment(label, syncOptions string) string {
	ann := "{}"
	if syncOptions != "" {
		ann = "{argocd.argoproj.io/sync-options: " + syncOptions + "}"
	}
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: web, annotations: %[2]s}
spec:
  replicas: 1
  selector: {matchLabels: {app: %[1]s}}
  template:
    metadata: {labels: {app: %[1]s}}
    spec: {containers: [{name: web, image: nginx}]}
`, label, ann)
}

// A Deployment whose selector changed is refused naming spec.selector, and
// re-created with Force=true.
func TestImmutableDeploymentSelectorRecreated(t *testing.T) {
	t.Parallel()
	ns := cluster.TestNamespace(t)
	ctx := context.Background()
	s, _ := newSyncer(t, nil)
	res, err := s.Sync(ctx, Request{App: "shop", Desired: decode(t, ns, selectorDeployment("a", "")), Namespace: ns})
	mustSucceed(t, res, err)
	before, _ := get(t, gvrDeployments, ns, "web")

	res, err = s.Sync(ctx, Request{App: "shop", Desired: decode(t, ns, selectorDeployment("b", "")), Namespace: ns})
	var imm *ImmutableFieldError
	if !errors.As(err, &imm) || res.Phase != Failed || strings.Join(imm.Fields, ",") != "spec.selector" {
		t.Fatalf("without Force: phase %s, err %v", res.Phase, err)
	}

	res, err = s.Sync(ctx, Request{App: "shop", Desired: decode(t, ns, selectorDeployment("b", "Force=true")), Namespace: ns})
	mustSucceed(t, res, err)
	after, _ := get(t, gvrDeployments, ns, "web")
	sel, _, _ := unstructured.NestedString(after.Object, "spec", "selector", "matchLabels", "app")
	if after.GetUID() == before.GetUID() || sel != "b" || row(t, res, "apps/Deployment "+ns+"/web").Action != Recreated {
		t.Fatalf("not re-created: selector %s, row %+v", sel, row(t, res, "apps/Deployment "+ns+"/web"))
	}
}
