package engine

import (
	"context"
	"errors"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/kubegitops/gitops/health/actions"
	"github.com/kubegitops/gitops/resource"
)

// rolloutCRD installs a minimal argoproj.io Rollout CRD with a status
// subresource (once per cluster).
func rolloutCRD(t *testing.T) {
	t.Helper()
	cs, err := apiextensionsclient.NewForConfig(cluster.Config())
	if err != nil {
		t.Fatal(err)
	}
	preserve := true
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "rollouts.argoproj.io"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "argoproj.io", Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "rollouts", Singular: "rollout", Kind: "Rollout", ListKind: "RolloutList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1alpha1", Served: true, Storage: true,
				Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
				Schema:       &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: &preserve}},
			}},
		},
	}
	ctx := context.Background()
	if _, err := cs.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, crd, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	poll(t, "the Rollout CRD to be established", func(ctx context.Context) (bool, error) {
		got, err := cs.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, crd.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, c := range got.Status.Conditions {
			if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
}

// TestRunActionPromotesARolloutThroughItsStatus runs promote-full, which
// changes only .status, on a custom resource with a status subresource:
// the change goes through /status and lands.
func TestRunActionPromotesARolloutThroughItsStatus(t *testing.T) {
	t.Parallel()
	rolloutCRD(t)
	ns := cluster.TestNamespace(t)
	e := newEngine(t, nil)
	app := dirApp(ns, repoDir(t, map[string]string{"app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"}), ns)
	key := resource.Key{Group: "argoproj.io", Kind: "Rollout", Namespace: ns, Name: "web"}
	dyn, err := dynamic.NewForConfig(cluster.Config())
	if err != nil {
		t.Fatal(err)
	}
	ri := dyn.Resource(schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "rollouts"}).Namespace(ns)
	ro := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout",
		"metadata": map[string]any{"name": "web", "annotations": map[string]any{
			e.opts.Tracking.AnnotationKey: resource.TrackingID{App: app.Name, Key: key}.String()}},
		"spec": map[string]any{"replicas": int64(2)},
	}}
	ctx := context.Background()
	created, err := ri.Create(ctx, ro, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	created.Object["status"] = map[string]any{"currentPodHash": "6d4b", "stableRS": "58c9"}
	if _, err := ri.UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	poll(t, "the engine to see the Rollout", func(ctx context.Context) (bool, error) {
		_, err := e.Actions(ctx, app, key)
		return err == nil, nil
	})
	res, err := e.RunAction(ctx, app, key, "promote-full", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Changes) != 1 {
		t.Fatalf("changes %+v", res.Changes)
	}
	got, err := ri.Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if v, _, _ := unstructured.NestedBool(got.Object, "status", "promoteFull"); !v {
		t.Fatalf("status.promoteFull not set: %v", got.Object["status"])
	}
	// The action reads the object fresh: abort sees the promotion at once.
	if _, err := e.RunAction(ctx, app, key, "abort", nil); err != nil {
		t.Fatal(err)
	}
	got, _ = ri.Get(ctx, "web", metav1.GetOptions{})
	if v, _, _ := unstructured.NestedBool(got.Object, "status", "abort"); !v {
		t.Fatalf("status.abort not set: %v", got.Object["status"])
	}
	if _, err := e.RunAction(ctx, app, key, "promote-full", nil); !errors.Is(err, actions.ErrDisabled) {
		t.Fatalf("promote-full of an aborted rollout: %v", err)
	}
}
