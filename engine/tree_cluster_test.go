package engine

import (
	"context"
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/sync"
)

// treeManifests are a Deployment of two containers, an Ingress with a TLS
// host and a plain one, and a LoadBalancer Service.
const treeManifests = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: nginx}, {name: proxy, image: "envoyproxy/envoy:v1"}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: web}
spec:
  tls: [{hosts: [web.example]}]
  rules:
  - host: web.example
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 443}}}}]}
  - host: docs.example
    http: {paths: [{path: /docs, pathType: Prefix, backend: {service: {name: web, port: {number: 443}}}}]}
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  type: LoadBalancer
  selector: {app: web}
  ports: [{name: https, port: 443}, {name: admin, port: 8080}]
`

// TestResourceTreeFollowsOwners: the tree of a synced app holds its
// objects and their live descendants (Deployment -> ReplicaSet -> Pod),
// each naming its parent by UID, with health, images and creation time;
// the summary gathers the images and the Ingress's and load balancer's
// URLs; and a second call with nothing changed gives the same tree.
func TestResourceTreeFollowsOwners(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := cluster.TestNamespace(t)
	// The Ingress and the Service wait for addresses no controller gives
	// here: the sync does not wait for its last wave.
	e := newEngine(t, func(o *Options) { o.Sync.WaitFinalWave = false })
	app := dirApp(ns, repoDir(t, map[string]string{"app/web.yaml": treeManifests}), ns)
	if res, err := e.Sync(ctx, app, SyncRequest{}); err != nil || res.Phase != sync.Succeeded {
		t.Fatalf("sync: %v %s", err, res.Summary())
	}
	kube := kubernetes.NewForConfigOrDie(cluster.Config())
	svc, err := kube.CoreV1().Services(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The cloud's part: the load balancer gets an address.
	svc.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "203.0.113.7"}}
	if _, err := kube.CoreV1().Services(ns).UpdateStatus(ctx, svc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	var tree *v1alpha1.ApplicationTree
	var summary v1alpha1.ApplicationSummary
	byKind := map[string]v1alpha1.ResourceNode{}
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		tree, summary, err = e.ResourceTree(ctx, app)
		if err != nil {
			return false, err
		}
		byKind = map[string]v1alpha1.ResourceNode{}
		for _, n := range tree.Nodes {
			byKind[n.Kind] = n
		}
		healthy := func(kind string) bool {
			n, ok := byKind[kind]
			return ok && n.Health != nil && n.Health.Status == "Healthy"
		}
		return healthy("Deployment") && healthy("ReplicaSet") && healthy("Pod") && len(summary.ExternalURLs) == 4, nil
	})
	if err != nil {
		t.Fatalf("waiting for a healthy Deployment, ReplicaSet and Pod in the tree and the URLs: %v; tree %+v, summary %+v", err, tree, summary)
	}
	dep, rs, pod := byKind["Deployment"], byKind["ReplicaSet"], byKind["Pod"]
	if dep.UID == "" || dep.Group != "apps" || dep.Version != "v1" || len(dep.ParentRefs) != 0 || dep.CreatedAt == nil {
		t.Errorf("Deployment node %+v", dep)
	}
	if len(rs.ParentRefs) != 1 || rs.ParentRefs[0].UID != dep.UID || rs.ParentRefs[0].Kind != "Deployment" || rs.CreatedAt == nil {
		t.Errorf("ReplicaSet node %+v, want the Deployment (uid %s) as parent", rs, dep.UID)
	}
	if len(pod.ParentRefs) != 1 || pod.ParentRefs[0].UID != rs.UID || pod.ParentRefs[0].Name != rs.Name || pod.CreatedAt == nil {
		t.Errorf("Pod node %+v, want the ReplicaSet %s as parent", pod, rs.Name)
	}
	images := []string{"envoyproxy/envoy:v1", "nginx"}
	for _, n := range []v1alpha1.ResourceNode{dep, rs, pod} {
		if !reflect.DeepEqual(n.Images, images) || n.ResourceVersion != "" {
			t.Errorf("%s node: images %q (want %q), resourceVersion %q (want none)", n.Kind, n.Images, images, n.ResourceVersion)
		}
	}
	index := map[string]int{}
	for i, n := range tree.Nodes {
		index[n.Kind+"/"+n.Name] = i
	}
	if !(index["Deployment/web"] < index["ReplicaSet/"+rs.Name] && index["ReplicaSet/"+rs.Name] < index["Pod/"+pod.Name]) {
		t.Errorf("parents do not come before children: %v", index)
	}
	wantURLs := []string{"http://203.0.113.7:8080", "http://docs.example/docs", "https://203.0.113.7", "https://web.example/"}
	if !reflect.DeepEqual(summary.ExternalURLs, wantURLs) || !reflect.DeepEqual(summary.Images, images) {
		t.Errorf("summary %+v, want URLs %q and images %q", summary, wantURLs, images)
	}

	again, againSummary, err := e.ResourceTree(ctx, app)
	if err != nil || !reflect.DeepEqual(again, tree) || !reflect.DeepEqual(againSummary, summary) {
		t.Errorf("a second call with nothing changed differs (err %v):\n%+v\n%+v", err, tree, again)
	}
}
