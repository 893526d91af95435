package engine

import (
	"context"
	"errors"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubegitops/gitops/health"
	"github.com/kubegitops/gitops/resource"
)

// TestOwnedFieldsAreRefused: each field of the Cache and Sync templates
// that the engine overwrites is refused by New with an *OwnedFieldError
// naming it, instead of being silently replaced; the defaults and the
// engine's own tracking are accepted.
func TestOwnedFieldsAreRefused(t *testing.T) {
	checker, err := health.NewChecker(health.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	other := resource.DefaultTracking()
	other.AnnotationKey = "example.com/owner"
	for field, set := range map[string]func(*Options){
		"Options.Sync.Tracking":  func(o *Options) { o.Sync.Tracking = other },
		"Options.Cache.Tracking": func(o *Options) { o.Cache.Tracking = other },
		"Options.Sync.Health":    func(o *Options) { o.Sync.Health = checker },
		"Options.Sync.ManagedObjects": func(o *Options) {
			o.Sync.ManagedObjects = func(context.Context, string) ([]*unstructured.Unstructured, error) { return nil, nil }
		},
		"Options.Sync.Admit": func(o *Options) {
			o.Sync.Admit = func(context.Context, *unstructured.Unstructured, bool, bool) error { return nil }
		},
		"Options.Sync.InSync": func(o *Options) {
			o.Sync.InSync = func(context.Context, *unstructured.Unstructured, *unstructured.Unstructured) (bool, error) {
				return false, nil
			}
		},
	} {
		opts := DefaultOptions()
		opts.Clusters = []ClusterConfig{{Name: "ci"}}
		set(&opts)
		_, err := newWithBuiltins(opts)
		var owned *OwnedFieldError
		if !errors.As(err, &owned) || owned.Field != field {
			t.Errorf("%s set: New returned %v, want an OwnedFieldError naming it", field, err)
		}
	}
	// The defaults, and a template that repeats the engine's tracking, are
	// no conflict.
	opts := DefaultOptions()
	opts.Clusters = []ClusterConfig{{Name: "ci"}}
	opts.Tracking = resource.TrackingArgoCD()
	opts.Sync.Tracking, opts.Cache.Tracking = opts.Tracking, resource.Tracking{}
	e, err := newWithBuiltins(opts)
	if err != nil {
		t.Fatalf("defaults refused: %v", err)
	}
	e.Close()
}
