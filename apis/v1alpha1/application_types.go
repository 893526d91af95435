package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Application is an Argo CD Application (argoproj.io/v1alpha1): the subset
// of its spec this engine implements, with Argo CD's field names, so that
// Application manifests written for Argo CD load unchanged. Fields Argo CD
// has and this engine does not implement are refused by LoadApplications
// rather than silently ignored.
//
// +kubebuilder:object:root=true
type Application struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              ApplicationSpec `json:"spec"`
	// Status is what the controller observed and did (Argo CD's shape).
	// Loaders read it leniently: fields this model lacks are dropped, so
	// the output of `kubectl get application -o yaml` loads.
	Status ApplicationStatus `json:"status,omitzero"`
	// Operation is a requested or running operation (a sync), read
	// leniently like Status.
	Operation *Operation `json:"operation,omitempty"`
}

// ApplicationList is a list of Applications.
//
// +kubebuilder:object:root=true
type ApplicationList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Application `json:"items"`
}

// ApplicationSpec is what an application deploys, where and how.
type ApplicationSpec struct {
	// Project names the AppProject whose limits apply. Default "default".
	Project string `json:"project,omitempty"`
	// Source is the single source of desired state.
	Source *ApplicationSource `json:"source,omitempty"`
	// Sources are several sources whose objects are joined, rendered in
	// order; the app's revision lists each source's revision, comma
	// separated. A source with Ref exposes its repository's files to the
	// others' helm.valueFiles as "$REF/path", as in Argo CD.
	Sources []ApplicationSource `json:"sources,omitempty"`
	// Destination is the cluster and namespace to deploy to.
	Destination ApplicationDestination `json:"destination"`
	// SyncPolicy says when and how to sync.
	SyncPolicy *SyncPolicy `json:"syncPolicy,omitempty"`
	// IgnoreDifferences are fields the comparison ignores.
	IgnoreDifferences []ResourceIgnoreDifferences `json:"ignoreDifferences,omitempty"`
	// RevisionHistoryLimit bounds the synced revisions kept. Default 10.
	RevisionHistoryLimit *int64 `json:"revisionHistoryLimit,omitempty"`
	// Info are name and value pairs shown with the application (links,
	// owners); they change nothing the engine does, as in Argo CD.
	Info []Info `json:"info,omitempty"`
}

// ApplicationSource is one source of desired state: a path in a Git
// repository (or a Helm chart), and how to render it.
type ApplicationSource struct {
	RepoURL        string `json:"repoURL"`
	Path           string `json:"path,omitempty"`
	TargetRevision string `json:"targetRevision,omitempty"`
	// Chart names a Helm chart (instead of Path) in the Helm chart
	// repository or OCI registry at RepoURL ("https://charts.example.com",
	// "oci://registry.example.com/charts", or "registry.example.com/charts"
	// with credentials that set EnableOCI). TargetRevision is then a chart
	// version or a semver constraint ("1.2.x", "^1", "*"), and the resolved
	// version is the source's revision.
	Chart     string                      `json:"chart,omitempty"`
	Helm      *ApplicationSourceHelm      `json:"helm,omitempty"`
	Kustomize *ApplicationSourceKustomize `json:"kustomize,omitempty"`
	Directory *ApplicationSourceDirectory `json:"directory,omitempty"`
	Plugin    *ApplicationSourcePlugin    `json:"plugin,omitempty"`
	// Ref names this source so that other sources can use its files
	// ("$ref/values.yaml", from the repository's root); a source with Ref
	// and no Path or Chart renders nothing. A chart source cannot have a
	// Ref, and a "$ref/" path that climbs out of the repository is refused.
	Ref string `json:"ref,omitempty"`
	// Name names the source for people.
	Name string `json:"name,omitempty"`
}

// ApplicationSourceHelm are Helm options, as `helm template` takes them.
type ApplicationSourceHelm struct {
	ValueFiles              []string              `json:"valueFiles,omitempty"`
	Parameters              []HelmParameter       `json:"parameters,omitempty"`
	FileParameters          []HelmFileParameter   `json:"fileParameters,omitempty"`
	ReleaseName             string                `json:"releaseName,omitempty"`
	Values                  string                `json:"values,omitempty"`
	ValuesObject            *runtime.RawExtension `json:"valuesObject,omitempty"`
	IgnoreMissingValueFiles bool                  `json:"ignoreMissingValueFiles,omitempty"`
	PassCredentials         bool                  `json:"passCredentials,omitempty"`
	SkipCrds                bool                  `json:"skipCrds,omitempty"`
	SkipTests               bool                  `json:"skipTests,omitempty"`
	SkipSchemaValidation    bool                  `json:"skipSchemaValidation,omitempty"`
	Version                 string                `json:"version,omitempty"`
	KubeVersion             string                `json:"kubeVersion,omitempty"`
	APIVersions             []string              `json:"apiVersions,omitempty"`
	Namespace               string                `json:"namespace,omitempty"`
}

// HelmParameter is a --set (or, with ForceString, --set-string) value.
type HelmParameter struct {
	Name        string `json:"name"`
	Value       string `json:"value"`
	ForceString bool   `json:"forceString,omitempty"`
}

// HelmFileParameter is a --set-file value: a path inside the repository.
type HelmFileParameter struct {
	Name string `json:"name"`
	Path string `json:"path"`
}

// ApplicationSourceKustomize are Argo CD's overrides of a kustomization.
type ApplicationSourceKustomize struct {
	NamePrefix              string             `json:"namePrefix,omitempty"`
	NameSuffix              string             `json:"nameSuffix,omitempty"`
	Images                  []string           `json:"images,omitempty"`
	CommonLabels            map[string]string  `json:"commonLabels,omitempty"`
	CommonAnnotations       map[string]string  `json:"commonAnnotations,omitempty"`
	ForceCommonLabels       bool               `json:"forceCommonLabels,omitempty"`
	ForceCommonAnnotations  bool               `json:"forceCommonAnnotations,omitempty"`
	Namespace               string             `json:"namespace,omitempty"`
	Replicas                []KustomizeReplica `json:"replicas,omitempty"`
	Patches                 []KustomizePatch   `json:"patches,omitempty"`
	Components              []string           `json:"components,omitempty"`
	IgnoreMissingComponents bool               `json:"ignoreMissingComponents,omitempty"`
	LabelWithoutSelector    bool               `json:"labelWithoutSelector,omitempty"`
	Version                 string             `json:"version,omitempty"`
	KubeVersion             string             `json:"kubeVersion,omitempty"`
	APIVersions             []string           `json:"apiVersions,omitempty"`
}

// KustomizeReplica overrides the replicas of a workload by name.
type KustomizeReplica struct {
	Name  string             `json:"name"`
	Count intstr.IntOrString `json:"count"`
}

// KustomizePatch is a patch, inline or from a file, with an optional target.
type KustomizePatch struct {
	Path    string             `json:"path,omitempty"`
	Patch   string             `json:"patch,omitempty"`
	Target  *KustomizeSelector `json:"target,omitempty"`
	Options map[string]bool    `json:"options,omitempty"`
}

// KustomizeSelector selects the objects a patch applies to.
type KustomizeSelector struct {
	Group              string `json:"group,omitempty"`
	Version            string `json:"version,omitempty"`
	Kind               string `json:"kind,omitempty"`
	Name               string `json:"name,omitempty"`
	Namespace          string `json:"namespace,omitempty"`
	LabelSelector      string `json:"labelSelector,omitempty"`
	AnnotationSelector string `json:"annotationSelector,omitempty"`
}

// ApplicationSourceDirectory are options of a plain folder of manifests.
type ApplicationSourceDirectory struct {
	Recurse bool                     `json:"recurse,omitempty"`
	Jsonnet ApplicationSourceJsonnet `json:"jsonnet,omitempty"`
	Exclude string                   `json:"exclude,omitempty"`
	Include string                   `json:"include,omitempty"`
}

// ApplicationSourceJsonnet are Jsonnet options.
type ApplicationSourceJsonnet struct {
	ExtVars []JsonnetVar `json:"extVars,omitempty"`
	TLAs    []JsonnetVar `json:"tlas,omitempty"`
	Libs    []string     `json:"libs,omitempty"`
}

// JsonnetVar is an external variable or top-level argument; Code says the
// value is Jsonnet code rather than a string.
type JsonnetVar struct {
	Name  string `json:"name"`
	Value string `json:"value"`
	Code  bool   `json:"code,omitempty"`
}

// ApplicationSourcePlugin names a config management plugin.
type ApplicationSourcePlugin struct {
	Name       string                             `json:"name,omitempty"`
	Env        []EnvEntry                         `json:"env,omitempty"`
	Parameters []ApplicationSourcePluginParameter `json:"parameters,omitempty"`
}

// EnvEntry is an environment variable for a plugin.
type EnvEntry struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// ApplicationSourcePluginParameter is a plugin parameter: a string, a map
// or an array.
type ApplicationSourcePluginParameter struct {
	Name   string            `json:"name"`
	String *string           `json:"string,omitempty"`
	Map    map[string]string `json:"map,omitempty"`
	Array  []string          `json:"array,omitempty"`
}

// ApplicationDestination is a cluster, by API server URL or by name, and a
// namespace.
type ApplicationDestination struct {
	Server    string `json:"server,omitempty"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name,omitempty"`
}

// SyncPolicy says when and how an application syncs.
type SyncPolicy struct {
	Automated   *SyncPolicyAutomated `json:"automated,omitempty"`
	SyncOptions []string             `json:"syncOptions,omitempty"`
	Retry       *RetryStrategy       `json:"retry,omitempty"`
	// ManagedNamespaceMetadata labels and annotates the namespace that
	// CreateNamespace=true creates.
	ManagedNamespaceMetadata *ManagedNamespaceMetadata `json:"managedNamespaceMetadata,omitempty"`
}

// SyncPolicyAutomated turns on automated sync.
type SyncPolicyAutomated struct {
	// Prune deletes objects no longer in Git during automated syncs.
	Prune bool `json:"prune,omitempty"`
	// SelfHeal syncs again when the live state drifts without a new commit.
	SelfHeal bool `json:"selfHeal,omitempty"`
	// AllowEmpty lets an automated sync prune every object when Git holds
	// none.
	AllowEmpty bool `json:"allowEmpty,omitempty"`
	// Enabled, when set to false, turns automation off while keeping the
	// settings (Argo CD 3).
	Enabled *bool `json:"enabled,omitempty"`
}

// RetryStrategy retries failed syncs.
type RetryStrategy struct {
	// Limit is the number of retries; negative retries forever.
	Limit   int64    `json:"limit,omitempty"`
	Backoff *Backoff `json:"backoff,omitempty"`
}

// Backoff is the wait between retries: Duration, multiplied by Factor after
// each, at most MaxDuration. Durations are Go durations ("5s", "3m").
type Backoff struct {
	Duration    string `json:"duration,omitempty"`
	Factor      *int64 `json:"factor,omitempty"`
	MaxDuration string `json:"maxDuration,omitempty"`
}

// ManagedNamespaceMetadata are the labels and annotations of the namespace
// that CreateNamespace=true creates, kept in step on every sync (as Argo
// CD: without CreateNamespace=true they have no effect).
type ManagedNamespaceMetadata struct {
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// ResourceIgnoreDifferences is one ignoreDifferences rule.
type ResourceIgnoreDifferences struct {
	Group                 string   `json:"group,omitempty"`
	Kind                  string   `json:"kind"`
	Name                  string   `json:"name,omitempty"`
	Namespace             string   `json:"namespace,omitempty"`
	JSONPointers          []string `json:"jsonPointers,omitempty"`
	JQPathExpressions     []string `json:"jqPathExpressions,omitempty"`
	ManagedFieldsManagers []string `json:"managedFieldsManagers,omitempty"`
}

// AllSources returns Sources, or Source alone, whichever is set.
func (s ApplicationSpec) AllSources() []ApplicationSource {
	if len(s.Sources) > 0 {
		return s.Sources
	}
	if s.Source != nil {
		return []ApplicationSource{*s.Source}
	}
	return nil
}
