package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/appstatus"
	"github.com/kubegitops/gitops/health/actions"
	"github.com/kubegitops/gitops/resource"
)

// ActionFieldManagerPrefix starts the field manager of every change a
// resource action writes: "gitops-action-<action>", so the fields an action
// set are owned by it alone and never by the sync's manager.
const ActionFieldManagerPrefix = "gitops-action-"

// ActionEventReason is the reason of the Kubernetes Event recorded on the
// object an action ran on.
const ActionEventReason = "ResourceActionRan"

// actionRequestTimeout bounds each request an action sends.
const actionRequestTimeout = 30 * time.Second

// ErrNotInApp is returned for an action on an object the app does not
// track.
var ErrNotInApp = errors.New("object is not managed by the application")

// ActionChange is one object an action changed or created.
type ActionChange struct {
	// Operation is patch or create.
	Operation actions.Operation `json:"operation"`
	// Key names the object.
	Key resource.Key `json:"key"`
}

// ActionResult is what RunAction applied.
type ActionResult struct {
	// Action is the action's name.
	Action string `json:"action"`
	// Object is the object the action ran on.
	Object resource.Key `json:"object"`
	// Changes are the objects patched or created, in order; empty when
	// the action changed nothing.
	Changes []ActionChange `json:"changes,omitempty"`
}

// Actions returns the actions the live object key of app offers (Argo CD's
// discovery.lua of its kind, built-in or from Options.Actions). The object
// must be tracked by app. Errors name the object; a kind without actions
// wraps actions.ErrNoActions.
func (ops Ops) Actions(ctx context.Context, app *Application, key resource.Key) ([]actions.Action, error) {
	e := ops.e

	t, err := e.actionTarget(ctx, app, key)
	if err != nil {
		return nil, err
	}
	return e.parts().actions.Discover(ctx, t.live)
}

// RunAction runs a resource action on the live object key of app, as Argo
// CD's "run action" does, and applies what it returns:
//
//  1. the object is read fresh from the API server and must be tracked by
//     app;
//  2. the action runs in the Lua sandbox (actions.Runner.Run: offered and
//     enabled by discovery, parameters declared, result validated);
//  3. every impacted object is checked against the app's project (kind and
//     destination namespace, as for a sync) and the engine's Policies: an
//     action cannot create what the project forbids;
//  4. every change is sent as a server-side dry run, then for real: a
//     patch as a JSON merge patch carrying the object's resourceVersion
//     (a concurrent change makes it fail, not overwrite: when the dry run
//     meets one, nothing was written, and the action runs again from step
//     1 on a fresh read, up to 3 runs in all), its status part
//     through the status subresource, a create as a create; all with the
//     field manager ActionFieldManagerPrefix+action, through the
//     service account the project names for the destination, if any;
//  5. the run is counted in gitops_resource_actions_total, sent to
//     Options.Notify as NotifyResourceActionRan and recorded as a
//     Kubernetes Event (reason ActionEventReason) on the object.
//
// Any failure before step 4's real writes leaves the cluster untouched;
// errors name the object and the action. Created objects carry no
// tracking id: a sync neither adopts nor prunes them.
func (ops Ops) RunAction(ctx context.Context, app *Application, key resource.Key, action string, params map[string]string) (res ActionResult, err error) {
	e := ops.e

	defer func() { e.metrics.Action(app.Name, action, err) }()
	for attempt := 1; ; attempt++ {
		res, err = e.runAction(ctx, app, key, action, params)
		var stale *staleReadError
		if attempt < actionAttempts && errors.As(err, &stale) && ctx.Err() == nil {
			continue // nothing was written: read afresh, run again
		}
		return res, err
	}
}

// actionAttempts bounds how often RunAction runs an action whose dry run
// met a change made since its read (a controller updating the object's
// status, say).
const actionAttempts = 3

// staleReadError is a dry run refused because the object changed since
// the action read it (a conflict on its resourceVersion): nothing was
// written, so the action may run again on a fresh read.
type staleReadError struct{ err error }

// Error is the dry run's error as it was.
func (e *staleReadError) Error() string { return e.err.Error() }

// Unwrap returns the dry run's error (an API conflict).
func (e *staleReadError) Unwrap() error { return e.err }

// runAction is one run of RunAction: read, run, admit, dry-run, write.
func (e *Engine) runAction(ctx context.Context, app *Application, key resource.Key, action string, params map[string]string) (res ActionResult, err error) {
	res = ActionResult{Action: action, Object: key}
	t, err := e.actionTarget(ctx, app, key)
	if err != nil {
		return res, err
	}
	out, err := e.parts().actions.Run(ctx, t.live, action, params)
	if err != nil {
		return res, err
	}
	fail := func(err error) (ActionResult, error) {
		return res, fmt.Errorf("%s: action %s: %w", key, action, err)
	}
	admit := e.admission(t.proj, app)
	type write struct {
		im  actions.Impacted
		ri  dynamic.ResourceInterface
		key resource.Key
	}
	writes := make([]write, 0, len(out.Impacted))
	for _, im := range out.Impacted {
		obj := im.Object
		gvr, namespaced, err := resourceOf(t.cs, obj.GroupVersionKind())
		if err != nil {
			return fail(err)
		}
		if im.StatusPatch != nil && !hasStatusSubresource(t.config, gvr) {
			// Without a status subresource the status is part of the
			// object: one patch carries both.
			if im.Patch, err = mergeJSONObjects(im.Patch, im.StatusPatch); err != nil {
				return fail(err)
			}
			im.StatusPatch = nil
		}
		if im.Operation == actions.OperationCreate && namespaced && obj.GetNamespace() == "" {
			obj.SetNamespace(t.live.GetNamespace())
		}
		if err := admit(ctx, obj, namespaced, false); err != nil {
			return fail(err)
		}
		var ri dynamic.ResourceInterface = t.client.Resource(gvr)
		if namespaced {
			ri = t.client.Resource(gvr).Namespace(obj.GetNamespace())
		}
		writes = append(writes, write{im: im, ri: ri, key: resource.KeyOf(obj)})
	}
	manager := ActionFieldManagerPrefix + action
	for _, dryRun := range []bool{true, false} {
		var dr []string
		if dryRun {
			dr = []string{metav1.DryRunAll}
		}
		for _, w := range writes {
			wctx, cancel := context.WithTimeout(ctx, actionRequestTimeout)
			err := applyImpacted(wctx, w.ri, w.im, manager, dr)
			cancel()
			if err != nil {
				if dryRun {
					err = fmt.Errorf("dry run of %s %s: %w", w.im.Operation, w.key, err)
					if apierrors.IsConflict(err) {
						err = &staleReadError{err: err}
					}
					return fail(err)
				}
				return fail(fmt.Errorf("%s %s (after %d of %d changes): %w", w.im.Operation, w.key, len(res.Changes), len(writes), err))
			}
			if !dryRun {
				res.Changes = append(res.Changes, ActionChange{Operation: w.im.Operation, Key: w.key})
			}
		}
	}
	msg := fmt.Sprintf("action %s ran on %s", action, key)
	e.notify(appstatus.Notification{Type: appstatus.NotifyResourceActionRan, Key: v1alpha1.KeyOf(app), Message: msg})
	if err := recordActionEvent(ctx, t.config, t.live, app.Name, msg); err != nil {
		e.opts.Log.Error(err, "recording the action's event", "app", app.Name, "object", key.String(), "action", action)
	}
	return res, nil
}

func applyImpacted(ctx context.Context, ri dynamic.ResourceInterface, im actions.Impacted, manager string, dryRun []string) error {
	obj := im.Object
	switch im.Operation {
	case actions.OperationCreate:
		_, err := ri.Create(ctx, obj, metav1.CreateOptions{FieldManager: manager, DryRun: dryRun})
		return err
	default:
		if im.Patch != nil {
			if _, err := ri.Patch(ctx, obj.GetName(), types.MergePatchType, im.Patch, metav1.PatchOptions{FieldManager: manager, DryRun: dryRun}); err != nil {
				return err
			}
		}
		if im.StatusPatch != nil {
			if _, err := ri.Patch(ctx, obj.GetName(), types.MergePatchType, im.StatusPatch, metav1.PatchOptions{FieldManager: manager, DryRun: dryRun}, "status"); err != nil {
				return fmt.Errorf("status: %w", err)
			}
		}
		return nil
	}
}

// actionTarget is what an action needs about its object.
type actionTarget struct {
	proj   *Project
	cs     *clusterState
	config *rest.Config
	client dynamic.Interface
	live   *unstructured.Unstructured
}

func (e *Engine) actionTarget(ctx context.Context, app *Application, key resource.Key) (actionTarget, error) {
	var t actionTarget
	var err error
	wrap := func(err error) error { return fmt.Errorf("%s: %w", key, err) }
	if t.proj, err = e.project(app); err != nil {
		return t, wrap(err)
	}
	if t.cs, err = e.cluster(ctx, app.Spec.Destination); err != nil {
		return t, wrap(err)
	}
	if !slices.ContainsFunc(t.cs.Cache().Managed(e.instanceOf(app)), func(o *unstructured.Unstructured) bool { return resource.KeyOf(o) == key }) {
		return t, wrap(fmt.Errorf("%w %s", ErrNotInApp, app.Name))
	}
	t.config = e.clusters.ClientConfig(t.cs)
	ns, name, ok, err := e.impersonate(t.proj, app)
	if err != nil {
		return t, wrap(err)
	}
	if ok {
		t.config = ImpersonatedConfig(t.config, ns, name)
	}
	if t.client, err = dynamic.NewForConfig(t.config); err != nil {
		return t, wrap(err)
	}
	cached, _ := t.cs.Cache().Get(key)
	if cached == nil {
		return t, wrap(fmt.Errorf("%w %s", ErrNotInApp, app.Name))
	}
	gvr, namespaced, err := resourceOf(t.cs, cached.GroupVersionKind())
	if err != nil {
		return t, wrap(err)
	}
	ri := t.client.Resource(gvr).Namespace("")
	if namespaced {
		ri = t.client.Resource(gvr).Namespace(key.Namespace)
	}
	gctx, cancel := context.WithTimeout(ctx, actionRequestTimeout)
	defer cancel()
	if t.live, err = ri.Get(gctx, key.Name, metav1.GetOptions{}); err != nil {
		return t, wrap(err)
	}
	return t, nil
}

// resourceOf finds the API resource serving gvk on the cluster.
func resourceOf(cs *clusterState, gvk schema.GroupVersionKind) (schema.GroupVersionResource, bool, error) {
	for _, l := range cs.Cache().APIResources() {
		if l.GroupVersion != gvk.GroupVersion().String() {
			continue
		}
		for _, r := range l.APIResources {
			if r.Kind == gvk.Kind && !strings.Contains(r.Name, "/") {
				return gvk.GroupVersion().WithResource(r.Name), r.Namespaced, nil
			}
		}
	}
	return schema.GroupVersionResource{}, false, fmt.Errorf("the cluster serves no %s", gvk)
}

// hasStatusSubresource asks the API server whether it serves gvr's status
// subresource (the cache's discovery lists kinds, not subresources). When
// the answer cannot be had, it says true: the status patch is then sent to
// /status, and its dry run fails loudly rather than a change to the main
// resource being dropped silently.
func hasStatusSubresource(cfg *rest.Config, gvr schema.GroupVersionResource) bool {
	cfg = rest.CopyConfig(cfg)
	cfg.Timeout = actionRequestTimeout
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return true
	}
	list, err := dc.ServerResourcesForGroupVersion(gvr.GroupVersion().String())
	if err != nil {
		return true
	}
	for _, r := range list.APIResources {
		if r.Name == gvr.Resource+"/status" {
			return true
		}
	}
	return false
}

// mergeJSONObjects merges the top-level keys of two JSON objects (b's
// win); a nil a is an empty object.
func mergeJSONObjects(a, b []byte) ([]byte, error) {
	m := map[string]any{}
	if a != nil {
		if err := json.Unmarshal(a, &m); err != nil {
			return nil, err
		}
	}
	var mb map[string]any
	if err := json.Unmarshal(b, &mb); err != nil {
		return nil, err
	}
	for k, v := range mb {
		m[k] = v
	}
	return json.Marshal(m)
}

// recordActionEvent writes a Normal Event about obj.
func recordActionEvent(ctx context.Context, cfg *rest.Config, obj *unstructured.Unstructured, app, msg string) error {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	ns := obj.GetNamespace()
	if ns == "" {
		ns = metav1.NamespaceDefault
	}
	now := metav1.Now()
	ev := &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{GenerateName: obj.GetName() + ".", Namespace: ns, Labels: map[string]string{"app.kubernetes.io/managed-by": "gitops"}},
		InvolvedObject: corev1.ObjectReference{APIVersion: obj.GetAPIVersion(), Kind: obj.GetKind(), Namespace: obj.GetNamespace(),
			Name: obj.GetName(), UID: obj.GetUID(), ResourceVersion: obj.GetResourceVersion()},
		Reason: ActionEventReason, Message: msg + " (application " + app + ")", Type: corev1.EventTypeNormal,
		Source: corev1.EventSource{Component: "gitops"}, FirstTimestamp: now, LastTimestamp: now, Count: 1,
	}
	ectx, cancel := context.WithTimeout(ctx, actionRequestTimeout)
	defer cancel()
	_, err = cs.CoreV1().Events(ns).Create(ectx, ev, metav1.CreateOptions{})
	return err
}
