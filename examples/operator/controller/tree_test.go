package controller_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/examples/operator/controller"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// ingressManifest exposes the web app at https://web.example/.
const ingressManifest = `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: web}
spec:
  tls: [{hosts: [web.example]}]
  rules:
  - host: web.example
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
`

// TestStatusHoldsTheResourceTree calls the reconciler directly: an
// automated app whose Deployment runs gets status.resourceTree with the
// Deployment, its ReplicaSet and its Pod (each naming its parent by UID),
// and status.summary with the Pod's image and the Ingress's URL; once the
// app has settled, a refresh with nothing changed writes nothing (the
// Application's resourceVersion stays), however often the Pods' own
// resourceVersions move.
func TestStatusHoldsTheResourceTree(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	ns, dest := cluster.TestNamespace(t), cluster.TestNamespace(t)
	opts := controller.DefaultOptions()
	// No ingress controller gives the Ingress an address before the
	// test does: the sync does not wait for its last wave.
	opts.Engine = newEngine(t, nil, func(o *gitops.Options) { o.Sync.WaitFinalWave = false })
	r, err := controller.New(c, opts)
	if err != nil {
		t.Fatal(err)
	}
	repo := repoDir(t, map[string]string{"app/web.yaml": webManifests, "app/ingress.yaml": ingressManifest})
	o := &operator{ns: ns, c: c}
	o.create(t, newApp(ns, appSpec{name: "tree", repo: repo, dest: dest, automated: true}))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: "tree"}}
	reconciled := func() observed {
		t.Helper()
		if _, err := r.Reconcile(ctx, req); err != nil {
			t.Fatalf("reconcile: %v", err)
		}
		app := &v1alpha1.Application{}
		if err := c.Get(ctx, req.NamespacedName, app); err != nil {
			t.Fatal(err)
		}
		return observed{app}
	}

	// The first reconcile runs the automated sync; then the ingress
	// controller's part: the Ingress gets an address.
	reconciled()
	ing := &networkingv1.Ingress{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: dest, Name: "web"}, ing); err != nil {
		t.Fatal(err)
	}
	ing.Status.LoadBalancer.Ingress = []networkingv1.IngressLoadBalancerIngress{{IP: "203.0.113.9"}}
	if err := c.Status().Update(ctx, ing); err != nil {
		t.Fatal(err)
	}

	var got observed
	nodes := map[string]v1alpha1.ResourceNode{}
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 90*time.Second, true, func(context.Context) (bool, error) {
		got, nodes = reconciled(), map[string]v1alpha1.ResourceNode{}
		if got.Status.ResourceTree == nil {
			return false, nil
		}
		for _, n := range got.Status.ResourceTree.Nodes {
			nodes[n.Kind] = n
		}
		pod := nodes["Pod"]
		return syncedHealthy(got) && pod.Health != nil && pod.Health.Status == "Healthy", nil
	})
	if err != nil {
		t.Fatalf("waiting for a Synced and Healthy app with a running Pod in its tree: %v; last status:\n%s", err, got)
	}
	dep, rs, pod := nodes["Deployment"], nodes["ReplicaSet"], nodes["Pod"]
	if dep.Name != "web" || dep.Namespace != dest || dep.UID == "" || len(dep.ParentRefs) != 0 {
		t.Errorf("Deployment node %+v", dep)
	}
	if len(rs.ParentRefs) != 1 || rs.ParentRefs[0].UID != dep.UID || rs.ParentRefs[0].Kind != "Deployment" || rs.ParentRefs[0].Name != "web" {
		t.Errorf("ReplicaSet node %+v: want the Deployment (uid %s) as its parent", rs, dep.UID)
	}
	if len(pod.ParentRefs) != 1 || pod.ParentRefs[0].UID != rs.UID || pod.ParentRefs[0].Name != rs.Name {
		t.Errorf("Pod node %+v: want the ReplicaSet %s as its parent", pod, rs.Name)
	}
	if !reflect.DeepEqual(pod.Images, []string{"nginx"}) || pod.CreatedAt == nil || pod.ResourceVersion != "" {
		t.Errorf("Pod node %+v: want image nginx, a creation time and no resourceVersion", pod)
	}
	if nodes["ConfigMap"].Name != "settings" {
		t.Errorf("the ConfigMap is not in the tree: %s", got)
	}
	if s := got.Status.Summary; !reflect.DeepEqual(s.Images, []string{"nginx"}) || !reflect.DeepEqual(s.ExternalURLs, []string{"https://web.example/"}) {
		t.Errorf("summary %+v: want images [nginx] and URL https://web.example/", s)
	}

	// Settled: another refresh finds nothing new and writes nothing.
	again := reconciled()
	if again.ResourceVersion != got.ResourceVersion {
		t.Errorf("a refresh with nothing changed wrote the status: resourceVersion %s -> %s\nbefore:\n%s\nafter:\n%s",
			got.ResourceVersion, again.ResourceVersion, got, again)
	}
}
