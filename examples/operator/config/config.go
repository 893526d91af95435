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

// ApplicationSetsCRD is the manifest of the applicationsets.argoproj.io
// CustomResourceDefinition.
//
//go:embed applicationsets.argoproj.io.yaml
var ApplicationSetsCRD []byte

// AppProjectsCRD is the manifest of the appprojects.argoproj.io
// CustomResourceDefinition.
//
//go:embed appprojects.argoproj.io.yaml
var AppProjectsCRD []byte

// CRD decodes ApplicationsCRD.
func CRD() (*apiextensionsv1.CustomResourceDefinition, error) {
	return decode("applications.argoproj.io.yaml", ApplicationsCRD)
}

// AppSetCRD decodes ApplicationSetsCRD.
func AppSetCRD() (*apiextensionsv1.CustomResourceDefinition, error) {
	return decode("applicationsets.argoproj.io.yaml", ApplicationSetsCRD)
}

// AppProjectCRD decodes AppProjectsCRD.
func AppProjectCRD() (*apiextensionsv1.CustomResourceDefinition, error) {
	return decode("appprojects.argoproj.io.yaml", AppProjectsCRD)
}

func decode(file string, manifest []byte) (*apiextensionsv1.CustomResourceDefinition, error) {
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.UnmarshalStrict(manifest, &crd); err != nil {
		return nil, fmt.Errorf("config: %s: %w", file, err)
	}
	return &crd, nil
}

// Install creates the CustomResourceDefinitions (Application,
// ApplicationSet, then AppProject), or updates them to these manifests, and waits (at most
// timeout each) until the API server serves them. c's scheme must know
// apiextensions.k8s.io/v1.
func Install(ctx context.Context, c client.Client, timeout time.Duration) error {
	for _, crd := range []func() (*apiextensionsv1.CustomResourceDefinition, error){CRD, AppSetCRD, AppProjectCRD} {
		want, err := crd()
		if err != nil {
			return err
		}
		if err := install(ctx, c, want, timeout); err != nil {
			return err
		}
	}
	return nil
}

// install creates or updates one CRD and waits until it is served.
func install(ctx context.Context, c client.Client, want *apiextensionsv1.CustomResourceDefinition, timeout time.Duration) error {
	live := &apiextensionsv1.CustomResourceDefinition{}
	err := c.Get(ctx, client.ObjectKeyFromObject(want), live)
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
