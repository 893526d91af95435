package main

import (
	"context"
	"fmt"
	"time"

	"github.com/kubegitops/gitops/health"
	"github.com/kubegitops/gitops/resource"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

// liveHealth judges an object's health as it is in the cluster now, with
// the engine's default checker, for the progress table's HEALTH column:
// sync.ResourceResult carries no health of its own.
type liveHealth struct {
	client  dynamic.Interface
	mapper  *restmapper.DeferredDiscoveryRESTMapper
	checker health.Checker
}

// newLiveHealth returns a liveHealth judging with checker (nil: the
// default checker), the engine's own when the command was given
// --scripts-dir.
func newLiveHealth(cfg *rest.Config, checker health.Checker) (*liveHealth, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	client, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	if checker == nil {
		if checker, err = health.NewChecker(health.DefaultOptions()); err != nil {
			return nil, err
		}
	}
	return &liveHealth{client: client, mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc)), checker: checker}, nil
}

// Of returns the health code of the live object ("-" when the checker has
// no opinion, "Missing" when it does not exist, "?" when it cannot be
// read).
func (l *liveHealth) Of(key resource.Key) string {
	mapping, err := l.mapper.RESTMapping(schema.GroupKind{Group: key.Group, Kind: key.Kind})
	if err != nil {
		return "?"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var ri dynamic.ResourceInterface = l.client.Resource(mapping.Resource)
	if key.Namespace != "" {
		ri = l.client.Resource(mapping.Resource).Namespace(key.Namespace)
	}
	live, err := ri.Get(ctx, key.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return "Missing"
	case err != nil:
		return "?"
	}
	st, err := l.checker.Check(live)
	switch {
	case err != nil:
		return fmt.Sprintf("Unknown (%v)", err)
	case st == nil:
		return "-"
	}
	return string(st.Code)
}
