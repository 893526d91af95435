package actions

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/kubegitops/gitops/resource"
)

// This file mirrors how Argo CD's own action test
// (util/lua/custom_actions_test.go, TestLuaResourceActionsScript, v3.6)
// judges an action's output: how it reads expectedOutputPath
// (getExpectedObjectList), which expected object an impacted resource is
// compared with (findFirstMatchingItem), its testNormalizer, and the
// gitops-engine diff.Diff it compares with.

// testEntry is one impacted resource an action returned, as Argo CD's test
// sees it: every patch (even one that changes nothing) and every create.
type testEntry struct {
	op  Operation
	obj *unstructured.Unstructured
}

// parseExpected reads an expected output as Argo CD's getExpectedObjectList
// does: a file whose first byte is '-' is the newer form, a list of
// {k8sOperation, unstructuredObj}; anything else is one object (the older
// form). Errors name the file.
func parseExpected(name string, data []byte) ([]*unstructured.Unstructured, error) {
	if len(data) == 0 {
		return nil, fmt.Errorf("%s: empty expected output", name)
	}
	if data[0] != '-' {
		obj := map[string]any{}
		if err := yaml.Unmarshal(data, &obj); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		return []*unstructured.Unstructured{{Object: obj}}, nil
	}
	var list []map[string]any
	if err := yaml.Unmarshal(data, &list); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	out := make([]*unstructured.Unstructured, 0, len(list))
	for i, e := range list {
		obj, ok := e["unstructuredObj"].(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s: entry %d has no unstructuredObj object", name, i+1)
		}
		out = append(out, &unstructured.Unstructured{Object: obj})
	}
	return out, nil
}

// testEntries turns an action's raw return value into the entries Argo
// CD's test compares: the older form is one patch of the returned object,
// the newer form one entry per {operation, resource}. The value has passed
// buildResult, so its shape is known to be valid.
func testEntries(ret any) []testEntry {
	if m, ok := ret.(map[string]any); ok {
		return []testEntry{{op: OperationPatch, obj: &unstructured.Unstructured{Object: m}}}
	}
	list, _ := ret.([]any)
	out := make([]testEntry, 0, len(list))
	for _, e := range list {
		entry, _ := e.(map[string]any)
		obj, _ := entry["resource"].(map[string]any)
		out = append(out, testEntry{op: Operation(scalarString(entry["operation"])), obj: &unstructured.Unstructured{Object: obj}})
	}
	return out
}

// matchExpected is Argo CD's findFirstMatchingItem with its predicate: the
// first expected object of the same apiVersion, kind, namespace and name;
// for a Job created from a CronJob, or a Workflow from a CronWorkflow or
// WorkflowTemplate, whose name is generated, the name need only start with
// the source object's.
func matchExpected(want []*unstructured.Unstructured, source, got *unstructured.Unstructured) *unstructured.Unstructured {
	generated := (got.GetKind() == "Job" && source.GetKind() == "CronJob") ||
		(got.GetKind() == "Workflow" && (source.GetKind() == "CronWorkflow" || source.GetKind() == "WorkflowTemplate"))
	for _, u := range want {
		if u.GroupVersionKind() != got.GroupVersionKind() || u.GetNamespace() != got.GetNamespace() {
			continue
		}
		if generated && strings.HasPrefix(u.GetName(), source.GetName()) || !generated && u.GetName() == got.GetName() {
			return u
		}
	}
	return nil
}

// compareEntry judges one entry against its expected object as Argo CD's
// test does: a created Job or Workflow takes the expected name (it is
// generated), both sides are normalised (argoNormalize) and the result
// must agree with every field the expected object sets (argoCovers).
func compareEntry(want *unstructured.Unstructured, e testEntry) error {
	w := want.DeepCopy()
	g := e.obj.DeepCopy()
	if e.op == OperationCreate && (g.GetKind() == "Job" || g.GetKind() == "Workflow") {
		g.SetName(w.GetName())
	}
	if err := argoNormalize(w); err != nil {
		return err
	}
	if err := argoNormalize(g); err != nil {
		return err
	}
	wn, gn := normalise(w.Object), normalise(g.Object)
	if path, ok := argoCovers(wn, gn, ""); !ok {
		wy, _ := yaml.Marshal(w.Object)
		gy, _ := yaml.Marshal(g.Object)
		return fmt.Errorf("%s %s differs at %s:\nwant:\n%s\ngot:\n%s", gkString(g.GroupVersionKind().GroupKind()), g.GetName(), path, wy, gy)
	}
	return nil
}

// argoCovers reports whether got agrees with want as gitops-engine's
// diff.Diff(want, got) finds no change: without a last-applied
// configuration it is a three-way diff with want as the last applied
// state, which first drops from got every field want does not set
// (jsonutil.RemoveMapFields), then applies want as a merge patch. So every
// field want sets must be in got with an equal value (numbers by value);
// a field want sets to null must be absent or null in got; lists must have
// the same length and agree element by element. It returns the first
// path that differs.
func argoCovers(want, got any, path string) (string, bool) {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return orRoot(path), false
		}
		for k, wv := range w {
			gv, had := g[k]
			if wv == nil {
				if had && gv != nil {
					return path + "." + k, false
				}
				continue
			}
			if !had {
				return path + "." + k, false
			}
			if p, ok := argoCovers(wv, gv, path+"."+k); !ok {
				return p, false
			}
		}
		return "", true
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return orRoot(path), false
		}
		for i := range w {
			if p, ok := argoCovers(w[i], g[i], fmt.Sprintf("%s[%d]", path, i)); !ok {
				return p, false
			}
		}
		return "", true
	}
	if !resource.ValuesEqual(want, got) {
		return orRoot(path), false
	}
	return "", true
}

func orRoot(path string) string {
	if path == "" {
		return "."
	}
	return path
}

// argoNormalize mirrors gitops-engine's diff.Normalize (it removes
// metadata.creationTimestamp) and then Argo CD's testNormalizer, which
// overwrites the fields an action stamps with the time (restart and
// reconcile annotations, scheduled times) on both sides, by the
// apiVersion's group and the kind.
func argoNormalize(un *unstructured.Unstructured) error {
	unstructured.RemoveNestedField(un.Object, "metadata", "creationTimestamp")
	gv, err := schema.ParseGroupVersion(un.GetAPIVersion())
	if err != nil {
		return fmt.Errorf("apiVersion of %s %s: %w", un.GetKind(), un.GetName(), err)
	}
	set := func(v any, fields ...string) {
		// SetNestedField fails only when a parent is not a map; Argo CD's
		// test then fails, and so does the comparison here, since the
		// field is left as it is on that side only.
		_ = unstructured.SetNestedField(un.Object, v, fields...)
	}
	annotations := func(keep bool, kv ...string) {
		m := map[string]any{}
		if keep {
			if old, ok, _ := unstructured.NestedMap(un.Object, "metadata", "annotations"); ok {
				m = old
			}
		}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		set(m, "metadata", "annotations")
	}
	const zero = "0001-01-01T00:00:00Z"
	kind := un.GetKind()
	switch gv.Group {
	case "batch":
		if kind == "Job" {
			normalizeJobConditions(un)
		}
	case "apps":
		switch kind {
		case "DaemonSet", "Deployment", "StatefulSet":
			set(map[string]any{"kubectl.kubernetes.io/restartedAt": zero}, "spec", "template", "metadata", "annotations")
		}
		if kind == "Deployment" {
			set(nil, "status")
			set(nil, "metadata", "creationTimestamp")
			set(nil, "metadata", "generation")
		}
	case "argoproj.io":
		switch kind {
		case "Rollout":
			set(nil, "spec", "restartAt")
		case "Workflow":
			set(nil, "metadata", "resourceVersion")
			set(nil, "metadata", "uid")
			set(nil, "metadata", "annotations", "workflows.argoproj.io/scheduled-time")
		}
	case "external-secrets.io":
		if kind == "ExternalSecret" || kind == "PushSecret" {
			annotations(false, "force-sync", zero)
		}
	case "postgresql.cnpg.io":
		if kind == "Cluster" {
			annotations(true, "cnpg.io/reloadedAt", zero, "kubectl.kubernetes.io/restartedAt", zero)
			set(nil, "status", "targetPrimaryTimestamp")
		}
	case "helm.toolkit.fluxcd.io", "source.toolkit.fluxcd.io", "image.toolkit.fluxcd.io", "kustomize.toolkit.fluxcd.io", "notification.toolkit.fluxcd.io":
		if fluxRequestedAtKinds[gv.Group+"/"+kind] {
			annotations(false, "reconcile.fluxcd.io/requestedAt", "By Argo CD at: 0001-01-01T00:00:00")
		}
	case "capsule.clastix.io":
		if kind == "TenantResource" || kind == "GlobalTenantResource" {
			annotations(true, "reconcile.projectcapsule.dev/requestedAt", zero)
		}
	}
	return nil
}

// fluxRequestedAtKinds are the Flux kinds whose annotations Argo CD's
// testNormalizer replaces by a fixed reconcile.fluxcd.io/requestedAt.
var fluxRequestedAtKinds = map[string]bool{
	"helm.toolkit.fluxcd.io/HelmRelease":            true,
	"source.toolkit.fluxcd.io/Bucket":               true,
	"source.toolkit.fluxcd.io/GitRepository":        true,
	"source.toolkit.fluxcd.io/HelmChart":            true,
	"source.toolkit.fluxcd.io/HelmRepository":       true,
	"source.toolkit.fluxcd.io/OCIRepository":        true,
	"image.toolkit.fluxcd.io/ImageRepository":       true,
	"image.toolkit.fluxcd.io/ImageUpdateAutomation": true,
	"kustomize.toolkit.fluxcd.io/Kustomization":     true,
	"notification.toolkit.fluxcd.io/Receiver":       true,
}

// normalizeJobConditions fixes the lastTransitionTime of a Job's
// FailureTarget conditions (Argo CD's normalizeJob).
func normalizeJobConditions(un *unstructured.Unstructured) {
	conds, ok, _ := unstructured.NestedSlice(un.Object, "status", "conditions")
	if !ok {
		return
	}
	changed := false
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == "FailureTarget" {
			m["lastTransitionTime"] = "0001-01-01T00:00:00Z"
			changed = true
		}
	}
	if changed {
		_ = unstructured.SetNestedSlice(un.Object, conds, "status", "conditions")
	}
}
