package engine

import (
	"errors"

	"github.com/kubegitops/gitops/apis/v1alpha1"
)

// ErrNoOperation is returned by Terminate when the app has no operation
// running in this engine.
var ErrNoOperation = errors.New("gitops: no operation running")

// operationStarted registers a running operation of app; done unregisters
// it. A second operation of the same app (which the run loop never
// starts) replaces the first in the registry.
func (e *Engine) operationStarted(app string) (terminate <-chan struct{}, done func()) {
	op := &runningOp{terminate: make(chan struct{})}
	e.ops.mu.Lock()
	if e.ops.ops == nil {
		e.ops.ops = map[string]*runningOp{}
	}
	e.ops.ops[app] = op
	e.ops.mu.Unlock()
	return op.terminate, func() {
		e.ops.mu.Lock()
		if e.ops.ops[app] == op {
			delete(e.ops.ops, app)
		}
		e.ops.mu.Unlock()
	}
}

// Terminate terminates the running sync operation of the app of key, as
// Argo CD's terminate does: writes in flight finish, no further wave or
// hook starts, the SyncFail hooks run, and the operation ends Failed with
// the message "operation terminated" (sync.ErrTerminated), recorded as
// the app's last operation and not retried. It returns ErrNoOperation when no
// sync of the app runs in this engine.
func (ops Ops) Terminate(key v1alpha1.AppKey) error {
	e := ops.e

	e.ops.mu.Lock()
	op, ok := e.ops.ops[e.instanceName(key)]
	e.ops.mu.Unlock()
	if !ok {
		return ErrNoOperation
	}
	op.once.Do(func() { close(op.terminate) })
	return nil
}
