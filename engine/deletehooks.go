package engine

import (
	"context"
	"fmt"

	"github.com/kubegitops/gitops/hooks"
	"github.com/kubegitops/gitops/resource"
	"github.com/kubegitops/gitops/sync"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// DeleteHookError stops an application's deletion: a PreDelete hook
// failed (nothing was deleted), or a PostDelete hook failed (everything
// else is gone).
type DeleteHookError struct {
	// App is the application being deleted.
	App string
	// Phase is PreDelete or PostDelete.
	Phase hooks.Phase
	// Result is the hooks' operation: a row per hook with its message.
	Result sync.Result
}

// Error implements error.
func (e *DeleteHookError) Error() string {
	return fmt.Sprintf("delete %s: %s hook failed, deletion stopped: %s", e.App, e.Phase, e.Result.Message)
}

// deletionHooks renders the app and returns its PreDelete and PostDelete
// hooks, each rewritten as a hook of the phase a sync runs first
// (PreSync), so that the syncer runs it as it runs any hook: created,
// waited for, its delete policy applied.
func (e *Engine) deletionHooks(ctx context.Context, app *Application, cs *clusterState) (pre, post []*unstructured.Unstructured, revision string, err error) {
	desired, err := e.render(ctx, app, cs, nil, false)
	if err != nil {
		return nil, nil, "", fmt.Errorf("delete %s: render to find its PreDelete and PostDelete hooks (DeleteRequest.SkipHooks deletes without them): %w", app.Name, err)
	}
	for _, obj := range desired.Objects {
		info, err := hooks.Of(obj)
		if err != nil {
			return nil, nil, "", fmt.Errorf("delete %s: %w", app.Name, err)
		}
		for _, phase := range info.Phases {
			if phase != hooks.PreDelete && phase != hooks.PostDelete {
				continue
			}
			h := obj.DeepCopy()
			ann := h.GetAnnotations()
			ann[resource.AnnotationHook] = string(hooks.PreSync)
			h.SetAnnotations(ann)
			if phase == hooks.PreDelete {
				pre = append(pre, h)
			} else {
				post = append(post, h)
			}
		}
	}
	return pre, post, desired.Revision(), nil
}

// hasDeletionHooks reports whether objs hold a PreDelete or PostDelete
// hook.
func hasDeletionHooks(objs []*unstructured.Unstructured) bool {
	for _, obj := range objs {
		info, err := hooks.Of(obj)
		if err != nil {
			continue
		}
		for _, p := range info.Phases {
			if p == hooks.PreDelete || p == hooks.PostDelete {
				return true
			}
		}
	}
	return false
}

// runDeletionHooks runs one phase's hooks as a sync of those hooks alone
// and waits for them; a failure is a *DeleteHookError.
func (e *Engine) runDeletionHooks(ctx context.Context, app *Application, syncer Syncer, phase hooks.Phase, objs []*unstructured.Unstructured, revision string) error {
	if len(objs) == 0 {
		return nil
	}
	res, err := syncer.Sync(ctx, sync.Request{App: e.instanceOf(app), Revision: revision, Desired: objs,
		Namespace: app.Spec.Destination.Namespace, AllowEmpty: true})
	if res.Phase != sync.Succeeded {
		if err == nil {
			err = fmt.Errorf("%s", res.Message)
		}
		return &DeleteHookError{App: app.Name, Phase: phase, Result: res}
	}
	return nil
}
