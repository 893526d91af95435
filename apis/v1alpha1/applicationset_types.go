package v1alpha1

import (
	"encoding/json"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// ApplicationSet is an Argo CD ApplicationSet (argoproj.io/v1alpha1), with
// Argo CD's field names so that manifests written for Argo CD load
// unchanged. Fields Argo CD has and this package does not implement are
// refused by Load (an unknown field) rather than ignored.
//
// +kubebuilder:object:root=true
type ApplicationSet struct {
	// TypeMeta holds apiVersion (argoproj.io/v1alpha1) and kind
	// (ApplicationSet).
	metav1.TypeMeta `json:",inline"`
	// ObjectMeta is the set's metadata; the Applications it generates are
	// owned by it.
	metav1.ObjectMeta `json:"metadata"`
	// Spec is what the set generates and how it rolls it out.
	Spec ApplicationSetSpec `json:"spec"`
	// Status is what the controller did, read leniently by the loader.
	Status ApplicationSetStatus `json:"status,omitzero"`
}

// ApplicationSetList is a list of ApplicationSets.
//
// +kubebuilder:object:root=true
type ApplicationSetList struct {
	// TypeMeta holds apiVersion and kind (ApplicationSetList).
	metav1.TypeMeta `json:",inline"`
	// ListMeta is the list's resourceVersion and continue token.
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the ApplicationSets.
	Items []ApplicationSet `json:"items"`
}

// ApplicationSetStatus is an ApplicationSet's status in Argo CD's shape.
type ApplicationSetStatus struct {
	// Conditions say whether generation and the last update worked.
	Conditions []ApplicationSetCondition `json:"conditions,omitempty"`
	// ApplicationStatus is the progressive-sync state of each generated
	// Application.
	ApplicationStatus []ApplicationSetApplicationStatus `json:"applicationStatus,omitempty"`
	// Resources are the generated Applications.
	Resources []ResourceStatus `json:"resources,omitempty"`
	// ResourcesCount is the number of generated Applications.
	ResourcesCount int64 `json:"resourcesCount,omitempty"`
	// Health is the set's aggregated health.
	Health HealthStatus `json:"health,omitzero"`
}

// ApplicationSetCondition is one condition of a set (ErrorOccurred,
// ParametersGenerated, ResourcesUpToDate, RolloutProgressing).
type ApplicationSetCondition struct {
	// Type is ErrorOccurred, ParametersGenerated, ResourcesUpToDate or
	// RolloutProgressing.
	Type string `json:"type"`
	// Message says what happened, for people.
	Message string `json:"message"`
	// Status is "True", "False" or "Unknown".
	Status string `json:"status"`
	// Reason is a one-word cause.
	Reason string `json:"reason"`
	// LastTransitionTime is when Status last changed.
	LastTransitionTime *metav1.Time `json:"lastTransitionTime,omitempty"`
}

// ApplicationSetApplicationStatus is one generated Application's step in
// a RollingSync.
type ApplicationSetApplicationStatus struct {
	// Application is the generated Application's name.
	Application string `json:"application"`
	// Status is Waiting, Pending, Progressing or Healthy.
	Status string `json:"status"`
	// Message says why the Application is in this state, for people.
	Message string `json:"message"`
	// Step is the RollingSync step (from "1") that selects the Application.
	Step string `json:"step"`
	// TargetRevisions are the revisions the Application was out of sync with
	// when its step began; a new revision restarts the step.
	TargetRevisions []string `json:"targetRevisions,omitempty"`
	// LastTransitionTime is when Status last changed.
	LastTransitionTime *metav1.Time `json:"lastTransitionTime,omitempty"`
}

// ApplicationSetSpec is what an ApplicationSet generates and how it rolls it out.
type ApplicationSetSpec struct {
	// GoTemplate renders the template with text/template and sprig instead
	// of the fasttemplate default ({{path.basename}}).
	GoTemplate bool `json:"goTemplate,omitempty"`
	// GoTemplateOptions are text/template options; "missingkey=error" makes
	// a missing parameter an error.
	GoTemplateOptions []string `json:"goTemplateOptions,omitempty"`
	// Generators produce the parameter sets; their outputs are joined.
	Generators []ApplicationSetGenerator `json:"generators"`
	// Template is the Application each parameter set is rendered into.
	Template ApplicationSetTemplate `json:"template"`
	// TemplatePatch is a go template rendered per parameter set whose
	// result (YAML or JSON) is merged over the rendered Application
	// (RFC 7386 merge patch: maps merge, lists are replaced, null deletes).
	// It needs GoTemplate.
	TemplatePatch *string `json:"templatePatch,omitempty"`
	// SyncPolicy says what the set may do to the Applications it owns.
	SyncPolicy *ApplicationSetSyncPolicy `json:"syncPolicy,omitempty"`
	// Strategy is how changed Applications are rolled out.
	Strategy *ApplicationSetStrategy `json:"strategy,omitempty"`
	// IgnoreApplicationDifferences are fields of generated Applications
	// the set does not overwrite once the Application exists.
	IgnoreApplicationDifferences []ApplicationSetResourceIgnoreDifferences `json:"ignoreApplicationDifferences,omitempty"`
	// PreservedFields are annotations and labels of generated Applications
	// the set keeps at their live values (Argo CD's older form of
	// IgnoreApplicationDifferences).
	PreservedFields *ApplicationPreservedFields `json:"preservedFields,omitempty"`
}

// ApplicationPreservedFields names the annotations and labels of generated
// Applications whose live values a set keeps.
type ApplicationPreservedFields struct {
	// Annotations are the keys of the annotations kept.
	Annotations []string `json:"annotations,omitempty"`
	// Labels are the keys of the labels kept.
	Labels []string `json:"labels,omitempty"`
}

// ApplicationSetTemplate is an Application without kind: its metadata and spec. The spec
// is kept as raw JSON: it is rendered per parameter set and the result is
// checked by the host's Application loader (Options.Validate).
type ApplicationSetTemplate struct {
	// Metadata is the generated Application's metadata; its strings are
	// templates.
	Metadata ApplicationSetTemplateMeta `json:"metadata"`
	// Spec is the generated Application's spec; its strings are templates, and
	// the rendered spec is checked as an Application is when loaded.
	Spec json.RawMessage `json:"spec,omitempty"`
}

// ApplicationSetTemplateMeta is the metadata of a generated Application.
type ApplicationSetTemplateMeta struct {
	// Name is the Application's name; it must differ for every parameter set.
	Name string `json:"name,omitempty"`
	// Namespace is the Application's namespace. Default: the set's.
	Namespace string `json:"namespace,omitempty"`
	// Labels are the Application's labels; RollingSync steps select
	// Applications by them.
	Labels map[string]string `json:"labels,omitempty"`
	// Annotations are the Application's annotations.
	Annotations map[string]string `json:"annotations,omitempty"`
	// Finalizers are the Application's finalizers;
	// resources-finalizer.argocd.argoproj.io deletes its objects with it.
	Finalizers []string `json:"finalizers,omitempty"`
}

// ApplicationSetSyncPolicy limits what the set does to its Applications.
type ApplicationSetSyncPolicy struct {
	// PreserveResourcesOnDeletion keeps the objects of an Application the
	// set deletes (its resources-finalizer is not honoured).
	PreserveResourcesOnDeletion bool `json:"preserveResourcesOnDeletion,omitempty"`
	// ApplicationsSync is one of create-only, create-update, create-delete
	// and sync (the default: create, update and delete).
	ApplicationsSync *string `json:"applicationsSync,omitempty"`
}

// The values of ApplicationSetSyncPolicy.ApplicationsSync.
const (
	ApplicationsSyncCreateOnly   = "create-only"
	ApplicationsSyncCreateUpdate = "create-update"
	ApplicationsSyncCreateDelete = "create-delete"
	ApplicationsSyncSync         = "sync"
)

// ApplicationSetStrategy is the rollout of generated Applications.
type ApplicationSetStrategy struct {
	// Type is AllAtOnce (the default) or RollingSync.
	Type string `json:"type,omitempty"`
	// RollingSync are the steps of a RollingSync; it needs type RollingSync.
	RollingSync *ApplicationSetRolloutStrategy `json:"rollingSync,omitempty"`
}

// ApplicationSetRolloutStrategy syncs Applications in steps.
type ApplicationSetRolloutStrategy struct {
	// Steps are run in order: an Application selected by no step is not synced
	// by the rollout.
	Steps []ApplicationSetRolloutStep `json:"steps,omitempty"`
}

// ApplicationSetRolloutStep selects the Applications of one step by their labels;
// MaxUpdate bounds how many of them sync at once (a number or a
// percentage; default all).
type ApplicationSetRolloutStep struct {
	// MatchExpressions select the step's Applications by label; all must
	// match.
	MatchExpressions []ApplicationMatchExpression `json:"matchExpressions,omitempty"`
	// MaxUpdate is how many of the step's Applications sync at once: a number,
	// or a percentage of the step's Applications. Default: all.
	MaxUpdate *intstr.IntOrString `json:"maxUpdate,omitempty"`
}

// ApplicationMatchExpression is a label requirement: In or NotIn with values.
type ApplicationMatchExpression struct {
	// Key is the label's key.
	Key string `json:"key"`
	// Operator is In or NotIn; any other is refused.
	Operator string `json:"operator"`
	// Values are the label values In accepts or NotIn rejects.
	Values []string `json:"values,omitempty"`
}

// ApplicationSetResourceIgnoreDifferences names Application fields the set does not overwrite.
type ApplicationSetResourceIgnoreDifferences struct {
	// Name is the generated Application the rule applies to; empty applies it
	// to every Application of the set.
	Name string `json:"name,omitempty"`
	// JSONPointers are RFC 6901 pointers to the Application's fields that keep
	// their live values ("/spec/source/targetRevision").
	JSONPointers []string `json:"jsonPointers,omitempty"`
	// JQPathExpressions are jq path expressions of the Application's fields
	// that keep their live values.
	JQPathExpressions []string `json:"jqPathExpressions,omitempty"`
}

// ApplicationSetGenerator is one generator of a set: exactly one of its kinds is set,
// with an optional Selector filtering its parameter sets.
type ApplicationSetGenerator struct {
	// List yields fixed parameter sets.
	List *ListGenerator `json:"list,omitempty"`
	// Clusters yields a parameter set per cluster the host knows.
	Clusters *ClusterGenerator `json:"clusters,omitempty"`
	// Git yields parameter sets from the directories or files of a Git
	// repository.
	Git *GitGenerator `json:"git,omitempty"`
	// Matrix combines the parameter sets of two generators.
	Matrix *MatrixGenerator `json:"matrix,omitempty"`
	// Merge merges the parameter sets of several generators by key.
	Merge *MergeGenerator `json:"merge,omitempty"`
	// SCMProvider yields a parameter set per repository (or branch) of an
	// organisation on a forge.
	SCMProvider *SCMProviderGenerator `json:"scmProvider,omitempty"`
	// PullRequest yields a parameter set per open pull request of a
	// repository on a forge.
	PullRequest *PullRequestGenerator `json:"pullRequest,omitempty"`
	// ClusterDecisionResource yields a parameter set per cluster a duck-typed
	// resource decides on.
	ClusterDecisionResource *DuckTypeGenerator `json:"clusterDecisionResource,omitempty"`
	// Plugin yields the parameter sets a plugin service answers over HTTP.
	Plugin *PluginGenerator `json:"plugin,omitempty"`
	// Selector keeps only the parameter sets whose (flattened) values
	// match it.
	Selector *metav1.LabelSelector `json:"selector,omitempty"`
}

// ListGenerator yields its elements as parameter sets.
type ListGenerator struct {
	// Elements are the parameter sets, each a JSON object (values may be
	// nested under goTemplate).
	Elements []json.RawMessage `json:"elements,omitempty"`
	// ElementsYaml is a YAML list of elements (usually rendered from
	// another generator's parameters in a matrix).
	ElementsYaml string `json:"elementsYaml,omitempty"`
	// Template overlays the set's template for this generator's Applications.
	Template *ApplicationSetTemplate `json:"template,omitempty"`
}

// ClusterGenerator yields one parameter set per Argo CD cluster Secret
// (and the local cluster when there is no selector).
type ClusterGenerator struct {
	// Selector keeps the clusters whose Secret labels match it; when empty
	// every cluster Secret and the local cluster are used.
	Selector metav1.LabelSelector `json:"selector,omitempty"`
	// Template overlays the set's template for this generator's Applications.
	Template *ApplicationSetTemplate `json:"template,omitempty"`
	// Values are extra parameters (values.<key>), themselves templates
	// rendered with the cluster's parameters.
	Values map[string]string `json:"values,omitempty"`
	// FlatList yields one parameter set holding every cluster under "clusters"
	// instead of one set per cluster.
	FlatList bool `json:"flatList,omitempty"`
}

// GitGenerator yields a parameter set per directory or per config file of
// a Git repository.
type GitGenerator struct {
	// RepoURL is the repository read.
	RepoURL string `json:"repoURL"`
	// Revision is the branch, tag or commit read. Default: the default branch.
	Revision string `json:"revision,omitempty"`
	// Directories yield a parameter set per directory matching an item (path,
	// path.basename, path[n], ...). Set Directories or Files, not both.
	Directories []GitGeneratorItem `json:"directories,omitempty"`
	// Files yield the parameter sets of JSON or YAML files matching an item
	// (one per file, or per element of a file holding a list).
	Files []GitGeneratorItem `json:"files,omitempty"`
	// RequeueAfterSeconds is how often the set is generated again, at least;
	// the shortest of a set's generators applies.
	RequeueAfterSeconds *int64 `json:"requeueAfterSeconds,omitempty"`
	// Template overlays the set's template for this generator's Applications.
	Template *ApplicationSetTemplate `json:"template,omitempty"`
	// PathParamPrefix puts the path parameters under this prefix (prefix.path,
	// prefix.path.basename, ...), so a matrix of two git generators keeps
	// both.
	PathParamPrefix string `json:"pathParamPrefix,omitempty"`
	// Values are extra parameters (values.<key>), themselves templates
	// rendered with the generator's parameters.
	Values map[string]string `json:"values,omitempty"`
}

// GitGeneratorItem is a glob of directories or files; Exclude removes what it
// matches.
type GitGeneratorItem struct {
	// Path is a glob of directories or files, from the repository's root; "**"
	// matches any depth for files.
	Path string `json:"path"`
	// Exclude removes what Path matches from what the other items matched.
	Exclude bool `json:"exclude,omitempty"`
}

// MatrixGenerator yields the cartesian product of two generators' sets;
// one of them (the second, as in Argo CD, or the first) may use the
// other's parameters.
type MatrixGenerator struct {
	// Generators are the two generators combined.
	Generators []ApplicationSetGenerator `json:"generators"`
	// Template overlays the set's template for this generator's Applications.
	Template *ApplicationSetTemplate `json:"template,omitempty"`
}

// MergeGenerator merges the sets of later generators into the first's
// where their MergeKeys values are equal.
type MergeGenerator struct {
	// Generators are merged in order: the first's sets are the base, later
	// ones override the values of sets with equal MergeKeys; at least two.
	Generators []ApplicationSetGenerator `json:"generators"`
	// MergeKeys are the parameters whose values pair the sets of different
	// generators; at least one.
	MergeKeys []string `json:"mergeKeys"`
	// Template overlays the set's template for this generator's Applications.
	Template *ApplicationSetTemplate `json:"template,omitempty"`
}

// SCMProviderGenerator yields a set per repository of an SCM provider.
// Exactly one provider key (github, gitlab, ...) is set; its config (Argo
// CD's fields for that forge) is decoded strictly by the provider
// registered under that key (appset Options.SCMProviders; package
// appset/scm/all registers Argo CD's).
type SCMProviderGenerator struct {
	// Github is the configuration of the provider registered as "github"
	// (GitHub and GitHub Enterprise: organization, api, tokenRef,
	// appSecretName, allBranches, excludeArchivedRepos).
	Github json.RawMessage `json:"github,omitempty"`
	// Gitlab is the configuration of the provider registered as "gitlab".
	Gitlab json.RawMessage `json:"gitlab,omitempty"`
	// Gitea is the configuration of the provider registered as "gitea".
	Gitea json.RawMessage `json:"gitea,omitempty"`
	// Bitbucket is the configuration of the provider registered as
	// "bitbucket" (Bitbucket Cloud).
	Bitbucket json.RawMessage `json:"bitbucket,omitempty"`
	// BitbucketServer is the configuration of the provider registered as
	// "bitbucketServer".
	BitbucketServer json.RawMessage `json:"bitbucketServer,omitempty"`
	// AzureDevOps is the configuration of the provider registered as
	// "azureDevOps".
	AzureDevOps json.RawMessage `json:"azureDevOps,omitempty"`
	// AWSCodeCommit is the configuration of the provider registered as
	// "awsCodeCommit" (none is built in).
	AWSCodeCommit json.RawMessage `json:"awsCodeCommit,omitempty"`
	// CloneProtocol chooses the clone URL a repository's url parameter
	// holds: "ssh" (the default where the forge has one), "https", or
	// another the forge offers (Argo CD's per-forge choice).
	CloneProtocol string `json:"cloneProtocol,omitempty"`
	// Filters keep the repositories that pass any one of them; with none,
	// every repository is kept.
	Filters []SCMProviderGeneratorFilter `json:"filters,omitempty"`
	// RequeueAfterSeconds is how often the set is generated again, at least;
	// the shortest of a set's generators applies.
	RequeueAfterSeconds *int64 `json:"requeueAfterSeconds,omitempty"`
	// Template overlays the set's template for this generator's Applications.
	Template *ApplicationSetTemplate `json:"template,omitempty"`
	// Values are extra parameters (values.<key>), themselves templates
	// rendered with the repository's parameters.
	Values map[string]string `json:"values,omitempty"`
}

// SCMProviderGeneratorFilter keeps repositories matching all of its set fields
// (regular expressions; PathsExist and PathsDoNotExist are paths).
type SCMProviderGeneratorFilter struct {
	// RepositoryMatch is a regular expression the repository's name matches.
	RepositoryMatch *string `json:"repositoryMatch,omitempty"`
	// PathsExist are paths that must exist in the repository.
	PathsExist []string `json:"pathsExist,omitempty"`
	// PathsDoNotExist are paths that must not exist in the repository.
	PathsDoNotExist []string `json:"pathsDoNotExist,omitempty"`
	// LabelMatch is a regular expression one of the repository's labels
	// matches.
	LabelMatch *string `json:"labelMatch,omitempty"`
	// BranchMatch is a regular expression the branch matches.
	BranchMatch *string `json:"branchMatch,omitempty"`
}

// PullRequestGenerator yields a set per open pull request, from the
// provider registered under the key that is set (appset
// Options.PullRequestProviders; package appset/scm/all registers Argo
// CD's), which decodes its config strictly.
type PullRequestGenerator struct {
	// Github is the configuration of the provider registered as "github"
	// (owner, repo, api, tokenRef, appSecretName, labels).
	Github json.RawMessage `json:"github,omitempty"`
	// Gitlab is the configuration of the provider registered as "gitlab".
	Gitlab json.RawMessage `json:"gitlab,omitempty"`
	// Gitea is the configuration of the provider registered as "gitea".
	Gitea json.RawMessage `json:"gitea,omitempty"`
	// Bitbucket is the configuration of the provider registered as
	// "bitbucket" (Bitbucket Cloud).
	Bitbucket json.RawMessage `json:"bitbucket,omitempty"`
	// BitbucketServer is the configuration of the provider registered as
	// "bitbucketServer".
	BitbucketServer json.RawMessage `json:"bitbucketServer,omitempty"`
	// AzureDevOps is the configuration of the provider registered as
	// "azureDevOps" (Argo CD spells the key azuredevops here).
	AzureDevOps json.RawMessage `json:"azuredevops,omitempty"`
	// Values are extra parameters (values.<key>), themselves templates
	// rendered with the pull request's parameters.
	Values map[string]string `json:"values,omitempty"`
	// ContinueOnRepoNotFoundError yields no parameter set, instead of
	// failing, when the forge answers that the repository does not exist.
	ContinueOnRepoNotFoundError bool `json:"continueOnRepoNotFoundError,omitempty"`
	// Filters keep the pull requests that pass any one of them; with none,
	// every open pull request is kept.
	Filters []PullRequestGeneratorFilter `json:"filters,omitempty"`
	// RequeueAfterSeconds is how often the set is generated again, at least;
	// the shortest of a set's generators applies.
	RequeueAfterSeconds *int64 `json:"requeueAfterSeconds,omitempty"`
	// Template overlays the set's template for this generator's Applications.
	Template *ApplicationSetTemplate `json:"template,omitempty"`
}

// PullRequestGeneratorFilter keeps pull requests whose branches and title
// match (regular expressions; all the fields set).
type PullRequestGeneratorFilter struct {
	// BranchMatch is a regular expression the pull request's branch matches.
	BranchMatch *string `json:"branchMatch,omitempty"`
	// TargetBranchMatch is a regular expression the branch it targets matches.
	TargetBranchMatch *string `json:"targetBranchMatch,omitempty"`
	// TitleMatch is a regular expression the pull request's title matches.
	TitleMatch *string `json:"titleMatch,omitempty"`
}

// DuckTypeGenerator yields a set per decision of a
// duck-typed resource (status.decisions[].clusterName) read from the
// cluster.
type DuckTypeGenerator struct {
	// ConfigMapRef names the ConfigMap, in the controller's namespace, that
	// says which resource to read (apiVersion, kind, statusListKey, matchKey).
	// Required.
	ConfigMapRef string `json:"configMapRef"`
	// Name reads the one resource of this name; otherwise LabelSelector
	// selects them.
	Name string `json:"name,omitempty"`
	// LabelSelector selects the resources read.
	LabelSelector metav1.LabelSelector `json:"labelSelector,omitempty"`
	// RequeueAfterSeconds is how often the set is generated again, at least;
	// the shortest of a set's generators applies.
	RequeueAfterSeconds *int64 `json:"requeueAfterSeconds,omitempty"`
	// Template overlays the set's template for this generator's Applications.
	Template *ApplicationSetTemplate `json:"template,omitempty"`
	// Values are extra parameters (values.<key>), themselves templates
	// rendered with the decision's parameters.
	Values map[string]string `json:"values,omitempty"`
}

// PluginGenerator asks a plugin service for parameter sets: an HTTP POST of
// its input to the baseUrl the ConfigMap names, with the ConfigMap's
// token, as Argo CD's plugin generator does.
type PluginGenerator struct {
	// ConfigMapRef names the ConfigMap, in the controller's namespace, that
	// holds the plugin's baseUrl, token ("$key" of argocd-secret or
	// "$secret:key") and requestTimeout (seconds). Required.
	ConfigMapRef PluginConfigMapRef `json:"configMapRef"`
	// Input is sent to the plugin.
	Input PluginInput `json:"input,omitempty"`
	// RequeueAfterSeconds is how often the set is generated again, at least;
	// the shortest of a set's generators applies. Default 30 minutes.
	RequeueAfterSeconds *int64 `json:"requeueAfterSeconds,omitempty"`
	// Template overlays the set's template for this generator's Applications.
	Template *ApplicationSetTemplate `json:"template,omitempty"`
	// Values are extra parameters (values.<key>), themselves templates
	// rendered with the plugin's parameters; they are not sent to the
	// plugin.
	Values map[string]string `json:"values,omitempty"`
}

// PluginConfigMapRef names a plugin's ConfigMap.
type PluginConfigMapRef struct {
	// Name is the ConfigMap's name.
	Name string `json:"name"`
}

// PluginInput is what a plugin generator sends to its plugin.
type PluginInput struct {
	// Parameters are sent as input.parameters (any JSON values) and are
	// the generated parameter sets' generator.input.parameters.
	Parameters map[string]json.RawMessage `json:"parameters,omitempty"`
}
