package pipeline_test

import (
	"fmt"
	"strings"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// A rule checks one rendered object of one app and returns what is wrong
// with it, one sentence per violation. Add your own rules to the table.
type rule struct {
	name  string
	check func(app *gitops.Application, obj *unstructured.Unstructured) []string
}

var rules = []rule{
	{"resources", setsResources},
	{"pinned-images", noLatestImages},
	{"namespace", inAppNamespace},
	{"no-secrets", noSecrets},
}

// violations runs every rule on every object of an app. Each message
// names the app, the object and the rule:
// "app guestbook: apps/Deployment shop/ui: [resources] container "ui" sets no memory limit".
func violations(app *gitops.Application, objs []*unstructured.Unstructured) []string {
	var out []string
	for _, obj := range objs {
		key := resource.KeyOf(obj)
		if key.Namespace == "" {
			key.Namespace = app.Spec.Destination.Namespace // where the engine puts it
		}
		for _, r := range rules {
			for _, v := range r.check(app, obj) {
				out = append(out, fmt.Sprintf("app %s: %s: [%s] %s", app.Name, key, r.name, v))
			}
		}
	}
	return out
}

// setsResources: every container of a workload requests and limits cpu
// and memory.
func setsResources(_ *gitops.Application, obj *unstructured.Unstructured) []string {
	var out []string
	for _, c := range containers(obj) {
		for _, field := range []string{"requests", "limits"} {
			for _, res := range []string{"cpu", "memory"} {
				if v, ok, _ := unstructured.NestedFieldNoCopy(c, "resources", field, res); !ok || v == nil {
					out = append(out, fmt.Sprintf("container %q sets no %s %s", c["name"], res, strings.TrimSuffix(field, "s")))
				}
			}
		}
	}
	return out
}

// noLatestImages: every image names a tag other than "latest", or a digest.
func noLatestImages(_ *gitops.Application, obj *unstructured.Unstructured) []string {
	var out []string
	for _, c := range containers(obj) {
		image, _ := c["image"].(string)
		if strings.Contains(image, "@") {
			continue // pinned by digest
		}
		name := image[strings.LastIndex(image, "/")+1:] // a registry may have a :port
		if _, tag, ok := strings.Cut(name, ":"); !ok || tag == "latest" {
			out = append(out, fmt.Sprintf("container %q runs %q: pin a version", c["name"], image))
		}
	}
	return out
}

// inAppNamespace: an object names no namespace (the engine puts it in the
// app's) or the app's own; anything else deploys where the app's project
// and reviewers do not look.
func inAppNamespace(app *gitops.Application, obj *unstructured.Unstructured) []string {
	if ns := obj.GetNamespace(); ns != "" && ns != app.Spec.Destination.Namespace {
		return []string{fmt.Sprintf("is in namespace %q, not the app's %q", ns, app.Spec.Destination.Namespace)}
	}
	return nil
}

// noSecrets: Secrets are not kept in Git, not even base64-encoded; use
// your secret operator's kind (ExternalSecret, SealedSecret) instead.
func noSecrets(_ *gitops.Application, obj *unstructured.Unstructured) []string {
	if obj.GetAPIVersion() == "v1" && obj.GetKind() == "Secret" {
		return []string{"is a Secret: keep secret values out of Git"}
	}
	return nil
}

// containers returns the containers and init containers of a workload's
// pod template (nil for other kinds).
func containers(obj *unstructured.Unstructured) []map[string]any {
	path := []string{"spec", "template", "spec"}
	switch obj.GetKind() {
	case "Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job":
	case "CronJob":
		path = []string{"spec", "jobTemplate", "spec", "template", "spec"}
	default:
		return nil
	}
	var out []map[string]any
	for _, field := range []string{"initContainers", "containers"} {
		list, _, _ := unstructured.NestedSlice(obj.Object, append(path, field)...)
		for _, c := range list {
			if m, ok := c.(map[string]any); ok {
				out = append(out, m)
			}
		}
	}
	return out
}
