package hooks

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kubegitops/gitops/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Phase is a sync phase.
type Phase string

// The sync phases, in the order a sync runs them (SyncFail only on failure).
const (
	PreSync  Phase = "PreSync"
	Sync     Phase = "Sync"
	PostSync Phase = "PostSync"
	SyncFail Phase = "SyncFail"
	// Skip marks an object that is neither applied nor run.
	Skip Phase = "Skip"
	// PreDelete and PostDelete hooks run when an application is deleted,
	// never during a sync (Argo CD's deletion hooks).
	PreDelete  Phase = "PreDelete"
	PostDelete Phase = "PostDelete"
)

// Order returns the phase's position in a sync: PreSync -1, Sync 0,
// PostSync 1, SyncFail 2 (Argo CD's numbering, so plans sort alike).
func (p Phase) Order() int {
	switch p {
	case PreSync:
		return -1
	case PostSync:
		return 1
	case SyncFail:
		return 2
	}
	return 0
}

// DeletePolicy says when a hook object is deleted.
type DeletePolicy string

// The delete policies.
const (
	// HookSucceeded deletes the hook once it succeeded.
	HookSucceeded DeletePolicy = "HookSucceeded"
	// HookFailed deletes the hook once it failed.
	HookFailed DeletePolicy = "HookFailed"
	// BeforeHookCreation deletes an existing hook of the same name before
	// the hook is created again; the default.
	BeforeHookCreation DeletePolicy = "BeforeHookCreation"
)

// Finalizer is put on every hook so that it cannot vanish (a Job's TTL, a
// garbage collection) before the sync has read its result. It is Argo CD's
// name, so a hook left by either controller is released by the other.
const Finalizer = "argocd.argoproj.io/hook-finalizer"

// LegacyFinalizer is the hook finalizer of earlier versions of this
// library. It is no longer added, but still removed wherever Finalizer is,
// so a hook created before an upgrade is not held forever.
const LegacyFinalizer = "gitops.kubegitops.io/hook-finalizer"

// IsFinalizer reports whether f is a hook finalizer, Finalizer or
// LegacyFinalizer.
func IsFinalizer(f string) bool { return f == Finalizer || f == LegacyFinalizer }

// Info is what the annotations say about one object.
type Info struct {
	// Hook reports whether the object is a hook. A hook is never applied as
	// an ordinary resource and never counts toward sync status or health.
	Hook bool
	// Phases are the phases the hook runs in, in annotation order; empty for
	// ordinary resources and for hooks of no phase we run.
	Phases []Phase
	// Skip reports that the object is neither applied nor run.
	Skip bool
	// DeletePolicies are the hook's delete policies (BeforeHookCreation when
	// none was given); empty for ordinary resources.
	DeletePolicies []DeletePolicy
	// Wave orders the object within its phase.
	Wave int
	// FromHelm reports that the hook came from helm.sh/hook.
	FromHelm bool
}

// HasPhase reports whether the hook runs in p.
func (i Info) HasPhase(p Phase) bool { return slices.Contains(i.Phases, p) }

// HasDeletePolicy reports whether the hook has policy p.
func (i Info) HasDeletePolicy(p DeletePolicy) bool { return slices.Contains(i.DeletePolicies, p) }

// Applied reports whether the object is applied as an ordinary resource.
func (i Info) Applied() bool { return !i.Hook && !i.Skip }

// Of reads obj's hook, delete-policy and wave annotations by the rules of
// the package documentation. Errors name the object and the annotation.
func Of(obj *unstructured.Unstructured) (Info, error) {
	ann := obj.GetAnnotations()
	var info Info
	var err error
	if info.Wave, err = Wave(obj); err != nil {
		return Info{}, err
	}
	if v, ok := ann[resource.AnnotationHook]; ok {
		phases, skip, err := parseArgoPhases(v)
		if err != nil {
			return Info{}, fmt.Errorf("%s: annotation %s: %w", resource.KeyOf(obj), resource.AnnotationHook, err)
		}
		info.Skip = skip
		info.Hook = !skip
		info.Phases = phases
	} else if v, ok := ann[resource.AnnotationHelmHook]; ok {
		phases, hook := mapHelmEvents(v)
		info.Hook, info.Phases, info.FromHelm = hook, phases, hook
	}
	if !info.Hook {
		return info, nil
	}
	if info.DeletePolicies, err = deletePolicies(ann); err != nil {
		return Info{}, fmt.Errorf("%s: %w", resource.KeyOf(obj), err)
	}
	return info, nil
}

func splitCSV(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

func parseArgoPhases(v string) (phases []Phase, skip bool, err error) {
	for _, s := range splitCSV(v) {
		switch p := Phase(s); p {
		case PreSync, Sync, PostSync, SyncFail, PreDelete, PostDelete:
			if !slices.Contains(phases, p) {
				phases = append(phases, p)
			}
		case Skip:
			skip = true
		default:
			return nil, false, fmt.Errorf("unknown hook phase %q (want PreSync, Sync, PostSync, SyncFail, Skip, PreDelete or PostDelete)", s)
		}
	}
	if skip && len(phases) > 0 {
		return nil, false, fmt.Errorf("Skip cannot be combined with other phases in %q", v)
	}
	if !skip && len(phases) == 0 {
		return nil, false, fmt.Errorf("no phase in %q", v)
	}
	return phases, skip, nil
}

// mapHelmEvents maps Helm hook events to phases. hook is false only when the
// events are all crd-install (an ordinary resource).
func mapHelmEvents(v string) (phases []Phase, hook bool) {
	for _, e := range splitCSV(v) {
		var p Phase
		switch e {
		case "crd-install":
			continue
		case "pre-install", "pre-upgrade":
			p = PreSync
		case "post-install", "post-upgrade":
			p = PostSync
		default: // test, pre/post-delete, pre/post-rollback: never run by a sync
			hook = true
			continue
		}
		hook = true
		if !slices.Contains(phases, p) {
			phases = append(phases, p)
		}
	}
	return phases, hook
}

func deletePolicies(ann map[string]string) ([]DeletePolicy, error) {
	var out []DeletePolicy
	add := func(p DeletePolicy) {
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	for _, s := range splitCSV(ann[resource.AnnotationHookDeletePolicy]) {
		switch p := DeletePolicy(s); p {
		case HookSucceeded, HookFailed, BeforeHookCreation:
			add(p)
		default:
			return nil, fmt.Errorf("annotation %s: unknown delete policy %q", resource.AnnotationHookDeletePolicy, s)
		}
	}
	for _, s := range splitCSV(ann[resource.AnnotationHelmHookDeletePolicy]) {
		switch s {
		case "hook-succeeded":
			add(HookSucceeded)
		case "hook-failed":
			add(HookFailed)
		case "before-hook-creation":
			add(BeforeHookCreation)
		default:
			return nil, fmt.Errorf("annotation %s: unknown delete policy %q", resource.AnnotationHelmHookDeletePolicy, s)
		}
	}
	if len(out) == 0 {
		out = append(out, BeforeHookCreation)
	}
	return out, nil
}

// Wave returns obj's sync wave: argocd.argoproj.io/sync-wave, else
// helm.sh/hook-weight, else 0.
func Wave(obj *unstructured.Unstructured) (int, error) {
	ann := obj.GetAnnotations()
	for _, key := range []string{resource.AnnotationSyncWave, resource.AnnotationHelmHookWeight} {
		v, ok := ann[key]
		if !ok {
			continue
		}
		w, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			return 0, fmt.Errorf("%s: annotation %s: %q is not an integer", resource.KeyOf(obj), key, v)
		}
		return w, nil
	}
	return 0, nil
}

// Name returns the name of a hook created from obj's generateName in one
// sync: generateName + "<first 7 of revision>-<phase>-<unix seconds of the
// sync's start>", lower-cased (Argo CD's scheme), so a retried step of the
// same sync finds the hook it created, and the next sync creates a new one.
// The revision part is the first source's commit without an algorithm
// prefix ("sha256:" of a folder's content hash) and only its letters and
// digits, so the name is always a valid object name. Objects with a name
// keep it.
func Name(obj *unstructured.Unstructured, revision string, phase Phase, syncStarted time.Time) string {
	if n := obj.GetName(); n != "" {
		return n
	}
	rev, _, _ := strings.Cut(revision, ",")
	if i := strings.LastIndex(rev, ":"); i >= 0 {
		rev = rev[i+1:]
	}
	rev = strings.Map(func(r rune) rune {
		if (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') {
			return r
		}
		return -1
	}, rev)
	if len(rev) > 7 {
		rev = rev[:7]
	}
	suffix := strings.ToLower(fmt.Sprintf("%s-%s-%d", rev, phase, syncStarted.Unix()))
	return obj.GetGenerateName() + suffix
}
