package render

import (
	"context"
	"io/fs"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Kind names a rendering tool.
type Kind string

// The tools this package knows.
const (
	KindPlain     Kind = "plain"
	KindKustomize Kind = "kustomize"
	KindHelm      Kind = "helm"
	KindJsonnet   Kind = "jsonnet"
	KindPlugin    Kind = "plugin"
)

// Renderer turns the files of one application into Kubernetes objects.
// Implementations are safe for concurrent use and read files only through a
// Root over Input.FS.
type Renderer interface {
	Render(ctx context.Context, in Input) ([]*unstructured.Unstructured, error)
}

// Identity is what a renderer contributes to the cache key of a render: the
// tool, the version of the library that renders it, and the renderer's own
// options (its policy: load restrictions, allowed schemes, plugin commands,
// limits). Options must encode to JSON deterministically; the cache key
// holds its canonical encoding, so any change to any field is a miss.
type Identity struct {
	// Tool is the tool the renderer runs.
	Tool Kind
	// Version is the version of the library that renders.
	Version string
	// Options are the renderer's own options, encoded into the cache key.
	Options any
}

// Identifier is implemented by renderers that can be cached: Identity
// reports what, besides the files and the Input, decides their output for in.
type Identifier interface {
	Identity(in Input) (Identity, error)
}

// Input is one render request.
//
// Everything in Input except FS enters the cache key of a Cached renderer;
// FS enters it through the content hashes of the paths the render read.
type Input struct {
	// FS is the tree to render from, usually a source.Snapshot. Renderers
	// never read it directly, only through a Root, which refuses paths and
	// symbolic links that leave it.
	FS fs.FS `json:"-"`
	// Path is the application's directory in FS, slash-separated and
	// relative ("." for the root).
	Path string
	// AppName is the application's name; renderers expose it to tools as
	// Argo CD does (ARGOCD_APP_NAME) and use it as the default Helm release
	// name.
	AppName string
	// Namespace is the destination namespace.
	Namespace string
	// Project is the application's project (the engine sets it). Part of
	// the cache key, it keeps apart the renders of apps of different
	// projects, whose repository credentials may differ (a chart
	// dependency one project may fetch, another may not); renderers do
	// not read it.
	Project string `json:",omitempty"`
	// KubeVersion is the target cluster's version ("1.37.2" or "v1.37.2");
	// empty means the tool's default.
	KubeVersion string
	// APIVersions are the group/versions (and group/version/Kind) the target
	// cluster serves, for Helm's .Capabilities.APIVersions.
	APIVersions []string
	// Tool forces a tool; empty means Detect.
	Tool Kind
	// Directory holds the options of plain directories.
	Directory *DirectorySource `json:",omitempty"`
	// Helm holds the options of Helm charts.
	Helm *HelmSource `json:",omitempty"`
	// Kustomize holds the options of Kustomize applications.
	Kustomize *KustomizeSource `json:",omitempty"`
	// Jsonnet holds the options of Jsonnet applications.
	Jsonnet *JsonnetSource `json:",omitempty"`
	// Plugin holds the options of plugin applications.
	Plugin *PluginSource `json:",omitempty"`
}

// DirectorySource are the per-application options of a plain directory, as
// in Argo CD's spec.source.directory.
type DirectorySource struct {
	// Recurse descends into sub-directories.
	Recurse bool
	// Include is a glob (path.Match syntax plus {a,b} alternatives) over the
	// file's path relative to the application; empty includes every file.
	Include string
	// Exclude is a glob like Include; matching files are skipped.
	Exclude string
	// DisableExtensionFilter reads every file Include and Exclude let
	// through as a manifest, whatever its extension (Argo CD's
	// directory.disableExtensionFilter); by default only .yaml, .yml and
	// .json files are.
	DisableExtensionFilter bool `json:",omitempty"`
}

// HelmSource are the per-application options of a Helm chart, as in Argo
// CD's spec.source.helm.
type HelmSource struct {
	// ReleaseName defaults to Input.AppName, then "release-name".
	ReleaseName string
	// ValueFiles are values files, relative to the chart directory, merged
	// in order. They must stay inside the root: "..", absolute paths and URL
	// schemes are refused unless the renderer allow-lists the scheme.
	ValueFiles []string
	// IgnoreMissingValueFiles skips value files that do not exist.
	IgnoreMissingValueFiles bool
	// Values is an inline YAML values document, merged after ValueFiles.
	Values string
	// ValuesObject is an inline values object, merged after Values.
	ValuesObject map[string]any `json:",omitempty"`
	// Parameters are --set (and, with ForceString, --set-string) values.
	Parameters []HelmParameter `json:",omitempty"`
	// FileParameters are --set-file values; the path is rooted like
	// ValueFiles.
	FileParameters []HelmFileParameter `json:",omitempty"`
	// SkipCRDs leaves out the chart's crds/ directory (Helm 3's --skip-crds);
	// by default CRDs are rendered (--include-crds).
	SkipCRDs bool
	// SkipTests leaves out test hooks (--skip-tests).
	SkipTests bool
	// SkipSchemaValidation skips values.schema.json (--skip-schema-validation).
	SkipSchemaValidation bool
	// IsUpgrade sets .Release.IsUpgrade instead of .Release.IsInstall.
	IsUpgrade bool
	// DependencyRepos are the repository URL globs a chart's missing
	// dependencies may be fetched from (the engine sets the app project's
	// sourceRepos); nil admits any. Only a renderer with a dependency
	// fetcher uses it.
	DependencyRepos []string `json:",omitempty"`
}

// HelmParameter is one --set or --set-string value.
type HelmParameter struct {
	// Name is the value's path (a.b[0].c).
	Name string
	// Value is the value.
	Value string
	// ForceString sets the value as a string (--set-string).
	ForceString bool
}

// HelmFileParameter is one --set-file value: the content of Path becomes
// the value of Name.
type HelmFileParameter struct {
	// Name is the value's path.
	Name string
	// Path is the file, relative to the application's path.
	Path string
}

// KustomizeSource are the per-application overrides of a Kustomize
// application, as in Argo CD's spec.source.kustomize. They are applied to an
// in-memory copy of the kustomization file, never written to disk.
type KustomizeSource struct {
	// NamePrefix is prepended to every object's name.
	NamePrefix string
	// NameSuffix is appended to every object's name.
	NameSuffix string
	// Images are "name=newName:tag", "name:tag", "name@digest" or
	// "name=newName", as for `kustomize edit set image`.
	Images []string `json:",omitempty"`
	// CommonLabels and CommonAnnotations are added to every object.
	CommonLabels      map[string]string `json:",omitempty"`
	CommonAnnotations map[string]string `json:",omitempty"`
	// Namespace overrides the kustomization's namespace.
	Namespace string
	// Replicas override the replica count of named workloads.
	Replicas []KustomizeReplica `json:",omitempty"`
	// Patches are appended to the kustomization's patches.
	Patches []KustomizePatch `json:",omitempty"`
	// Components are appended to the kustomization's components; each is a
	// path relative to the application, rooted like every other path.
	Components []string `json:",omitempty"`
	// ForceCommonLabels and ForceCommonAnnotations let CommonLabels and
	// CommonAnnotations replace keys the kustomization already sets (Argo
	// CD's `kustomize edit add label --force`); without them such a key is
	// an error, as the edit command refuses it.
	ForceCommonLabels      bool `json:",omitempty"`
	ForceCommonAnnotations bool `json:",omitempty"`
	// LabelWithoutSelector adds CommonLabels without touching selectors
	// (`edit add label --without-selector`: a labels entry with
	// includeSelectors false).
	LabelWithoutSelector bool `json:",omitempty"`
	// LabelIncludeTemplates, with LabelWithoutSelector, adds CommonLabels
	// to resource templates too (`edit add label --without-selector
	// --include-templates`: a labels entry with includeTemplates); without
	// LabelWithoutSelector it is an error, as the edit command refuses it.
	LabelIncludeTemplates bool `json:",omitempty"`
	// CommonAnnotationsEnvsubst says the engine substituted its build
	// environment in CommonAnnotations' values before the render (Argo
	// CD's kustomize.commonAnnotationsEnvsubst); renderers take the values
	// as given.
	CommonAnnotationsEnvsubst bool `json:",omitempty"`
	// IgnoreMissingComponents skips Components whose folder does not
	// exist, instead of failing.
	IgnoreMissingComponents bool `json:",omitempty"`
	// Version names the kustomize binary that builds the application (Argo
	// CD's spec.source.kustomize.version, registered in argocd-cm as
	// kustomize.version.<name>); empty means the renderer's own Kustomize.
	Version string `json:",omitempty"`
	// BuildEnv is Argo CD's build environment (ARGOCD_APP_NAME, ...,
	// KUBE_API_VERSIONS), given to a named kustomize binary; the engine
	// sets it only when Version is set.
	BuildEnv map[string]string `json:",omitempty"`
}

// KustomizeReplica overrides the replicas of the workload Name.
type KustomizeReplica struct {
	// Name is the workload's name.
	Name string
	// Count is its replicas.
	Count int64
}

// KustomizePatch is a strategic-merge or JSON 6902 patch, inline or from a
// file, with an optional target selector.
type KustomizePatch struct {
	// Path is a patch file, relative to the application's path.
	Path string
	// Patch is an inline patch.
	Patch string
	// Target selects the objects the patch applies to; nil: the patch names
	// them itself.
	Target *KustomizeSelector `json:",omitempty"`
	// Options are kustomize's patch options (allowNameChange,
	// allowKindChange).
	Options map[string]bool `json:",omitempty"`
}

// KustomizeSelector selects the objects a patch applies to.
type KustomizeSelector struct {
	// Group, Version, Kind, Name and Namespace select by identity (empty:
	// any).
	Group, Version, Kind, Name, Namespace string
	// LabelSelector and AnnotationSelector select by label and annotation
	// selectors.
	LabelSelector, AnnotationSelector string
}

// JsonnetSource are the per-application options of Jsonnet, as in Argo CD's
// directory.jsonnet.
type JsonnetSource struct {
	// ExtVars are external variables (std.extVar).
	ExtVars []JsonnetVar `json:",omitempty"`
	// TLAs are top-level arguments of the main file's function.
	TLAs []JsonnetVar `json:",omitempty"`
	// Libs are library directories searched by import, relative to the
	// root of the tree (not to the application), as Argo CD's libs.
	Libs []string `json:",omitempty"`
}

// JsonnetVar is one external variable or top-level argument. With Code the
// value is Jsonnet code, else a string.
type JsonnetVar struct {
	// Name is the variable's name.
	Name string
	// Value is the variable's value (Jsonnet code with Code).
	Value string
	// Code says Value is Jsonnet code.
	Code bool
}

// PluginSource selects a configured plugin and passes it parameters.
type PluginSource struct {
	// Name selects one of the renderer's configured plugins.
	Name string
	// Env are per-application variables, passed as ARGOCD_ENV_<name>.
	Env map[string]string `json:",omitempty"`
	// BuildEnv is Argo CD's build environment (ARGOCD_APP_NAME,
	// ARGOCD_APP_REVISION, ARGOCD_APP_SOURCE_REPO_URL, KUBE_VERSION, ...),
	// passed to the plugin's commands as it is; it overrides the
	// variables the plugin renderer derives from the Input.
	BuildEnv map[string]string `json:",omitempty"`
	// Parameters are the application's plugin parameters, passed as Argo
	// CD's config management plugins receive them: ARGOCD_APP_PARAMETERS
	// (the list as JSON) and PARAM_<NAME> (a string), PARAM_<NAME>_<i>
	// (an array's items), PARAM_<NAME>_<KEY> (a map's entries), names upper
	// case with every other character than a letter or digit an underscore.
	Parameters []PluginParameter `json:",omitempty"`
}

// PluginParameter is one plugin parameter: a string, an array or a map.
type PluginParameter struct {
	// Name is the parameter's name.
	Name string `json:"name"`
	// String is a string parameter's value.
	String *string `json:"string,omitempty"`
	// Array is an array parameter's values.
	Array []string `json:"array,omitempty"`
	// Map is a map parameter's entries.
	Map map[string]string `json:"map,omitempty"`
}
