package imageupdate

import (
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// podSpecPaths are where workload kinds keep their pod spec.
var podSpecPaths = [][]string{
	{"spec"},                     // Pod
	{"spec", "template", "spec"}, // Deployment, StatefulSet, DaemonSet, ReplicaSet, Job, ...
	{"spec", "jobTemplate", "spec", "template", "spec"}, // CronJob
}

// ImagesOf lists, sorted and without duplicates, the container images
// (containers, initContainers, ephemeralContainers) of the pod specs in
// objs: what App.Images wants, taken from rendered or live objects.
func ImagesOf(objs []*unstructured.Unstructured) []string {
	seen := map[string]bool{}
	for _, o := range objs {
		if o == nil {
			continue
		}
		for _, p := range podSpecPaths {
			spec, ok, _ := unstructured.NestedMap(o.Object, p...)
			if !ok {
				continue
			}
			for _, field := range []string{"containers", "initContainers", "ephemeralContainers"} {
				cs, _, _ := unstructured.NestedSlice(spec, field)
				for _, c := range cs {
					if m, ok := c.(map[string]any); ok {
						if img, ok := m["image"].(string); ok && img != "" {
							seen[img] = true
						}
					}
				}
			}
		}
	}
	out := make([]string, 0, len(seen))
	for img := range seen {
		out = append(out, img)
	}
	sort.Strings(out)
	return out
}
