package sync

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/kubegitops/gitops/resource"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

// createNamespace creates the destination namespace (CreateNamespace=true)
// before anything else, the whole-sync dry run included, as Argo CD does.
func (op *operation) createNamespace(ctx context.Context) error {
	ns := op.req.Namespace
	if ns == "" || !op.req.Options.Has(resource.OptionCreateNamespace, "true") {
		return nil
	}
	obj := &unstructured.Unstructured{}
	obj.SetAPIVersion("v1")
	obj.SetKind("Namespace")
	obj.SetName(ns)
	err := retryTransient(ctx, func() error {
		_, err := op.s.resourceFor(gvrNamespace, "").Create(ctx, obj, metav1.CreateOptions{FieldManager: op.s.opts.FieldManager})
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("sync: create namespace %s: %w", ns, err)
	}
	return op.applyNamespaceMetadata(ctx, ns)
}

// applyNamespaceMetadata applies Request.NamespaceMetadata to the
// destination namespace under its own field manager, unless the namespace
// is already in step with it (then nothing is written).
func (op *operation) applyNamespaceMetadata(ctx context.Context, ns string) error {
	manager := op.s.opts.FieldManager + "-namespace-metadata"
	md := op.req.NamespaceMetadata
	if md == nil {
		md = &NamespaceMetadata{}
	}
	live, err := op.s.resourceFor(gvrNamespace, "").Get(ctx, ns, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("sync: namespace %s: %w", ns, err)
	}
	if namespaceMetadataInStep(live, manager, md) {
		return nil
	}
	meta := map[string]any{"name": ns}
	if len(md.Labels) > 0 {
		meta["labels"] = md.Labels
	}
	if len(md.Annotations) > 0 {
		meta["annotations"] = md.Annotations
	}
	body, err := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": meta})
	if err != nil {
		return err
	}
	force := true
	err = retryTransient(ctx, func() error {
		_, err := op.s.resourceFor(gvrNamespace, "").Patch(ctx, ns, types.ApplyPatchType, body, metav1.PatchOptions{FieldManager: manager, Force: &force})
		return err
	})
	if err != nil {
		return fmt.Errorf("sync: namespace %s: managed metadata: %w", ns, err)
	}
	return nil
}

// namespaceMetadataInStep reports whether live carries md's labels and
// annotations and manager owns exactly those keys (so nothing is to add,
// change or remove).
func namespaceMetadataInStep(live *unstructured.Unstructured, manager string, md *NamespaceMetadata) bool {
	owned := map[string]map[string]bool{"f:labels": {}, "f:annotations": {}}
	for _, mf := range live.GetManagedFields() {
		if mf.Manager != manager || mf.FieldsV1 == nil {
			continue
		}
		var fields map[string]map[string]map[string]any
		if json.Unmarshal(mf.FieldsV1.Raw, &fields) != nil {
			return false
		}
		for kind, keys := range fields["f:metadata"] {
			if owned[kind] != nil {
				for k := range keys {
					owned[kind][k] = true
				}
			}
		}
	}
	same := func(kind string, want, have map[string]string) bool {
		if len(owned[kind]) != len(want) {
			return false
		}
		for k, v := range want {
			if !owned[kind]["f:"+k] || have[k] != v {
				return false
			}
		}
		return true
	}
	return same("f:labels", md.Labels, live.GetLabels()) && same("f:annotations", md.Annotations, live.GetAnnotations())
}
