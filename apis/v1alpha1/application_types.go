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
	// TypeMeta holds apiVersion (argoproj.io/v1alpha1) and kind (Application).
	metav1.TypeMeta `json:",inline"`
	// ObjectMeta is the Application's metadata; its name is the app's name in
	// tracking labels, metrics and notifications, and the
	// resources-finalizer.argocd.argoproj.io finalizer asks for its objects to
	// be deleted with it.
	metav1.ObjectMeta `json:"metadata"`
	// Spec is what to deploy, where, and when to sync it.
	Spec ApplicationSpec `json:"spec"`
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
	// TypeMeta holds apiVersion and kind (ApplicationList).
	metav1.TypeMeta `json:",inline"`
	// ListMeta is the list's resourceVersion and continue token.
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the Applications.
	Items []Application `json:"items"`
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
	// SourceHydrator renders a dry source and commits the result to Git,
	// from where the app syncs (Argo CD's source hydrator, run by package
	// hydrator); set it instead of source and sources.
	SourceHydrator *SourceHydrator `json:"sourceHydrator,omitempty"`
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
	// RepoURL is the Git repository (https, ssh or a local path the host's
	// source serves), the Helm chart repository, or the OCI registry the
	// source is read from. Credentials come from the host (Argo CD repository
	// Secrets through package source/repocreds), never from the Application.
	RepoURL string `json:"repoURL"`
	// Path is the folder of the repository to render, relative to its root
	// (empty or "." is the root). An absolute path is refused. The tool is
	// chosen as Argo CD chooses it: helm, kustomize, directory or plugin when
	// set, else Chart.yaml means Helm, a kustomization file Kustomize,
	// *.jsonnet Jsonnet, otherwise plain manifests.
	Path string `json:"path,omitempty"`
	// TargetRevision is the Git branch, tag, commit or semver constraint
	// over the repository's tags to deploy (default HEAD, the repository's
	// default branch), or for a chart its version or semver constraint. A
	// branch or constraint is followed: each refresh resolves it again.
	TargetRevision string `json:"targetRevision,omitempty"`
	// TagPrefix scopes a Git TargetRevision to the tags that start with it
	// (Argo CD's tagPrefix, for monorepos that tag each component): a semver
	// constraint ("1.0.*") is evaluated over those tags with the prefix
	// stripped, and the highest match with the prefix put back is the tag
	// deployed ("component-b/1.0.3"); an exact version ("1.0.3") names the
	// tag TagPrefix+version. A branch, HEAD or commit resolves as without
	// it. Chart and OCI sources ignore it, as Argo CD does.
	TagPrefix string `json:"tagPrefix,omitempty"`
	// Chart names a Helm chart (instead of Path) in the Helm chart
	// repository or OCI registry at RepoURL ("https://charts.example.com",
	// "oci://registry.example.com/charts", or "registry.example.com/charts"
	// with credentials that set EnableOCI). TargetRevision is then a chart
	// version or a semver constraint ("1.2.x", "^1", "*"), and the resolved
	// version is the source's revision.
	Chart string `json:"chart,omitempty"`
	// Helm are the options of a Helm render (a chart folder or Chart).
	Helm *ApplicationSourceHelm `json:"helm,omitempty"`
	// Kustomize are Argo CD's overrides of a Kustomize render.
	Kustomize *ApplicationSourceKustomize `json:"kustomize,omitempty"`
	// Directory are the options of a folder of plain manifests or Jsonnet
	// files.
	Directory *ApplicationSourceDirectory `json:"directory,omitempty"`
	// Plugin renders the source with a config management plugin the host
	// configured (render/plugin); the engine runs no plugin it was not given.
	Plugin *ApplicationSourcePlugin `json:"plugin,omitempty"`
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
	// ValueFiles are values files merged in order over the chart's values.yaml
	// (helm template -f), as paths relative to the chart folder; "$ref/path"
	// reads a file of the source whose ref is ref (multi-source). Paths that
	// leave the repository, absolute paths and URLs are refused unless the
	// host allows the URL scheme.
	ValueFiles []string `json:"valueFiles,omitempty"`
	// Parameters are --set values, applied after every values file and inline
	// values.
	Parameters []HelmParameter `json:"parameters,omitempty"`
	// FileParameters are --set-file values, applied last.
	FileParameters []HelmFileParameter `json:"fileParameters,omitempty"`
	// ReleaseName is the Helm release name. Default: the Application's name.
	ReleaseName string `json:"releaseName,omitempty"`
	// Values is an inline values document (YAML), merged after ValueFiles.
	Values string `json:"values,omitempty"`
	// ValuesObject is inline values as an object, merged after Values. It is
	// the only field of the schema that keeps any content.
	ValuesObject *runtime.RawExtension `json:"valuesObject,omitempty"`
	// IgnoreMissingValueFiles skips value files that do not exist instead of
	// failing the render.
	IgnoreMissingValueFiles bool `json:"ignoreMissingValueFiles,omitempty"`
	// PassCredentials would send the chart repository's credentials to every
	// host its archives are served from. It is refused (ErrUnsupported): the
	// engine sends credentials only to their own host.
	PassCredentials bool `json:"passCredentials,omitempty"`
	// SkipCrds leaves out the chart's crds/ folder (helm template
	// --skip-crds).
	SkipCrds bool `json:"skipCrds,omitempty"`
	// SkipTests leaves out the chart's test hooks (helm template
	// --skip-tests).
	SkipTests bool `json:"skipTests,omitempty"`
	// SkipSchemaValidation does not check the values against the chart's
	// values.schema.json.
	SkipSchemaValidation bool `json:"skipSchemaValidation,omitempty"`
	// Version is the Helm major version: "", "v3" or "v4", as Argo CD 3.6
	// accepts (it runs Helm v4, which renders v3 charts as v3 does; charts
	// are rendered here in process by Helm v3). Any other value makes the
	// app invalid with Argo CD's "helm version '<v>' is not supported".
	Version string `json:"version,omitempty"`
	// KubeVersion overrides the Kubernetes version the chart sees
	// (.Capabilities.KubeVersion). Default: the destination cluster's version.
	KubeVersion string `json:"kubeVersion,omitempty"`
	// APIVersions override the API versions the chart sees
	// (.Capabilities.APIVersions), as "group/version" or "group/version/Kind".
	// Default: those the destination cluster serves.
	APIVersions []string `json:"apiVersions,omitempty"`
	// Namespace is the release namespace the chart is rendered for
	// (.Release.Namespace). Default: the destination namespace.
	Namespace string `json:"namespace,omitempty"`
}

// HelmParameter is a --set (or, with ForceString, --set-string) value.
type HelmParameter struct {
	// Name is the value's path, as --set takes it ("image.tag", "list[0]").
	Name string `json:"name"`
	// Value is the value; Helm parses it (numbers, booleans) unless
	// ForceString.
	Value string `json:"value"`
	// ForceString keeps Value a string (--set-string).
	ForceString bool `json:"forceString,omitempty"`
}

// HelmFileParameter is a --set-file value: a path inside the repository.
type HelmFileParameter struct {
	// Name is the value's path, as --set-file takes it.
	Name string `json:"name"`
	// Path is the file whose content becomes the value, relative to the chart
	// folder and inside the repository.
	Path string `json:"path"`
}

// ApplicationSourceKustomize are Argo CD's overrides of a kustomization.
type ApplicationSourceKustomize struct {
	// NamePrefix is prepended to the name of every object (kustomize edit set
	// nameprefix).
	NamePrefix string `json:"namePrefix,omitempty"`
	// NameSuffix is appended to the name of every object (kustomize edit set
	// namesuffix).
	NameSuffix string `json:"nameSuffix,omitempty"`
	// Images override container images, as kustomize edit set image takes
	// them: "name=newName:tag", "name:tag" or "name@digest".
	Images []string `json:"images,omitempty"`
	// CommonLabels are added to every object and, unless LabelWithoutSelector,
	// to its selectors. A label the kustomization already sets is an error
	// unless ForceCommonLabels.
	CommonLabels map[string]string `json:"commonLabels,omitempty"`
	// CommonAnnotations are added to every object. An annotation the
	// kustomization already sets is an error unless ForceCommonAnnotations.
	CommonAnnotations map[string]string `json:"commonAnnotations,omitempty"`
	// ForceCommonLabels lets CommonLabels replace labels the kustomization
	// sets.
	ForceCommonLabels bool `json:"forceCommonLabels,omitempty"`
	// ForceCommonAnnotations lets CommonAnnotations replace annotations the
	// kustomization sets.
	ForceCommonAnnotations bool `json:"forceCommonAnnotations,omitempty"`
	// Namespace sets the namespace of every namespaced object (kustomize edit
	// set namespace).
	Namespace string `json:"namespace,omitempty"`
	// Replicas override the replica count of workloads by name.
	Replicas []KustomizeReplica `json:"replicas,omitempty"`
	// Patches are added to the kustomization's patches.
	Patches []KustomizePatch `json:"patches,omitempty"`
	// Components are added to the kustomization's components (paths relative
	// to the kustomization).
	Components []string `json:"components,omitempty"`
	// IgnoreMissingComponents skips Components that do not exist instead of
	// failing the render.
	IgnoreMissingComponents bool `json:"ignoreMissingComponents,omitempty"`
	// LabelWithoutSelector adds CommonLabels to objects only, not to selectors
	// or templates.
	LabelWithoutSelector bool `json:"labelWithoutSelector,omitempty"`
	// LabelIncludeTemplates, with LabelWithoutSelector, adds CommonLabels
	// to resource templates too (a labels entry with includeTemplates);
	// without LabelWithoutSelector it fails the render, as Argo CD's
	// `kustomize edit add label --include-templates` does.
	LabelIncludeTemplates bool `json:"labelIncludeTemplates,omitempty"`
	// CommonAnnotationsEnvsubst substitutes the build environment
	// ($ARGOCD_APP_NAME, ${ARGOCD_APP_REVISION}...) in CommonAnnotations'
	// values; without it they are taken as written.
	CommonAnnotationsEnvsubst bool `json:"commonAnnotationsEnvsubst,omitempty"`
	// Version names a kustomize binary registered in argocd-cm
	// (kustomize.version.<name> or kustomize.path.<name>) that builds the
	// app instead of the in-process Kustomize; a name not registered fails
	// the render with Argo CD's "kustomize version <name> is not
	// registered".
	Version string `json:"version,omitempty"`
	// KubeVersion overrides the Kubernetes version given to helmCharts the
	// kustomization inflates. Default: the destination cluster's version.
	KubeVersion string `json:"kubeVersion,omitempty"`
	// APIVersions override the API versions given to helmCharts the
	// kustomization inflates. Default: those the destination cluster serves.
	APIVersions []string `json:"apiVersions,omitempty"`
}

// KustomizeReplica overrides the replicas of a workload by name.
type KustomizeReplica struct {
	// Name is the name of the Deployment, StatefulSet or other workload.
	Name string `json:"name"`
	// Count is the number of replicas (a number, or a string holding one).
	Count intstr.IntOrString `json:"count"`
}

// KustomizePatch is a patch, inline or from a file, with an optional target.
type KustomizePatch struct {
	// Path is a file holding the patch, relative to the kustomization.
	Path string `json:"path,omitempty"`
	// Patch is an inline strategic merge or JSON 6902 patch.
	Patch string `json:"patch,omitempty"`
	// Target selects the objects the patch applies to; without it the patch
	// names its object itself.
	Target *KustomizeSelector `json:"target,omitempty"`
	// Options are kustomize's patch options: allowNameChange and
	// allowKindChange; any other is refused.
	Options map[string]bool `json:"options,omitempty"`
}

// KustomizeSelector selects the objects a patch applies to.
type KustomizeSelector struct {
	// Group is the API group of the objects (regular expression).
	Group string `json:"group,omitempty"`
	// Version is the API version of the objects (regular expression).
	Version string `json:"version,omitempty"`
	// Kind is the kind of the objects (regular expression).
	Kind string `json:"kind,omitempty"`
	// Name is the name of the objects (regular expression).
	Name string `json:"name,omitempty"`
	// Namespace is the namespace of the objects (regular expression).
	Namespace string `json:"namespace,omitempty"`
	// LabelSelector is a label selector the objects match.
	LabelSelector string `json:"labelSelector,omitempty"`
	// AnnotationSelector is an annotation selector the objects match.
	AnnotationSelector string `json:"annotationSelector,omitempty"`
}

// ApplicationSourceDirectory are options of a plain folder of manifests.
type ApplicationSourceDirectory struct {
	// Recurse reads sub-folders too, in lexical order; without it only the
	// folder itself is read.
	Recurse bool `json:"recurse,omitempty"`
	// Jsonnet are the variables and library paths of the folder's *.jsonnet
	// files.
	Jsonnet ApplicationSourceJsonnet `json:"jsonnet,omitempty"`
	// Exclude is a glob (or {a,b} list of globs) over paths relative to the
	// folder: matching files are not read. It wins over Include.
	Exclude string `json:"exclude,omitempty"`
	// Include is a glob (or {a,b} list of globs) over paths relative to the
	// folder: when set, only matching files are read.
	Include string `json:"include,omitempty"`
	// DisableExtensionFilter reads every file of the folder that Include
	// and Exclude let through as manifests, whatever its extension
	// ("*.yaml.sealed"); by default only .yaml, .yml and .json files are
	// (and .jsonnet files are evaluated).
	DisableExtensionFilter bool `json:"disableExtensionFilter,omitempty"`
}

// ApplicationSourceJsonnet are Jsonnet options.
type ApplicationSourceJsonnet struct {
	// ExtVars are external variables (std.extVar).
	ExtVars []JsonnetVar `json:"extVars,omitempty"`
	// TLAs are top-level arguments given to each file's function.
	TLAs []JsonnetVar `json:"tlas,omitempty"`
	// Libs are folders, relative to the repository root, searched by import
	// after the importing file's folder.
	Libs []string `json:"libs,omitempty"`
}

// JsonnetVar is an external variable or top-level argument; Code says the
// value is Jsonnet code rather than a string.
type JsonnetVar struct {
	// Name is the variable's or argument's name.
	Name string `json:"name"`
	// Value is its value: a string, or Jsonnet code when Code is set.
	Value string `json:"value"`
	// Code evaluates Value as Jsonnet code instead of passing it as a string.
	Code bool `json:"code,omitempty"`
}

// ApplicationSourcePlugin names a config management plugin.
type ApplicationSourcePlugin struct {
	// Name selects one of the plugins the host configured; an unknown name
	// fails the render.
	Name string `json:"name,omitempty"`
	// Env are variables given to the plugin's command as ARGOCD_ENV_<name>.
	Env []EnvEntry `json:"env,omitempty"`
	// Parameters are given to the plugin's command as Argo CD gives them
	// (ARGOCD_APP_PARAMETERS and PARAM_<NAME> variables).
	Parameters []ApplicationSourcePluginParameter `json:"parameters,omitempty"`
}

// EnvEntry is an environment variable for a plugin.
type EnvEntry struct {
	// Name is the variable's name, without the ARGOCD_ENV_ prefix.
	Name string `json:"name"`
	// Value is the variable's value.
	Value string `json:"value"`
}

// ApplicationSourcePluginParameter is a plugin parameter: a string, a map
// or an array.
type ApplicationSourcePluginParameter struct {
	// Name is the parameter's name.
	Name string `json:"name"`
	// String is the value of a string parameter.
	String *string `json:"string,omitempty"`
	// Map is the value of a map parameter.
	Map map[string]string `json:"map,omitempty"`
	// Array is the value of an array parameter.
	Array []string `json:"array,omitempty"`
}

// ApplicationDestination is a cluster, by API server URL or by name, and a
// namespace.
type ApplicationDestination struct {
	// Server is the cluster's API server URL; https://kubernetes.default.svc
	// is the cluster the engine runs in. Set Server or Name, not both.
	Server string `json:"server,omitempty"`
	// Namespace is where namespaced objects without a namespace of their own
	// go. In an AppProject it is a glob of the allowed namespaces.
	Namespace string `json:"namespace,omitempty"`
	// Name is the cluster's name, as the host's clusters (Argo CD cluster
	// Secrets) name it ("in-cluster" is the local one). Set Server or Name,
	// not both.
	Name string `json:"name,omitempty"`
}

// ResourceIgnoreDifferences is one ignoreDifferences rule.
type ResourceIgnoreDifferences struct {
	// Group is the API group of the objects the rule applies to (a glob);
	// empty is the core group.
	Group string `json:"group,omitempty"`
	// Kind is the kind of the objects the rule applies to (a glob). Required.
	Kind string `json:"kind"`
	// Name is the name of the objects the rule applies to (a glob); empty
	// matches any.
	Name string `json:"name,omitempty"`
	// Namespace is the namespace of the objects the rule applies to (a glob);
	// empty matches any.
	Namespace string `json:"namespace,omitempty"`
	// JSONPointers are RFC 6901 pointers to fields the comparison ignores
	// ("/spec/replicas").
	JSONPointers []string `json:"jsonPointers,omitempty"`
	// JQPathExpressions are jq path expressions whose paths the comparison
	// ignores; an expression that fails to evaluate fails the comparison
	// instead of ignoring nothing.
	JQPathExpressions []string `json:"jqPathExpressions,omitempty"`
	// ManagedFieldsManagers are field managers (as in the live object's
	// managedFields) whose fields the comparison ignores.
	ManagedFieldsManagers []string `json:"managedFieldsManagers,omitempty"`
}

// AllSources returns the sources the app syncs from: the sync source of
// its SourceHydrator when it has one (SourceHydrator.GetSyncSource, as
// Argo CD's GetSources), else Sources, or Source alone, whichever is set.
func (s ApplicationSpec) AllSources() []ApplicationSource {
	if s.SourceHydrator != nil {
		return []ApplicationSource{s.SourceHydrator.GetSyncSource()}
	}
	if len(s.Sources) > 0 {
		return s.Sources
	}
	if s.Source != nil {
		return []ApplicationSource{*s.Source}
	}
	return nil
}
