package diff

import (
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubegitops/gitops/resource"
)

// Mode names how the predicted live object is computed from the desired and
// live objects.
type Mode string

const (
	// ModeAuto lets each object's annotations choose, as Argo CD does:
	// compare-options ServerSideDiff=true selects ModeServerSide,
	// sync-options ServerSideApply=true selects ModeStructuredMerge, and
	// anything else is ModeThreeWay.
	ModeAuto Mode = ""
	// ModeThreeWay predicts what client-side apply (kubectl apply) would
	// write: the desired object merged into live, deleting the fields that
	// the last-applied annotation holds and desired no longer does. Built-in
	// kinds merge lists by their patch merge keys; other kinds replace
	// lists. Without the annotation it is a two-way merge that cannot see
	// removed fields. Needs nothing from the cluster.
	ModeThreeWay Mode = "ThreeWay"
	// ModeStructuredMerge predicts what server-side apply with
	// Options.FieldManager would write, locally, with structured-merge-diff
	// and OpenAPI models (Options.Schema). Fields owned by other managers
	// and absent from our previous apply are not ours to revert. Removals
	// and ownership need the live object's managedFields; without them it
	// degrades to a two-way merge.
	ModeStructuredMerge Mode = "StructuredMerge"
	// ModeServerSide asks the API server: a server-side apply dry run with
	// Options.FieldManager (Options.DryRun). Results are cached on (desired
	// hash, live resourceVersion).
	ModeServerSide Mode = "ServerSide"
)

// DefaultFieldManager is the server-side apply field manager used when
// Options.FieldManager is empty.
const DefaultFieldManager = "gitops"

// Options configure a Differ. Start from DefaultOptions and change fields.
type Options struct {
	// Mode is the application-wide mode. An object's compare-options
	// ServerSideDiff=true|false and sync-options ServerSideApply=true|false
	// annotations override it, as in Argo CD. Default ModeAuto.
	Mode Mode
	// CompareOptions are application-level compare options (for example
	// "ServerSideDiff=true,IgnoreExtraneous"); an object's
	// argocd.argoproj.io/compare-options annotation beats them key by key.
	CompareOptions resource.Options
	// SyncOptions are application-level sync options; ServerSideApply
	// (an object's sync-options annotation beats it) and
	// RespectIgnoreDifferences (see Result.ResetIgnored) matter to the
	// diff.
	SyncOptions resource.Options
	// FieldManager is our server-side apply field manager. Default
	// DefaultFieldManager.
	FieldManager string
	// MigratedManagers are field managers whose fields count as ours in
	// ModeStructuredMerge, as after a client-side to server-side apply
	// migration. Default kubectl-client-side-apply and before-first-apply.
	MigratedManagers []string
	// HonourOtherManagers, in ModeStructuredMerge, leaves alone the fields
	// that desired sets but that another applier, or a manager writing
	// through a subresource (an HPA's replicas via scale), owns and we do
	// not: the field is not ours to revert. Fields another manager took by
	// a plain update (kubectl edit) are drift and stay compared. Default
	// true.
	HonourOtherManagers bool
	// Tracking names the tracking and instance annotations, which are never
	// compared. Default resource.DefaultTracking().
	Tracking resource.Tracking
	// CompareAllStatus compares the status of every kind but those of
	// IgnoreStatus (Argo CD's ignoreResourceStatusField none, or crd with
	// IgnoreStatus holding CustomResourceDefinition). Default false:
	// status is ignored but for CompareStatus's kinds.
	CompareAllStatus bool
	// IgnoreStatus are kinds whose status is ignored with CompareAllStatus.
	IgnoreStatus []schema.GroupKind
	// CompareStatus lists the kinds whose status is compared. By default
	// status is ignored for every kind (Argo CD's default "all").
	CompareStatus []schema.GroupKind
	// IgnoreAggregatedRoles ignores the rules of a ClusterRole that has an
	// aggregationRule: the aggregation controller writes them from the
	// roles it selects (Argo CD's resource.compareoptions
	// ignoreAggregatedRoles). Default false.
	IgnoreAggregatedRoles bool
	// Types, when set, is the cache of built-in kinds' type trees this
	// Differ reads and fills; Differs that share one build each kind's
	// tree once (an engine of 1,000 apps kept 100 MB of identical trees,
	// one set per app). Nil: the Differ keeps its own.
	Types *TypeCache
	// Rules holds compiled jq expressions of ignore rules that Differs
	// share (every app's Differ compiles the system rules). Nil: each
	// Differ compiles its own.
	Rules *RuleCache
	// KnownTypeFields are fields of other kinds (custom resources) that hold
	// built-in types, normalised as those types (Argo CD's
	// knownTypeFields). An unknown type makes New fail.
	KnownTypeFields []KnownTypeField
	// IgnoreRules are the application's ignoreDifferences.
	IgnoreRules []IgnoreRule
	// SystemIgnoreRules apply to every application. Default
	// DefaultSystemIgnoreRules().
	SystemIgnoreRules []IgnoreRule
	// JQTimeout bounds the evaluation of one jq path expression on one
	// object. Default 1 s, as in Argo CD.
	JQTimeout time.Duration
	// Schema supplies OpenAPI models for ModeStructuredMerge, for the
	// managedFieldsManagers rules and for ModeServerSide's webhook filter.
	// Default BuiltinSchema(): the built-in kinds, offline. Use
	// ClusterSchema for the cluster's /openapi/v3 (CRDs included).
	Schema SchemaSource
	// DryRun runs server-side apply dry runs for ModeServerSide. Nil makes
	// ModeServerSide an error. See NewDryRunApplier.
	DryRun DryRunApplier
	// ServerSideCacheSize bounds the number of dry-run results kept.
	// Default 4096; 0 disables the cache.
	ServerSideCacheSize int
	// IncludeMutationWebhook keeps, in ModeServerSide, the changes that the
	// dry run shows but that our field manager does not own (mutating
	// webhooks, defaulting). Default false: such fields keep their live
	// values. The object's compare option IncludeMutationWebhook=true
	// overrides.
	IncludeMutationWebhook bool
	// Color adds ANSI colours to Result.Text.
	Color bool
	// ContextLines is the number of unchanged lines around each change in
	// Result.Text. Default 3.
	ContextLines int
	// Logger receives debug messages. Default logr.Discard().
	Logger logr.Logger
}

// DefaultOptions returns the options used when none are given.
func DefaultOptions() Options {
	return Options{
		FieldManager:        DefaultFieldManager,
		MigratedManagers:    []string{"kubectl-client-side-apply", "before-first-apply"},
		HonourOtherManagers: true,
		Tracking:            resource.DefaultTracking(),
		SystemIgnoreRules:   DefaultSystemIgnoreRules(),
		JQTimeout:           time.Second,
		ServerSideCacheSize: 4096,
		ContextLines:        3,
		Logger:              logr.Discard(),
	}
}

// DefaultSystemIgnoreRules returns the rules every application gets: the CA
// bundles that cert controllers inject into webhook configurations, API
// services and CRD conversion webhooks.
func DefaultSystemIgnoreRules() []IgnoreRule {
	return []IgnoreRule{
		{Group: "admissionregistration.k8s.io", Kind: "MutatingWebhookConfiguration", JQPathExpressions: []string{".webhooks[]?.clientConfig.caBundle"}},
		{Group: "admissionregistration.k8s.io", Kind: "ValidatingWebhookConfiguration", JQPathExpressions: []string{".webhooks[]?.clientConfig.caBundle"}},
		{Group: "apiregistration.k8s.io", Kind: "APIService", JSONPointers: []string{"/spec/caBundle"}},
		{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition", JSONPointers: []string{"/spec/conversion/webhook/clientConfig/caBundle"}},
	}
}

func (o Options) withDefaults() Options {
	d := DefaultOptions()
	if o.FieldManager == "" {
		o.FieldManager = d.FieldManager
	}
	if o.MigratedManagers == nil {
		o.MigratedManagers = d.MigratedManagers
	}
	if o.Tracking.AnnotationKey == "" {
		o.Tracking.AnnotationKey = d.Tracking.AnnotationKey
	}
	if o.Tracking.InstanceAnnotationKey == "" {
		o.Tracking.InstanceAnnotationKey = d.Tracking.InstanceAnnotationKey
	}
	if o.JQTimeout <= 0 {
		o.JQTimeout = d.JQTimeout
	}
	if o.ServerSideCacheSize < 0 {
		o.ServerSideCacheSize = 0
	}
	if o.ContextLines <= 0 {
		o.ContextLines = d.ContextLines
	}
	if o.Logger.GetSink() == nil {
		o.Logger = d.Logger
	}
	if o.Schema == nil {
		o.Schema = BuiltinSchema()
	}
	return o
}
