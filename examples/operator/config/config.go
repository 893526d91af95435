package config

import (
	"context"
	_ "embed"
	"fmt"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// ApplicationsCRD is the manifest of the applications.argoproj.io
// CustomResourceDefinition.
//
//go:embed applications.argoproj.io.yaml
var ApplicationsCRD []byte

// CRD decodes ApplicationsCRD.
func CRD() (*apiextensionsv1.CustomResourceDefinition, error) {
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.UnmarshalStrict(ApplicationsCRD, &crd); err != nil {
		return nil, fmt.Errorf("config: applications.argoproj.io.yaml: %w", err)
	}
	return &crd, nil
}

// Install creates the CustomResourceDefinition, or updates it to this
// manifest, and waits (at most timeout) until the API server serves it.
// c's scheme must know apiextensions.k8s.io/v1.
func Install(ctx context.Context, c client.Client, timeout time.Duration) error {
	want, err := CRD()
	if err != nil {
		return err
	}
	live := &apiextensionsv1.CustomResourceDefinition{}
	err = c.Get(ctx, client.ObjectKeyFromObject(want), live)
	switch {
	case apierrors.IsNotFound(err):
		if err := c.Create(ctx, want.DeepCopy()); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("config: create CRD %s: %w", want.Name, err)
		}
	case err != nil:
		return fmt.Errorf("config: read CRD %s: %w", want.Name, err)
	default:
		live.Spec = want.Spec
		live.Labels = want.Labels
		if err := c.Update(ctx, live); err != nil {
			return fmt.Errorf("config: update CRD %s: %w", want.Name, err)
		}
	}
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		got := &apiextensionsv1.CustomResourceDefinition{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(want), got); err != nil {
			return false, nil
		}
		for _, cond := range got.Status.Conditions {
			if cond.Type == apiextensionsv1.NonStructuralSchema && cond.Status == apiextensionsv1.ConditionTrue {
				return false, fmt.Errorf("config: CRD %s: schema is not structural: %s", want.Name, cond.Message)
			}
		}
		for _, cond := range got.Status.Conditions {
			if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
}
