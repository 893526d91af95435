package sync

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	gosync "sync"
	"testing"
	"time"

	"github.com/kubegitops/gitops/resource"
	"github.com/kubegitops/gitops/testenv"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

// benchObjects returns n objects, half ConfigMaps (about 250 bytes of data)
// and half Deployments with no replicas (so the comparison is of writes, not
// of the scheduler).
func benchObjects(b testing.TB, ns string, n int) []*unstructured.Unstructured {
	var sb strings.Builder
	for i := 0; i < n/2; i++ {
		fmt.Fprintf(&sb, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm-%d, namespace: %s}\ndata: {payload: %q}\n---\n", i, ns, strings.Repeat("x", 250))
		fmt.Fprintf(&sb, `apiVersion: apps/v1
kind: Deployment
metadata: {name: d-%d, namespace: %s}
spec:
  replicas: 0
  selector: {matchLabels: {app: d-%d}}
  template:
    metadata: {labels: {app: d-%d}}
    spec: {containers: [{name: c, image: nginx}]}
---
`, i, ns, i, i)
	}
	objs, err := resource.Decode("bench.yaml", []byte(sb.String()), resource.DefaultDecodeOptions())
	if err != nil {
		b.Fatal(err)
	}
	return objs
}

func benchNamespace(b *testing.B) string {
	ctx := context.Background()
	name := fmt.Sprintf("bench-%d", time.Now().UnixNano())
	ns := &unstructured.Unstructured{}
	ns.SetAPIVersion("v1")
	ns.SetKind("Namespace")
	ns.SetName(name)
	d := dynamic0(b)
	if _, err := d.Resource(gvrNamespace).Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = d.Resource(gvrNamespace).Delete(context.Background(), name, metav1.DeleteOptions{}) })
	return name
}

// floorApply is the floor: every object applied by a plain server-side
// apply patch from client-go, 8 at a time, no ordering, no waiting.
func floorApply(b testing.TB, objs []*unstructured.Unstructured) {
	d := dynamic0(b)
	sem := make(chan struct{}, 8)
	var wg gosync.WaitGroup
	force := true
	for _, o := range objs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			gvr := gvrConfigMaps
			if o.GetKind() == "Deployment" {
				gvr = gvrDeployments
			}
			body, _ := json.Marshal(o.Object)
			if _, err := d.Resource(gvr).Namespace(o.GetNamespace()).Patch(context.Background(), o.GetName(), types.ApplyPatchType, body,
				metav1.PatchOptions{FieldManager: "floor", Force: &force}); err != nil {
				b.Error(err)
			}
		}()
	}
	wg.Wait()
}

func kubectlApply(b *testing.B, kubectl string, objs []*unstructured.Unstructured) {
	var sb strings.Builder
	for _, o := range objs {
		data, _ := json.Marshal(o.Object)
		sb.Write(data)
		sb.WriteString("\n")
	}
	file := filepath.Join(b.TempDir(), "all.json")
	if err := os.WriteFile(file, []byte(sb.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	out, err := exec.Command(kubectl, "--kubeconfig", cluster.Kubeconfig(), "apply", "--server-side", "-f", file).CombinedOutput()
	if err != nil {
		b.Fatalf("kubectl: %v\n%s", err, out)
	}
}

// BenchmarkFirstSync1000 applies 1,000 objects (500 ConfigMaps, 500
// Deployments) into fresh namespaces with the floor, with Sync, and with
// kubectl apply --server-side, in one run, and reports Sync's time as
// ratios: x-floor (target ≤ 1.3) and kubectl-x (how many times faster than
// kubectl; target ≥ 3). It then resyncs the same objects and reports the
// writes that resync sent (must be 0) and its time.
//
//	go test ./sync -run '^$' -bench FirstSync1000 -benchtime 1x
func BenchmarkFirstSync1000(b *testing.B) {
	kubectl, err := testenv.EnsureKubectl(context.Background(), testenv.DefaultBuildOptions())
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		nsFloor, nsSync, nsKubectl := benchNamespace(b), benchNamespace(b), benchNamespace(b)
		start := time.Now()
		floorApply(b, benchObjects(b, nsFloor, 1000))
		floor := time.Since(start)

		s, counter := newBenchSyncer(b)
		objs := benchObjects(b, nsSync, 1000)
		start = time.Now()
		res, err := s.Sync(context.Background(), Request{App: "bench", Desired: objs, Namespace: nsSync})
		ours := time.Since(start)
		if err != nil || res.Phase != Succeeded {
			b.Fatalf("sync: %v", err)
		}
		writesFirst := counter.count()

		start = time.Now()
		kubectlApply(b, kubectl, benchObjects(b, nsKubectl, 1000))
		kube := time.Since(start)

		before := counter.count()
		start = time.Now()
		res, err = s.Sync(context.Background(), Request{App: "bench", Desired: objs, Namespace: nsSync})
		resync := time.Since(start)
		if err != nil || res.Phase != Succeeded {
			b.Fatalf("resync: %v", err)
		}
		b.ReportMetric(floor.Seconds(), "floor-s")
		b.ReportMetric(ours.Seconds(), "sync-s")
		b.ReportMetric(kube.Seconds(), "kubectl-s")
		b.ReportMetric(ours.Seconds()/floor.Seconds(), "x-floor")
		b.ReportMetric(kube.Seconds()/ours.Seconds(), "kubectl-x")
		b.ReportMetric(resync.Seconds(), "resync-s")
		b.ReportMetric(float64(counter.count()-before), "resync-writes")
		b.ReportMetric(float64(writesFirst), "first-writes")
	}
}
