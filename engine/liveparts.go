package engine

import (
	"context"
	"sync/atomic"

	"github.com/kubegitops/gitops/engine/internal/clusters"
	"github.com/kubegitops/gitops/engine/internal/compare"
	"github.com/kubegitops/gitops/engine/internal/desired"
	"github.com/kubegitops/gitops/health"
	"github.com/kubegitops/gitops/health/actions"
	"github.com/kubegitops/gitops/render"
	"github.com/kubegitops/gitops/sync"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// liveParts are what the engine builds from the options Reconfigure may
// change. They are replaced whole, so that one refresh sees one set.
type liveParts struct {
	// opts are the options they were built from.
	opts     Options
	comparer *compare.Comparer
	desired  *desired.Builder
	actions  *actions.Runner
	// updates judges watched updates (Options.IgnoreResourceUpdates), or
	// is nil.
	updates *clusters.UpdateIgnorer
	// writes bounds the writes of every syncer (Options.ClusterWriteLimit),
	// or is nil.
	writes *sync.Limiter
}

// liveChecker is the engine's health checker: the one Options.Health
// gave, replaced by Reconfigure. Every part the engine builds judges
// through it, so a new checker applies without rebuilding them.
type liveChecker struct {
	c atomicValue[health.Checker]
}

func (l *liveChecker) set(c health.Checker) { l.c.store(c) }

// Current returns the checker in use now: the comparison judges a whole
// refresh with one checker and its memo keeps that checker's pure
// verdicts (compare.Config.Health).
func (l *liveChecker) Current() health.Checker { return l.c.load() }

// Check implements health.Checker.
func (l *liveChecker) Check(obj *unstructured.Unstructured) (*health.Status, error) {
	return l.c.load().Check(obj)
}

// CheckContext implements health.ContextChecker.
func (l *liveChecker) CheckContext(ctx context.Context, obj *unstructured.Unstructured) (*health.Status, error) {
	return health.CheckContext(ctx, l.c.load(), obj)
}

// liveTools is the renderer under the engine's render cache: the tools of
// Options.Toolkit and Renderers, replaced by Reconfigure (the cache, its
// store and its metrics stay).
type liveTools struct {
	t atomicValue[render.Tools]
}

func (l *liveTools) set(t render.Tools) { l.t.store(t) }

// Render implements render.Renderer.
func (l *liveTools) Render(ctx context.Context, in render.Input) ([]*unstructured.Unstructured, error) {
	return l.t.load().Render(ctx, in)
}

// Identity implements render.Identifier.
func (l *liveTools) Identity(in render.Input) (render.Identity, error) {
	return l.t.load().Identity(in)
}

// atomicValue holds a value of T replaced atomically.
type atomicValue[T any] struct{ p atomic.Pointer[T] }

func (a *atomicValue[T]) store(v T) { a.p.Store(&v) }

func (a *atomicValue[T]) load() T { return *a.p.Load() }
