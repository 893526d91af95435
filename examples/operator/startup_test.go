package main

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubegitops/gitops/apis/v1alpha1"
)

// versions are the resourceVersions of what an operator writes: the
// Application, its CRD, and the app's ConfigMap.
func versions(ctx context.Context, t *testing.T, c client.Client, ns, dest string) []string {
	t.Helper()
	app := &v1alpha1.Application{}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	cm := &corev1.ConfigMap{}
	for _, g := range []struct {
		key types.NamespacedName
		obj client.Object
	}{{types.NamespacedName{Namespace: ns, Name: ns}, app}, {types.NamespacedName{Name: "applications.argoproj.io"}, crd},
		{types.NamespacedName{Namespace: dest, Name: "hello"}, cm}} {
		if err := c.Get(ctx, g.key, g.obj); err != nil {
			t.Fatal(err)
		}
	}
	return []string{app.ResourceVersion, crd.ResourceVersion, cm.ResourceVersion}
}

// TestSecondOperatorWritesNothing: a second operator started while the
// first holds its ports exits at once with an error naming the address,
// having written nothing (the Application, the CRD and what the app
// manages keep their resourceVersions); with -leader-elect, a second
// operator on other ports waits for the Lease, writing nothing, until it
// is stopped. The first answers /readyz once its caches have synced.
func TestSecondOperatorWritesNothing(t *testing.T) {
	ns, dest := cluster.TestNamespace(t), cluster.TestNamespace(t)
	ctx := context.Background()
	scheme := runtime.NewScheme()
	if err := errors.Join(clientgoscheme.AddToScheme(scheme), v1alpha1.AddToScheme(scheme), apiextensionsv1.AddToScheme(scheme)); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cluster.Config(), client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	repo := writeRepo(t, map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: hello}\ndata: {a: b}\n"})
	metrics, probes := freeAddr(t), freeAddr(t)
	runOperator(t, "-namespace", ns, "-metrics-bind-address", metrics, "-health-probe-bind-address", probes, "-leader-elect")
	app := createApp(ctx, t, c, ns, dest, repo)
	waitFor(t, c, app, "Synced and Healthy", func(a *v1alpha1.Application) bool {
		return a.Status.Sync.Status == "Synced" && a.Status.Health.Status == "Healthy" && a.Status.ReconciledAt != nil
	})
	poll(t, "/readyz ok", func() bool {
		resp, err := http.Get("http://" + probes + "/readyz")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode == http.StatusOK && string(b) == "ok"
	})
	before := versions(ctx, t, c, ns, dest)

	// The same ports: an error naming the address, nothing written.
	rctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	err = runWith(rctx, []string{"-kubeconfig", cluster.Kubeconfig(), "-namespace", ns, "-metrics-bind-address", metrics,
		"-health-probe-bind-address", freeAddr(t)}, io.Discard)
	if !errors.Is(err, ErrAddressInUse) || !strings.Contains(err.Error(), metrics) || !strings.Contains(err.Error(), "address already in use") {
		t.Fatalf("second operator on the same ports: %v, want an error naming %s in use", err, metrics)
	}
	if after := versions(ctx, t, c, ns, dest); strings.Join(after, ",") != strings.Join(before, ",") {
		t.Errorf("resourceVersions of the Application, its CRD and the app's ConfigMap %v, then %v: the second operator wrote", before, after)
	}

	// Other ports, -leader-elect: it waits for the Lease the first holds,
	// and is stopped while it waits.
	lctx, lcancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	second := &syncBuffer{}
	go func() {
		done <- runWith(lctx, []string{"-kubeconfig", cluster.Kubeconfig(), "-namespace", ns, "-metrics-bind-address", freeAddr(t),
			"-health-probe-bind-address", freeAddr(t), "-leader-elect"}, second)
	}()
	poll(t, "the second operator waiting for the Lease", func() bool { return strings.Contains(second.String(), "waiting for the Lease") })
	lease := &coordinationv1.Lease{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: LeaseName}, lease); err != nil || lease.Spec.HolderIdentity == nil {
		t.Fatalf("the Lease: %v", err)
	}
	holder := *lease.Spec.HolderIdentity
	lcancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("the waiting operator: %v, want it stopped while waiting", err)
	}
	if strings.Contains(second.String(), "holding the Lease") {
		t.Errorf("the second operator held the Lease the first holds: %s", second.String())
	}
	if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: LeaseName}, lease); err != nil || *lease.Spec.HolderIdentity != holder {
		t.Errorf("the Lease changed hands: %v", lease.Spec.HolderIdentity)
	}
}
