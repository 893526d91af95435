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
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              ApplicationSetSpec `json:"spec"`
	// Status is what the controller did, read leniently by the loader.
	Status ApplicationSetStatus `json:"status,omitzero"`
}

// ApplicationSetList is a list of ApplicationSets.
//
// +kubebuilder:object:root=true
type ApplicationSetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ApplicationSet `json:"items"`
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
	Type    string `json:"type"`
	Message string `json:"message"`
	// Status is "True", "False" or "Unknown".
	Status string `json:"status"`
	// Reason is a one-word cause.
	Reason             string       `json:"reason"`
	LastTransitionTime *metav1.Time `json:"lastTransitionTime,omitempty"`
}

// ApplicationSetApplicationStatus is one generated Application's step in
// a RollingSync.
type ApplicationSetApplicationStatus struct {
	Application string `json:"application"`
	// Status is Waiting, Pending, Progressing or Healthy.
	Status             string       `json:"status"`
	Message            string       `json:"message"`
	Step               string       `json:"step"`
	TargetRevisions    []string     `json:"targetRevisions,omitempty"`
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
}

// ApplicationSetTemplate is an Application without kind: its metadata and spec. The spec
// is kept as raw JSON: it is rendered per parameter set and the result is
// checked by the host's Application loader (Options.Validate).
type ApplicationSetTemplate struct {
	Metadata ApplicationSetTemplateMeta `json:"metadata"`
	Spec     json.RawMessage            `json:"spec,omitempty"`
}

// ApplicationSetTemplateMeta is the metadata of a generated Application.
type ApplicationSetTemplateMeta struct {
	Name        string            `json:"name,omitempty"`
	Namespace   string            `json:"namespace,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
	Finalizers  []string          `json:"finalizers,omitempty"`
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
	Type        string                         `json:"type,omitempty"`
	RollingSync *ApplicationSetRolloutStrategy `json:"rollingSync,omitempty"`
}

// ApplicationSetRolloutStrategy syncs Applications in steps.
type ApplicationSetRolloutStrategy struct {
	Steps []ApplicationSetRolloutStep `json:"steps,omitempty"`
}

// ApplicationSetRolloutStep selects the Applications of one step by their labels;
// MaxUpdate bounds how many of them sync at once (a number or a
// percentage; default all).
type ApplicationSetRolloutStep struct {
	MatchExpressions []ApplicationMatchExpression `json:"matchExpressions,omitempty"`
	MaxUpdate        *intstr.IntOrString          `json:"maxUpdate,omitempty"`
}

// ApplicationMatchExpression is a label requirement: In or NotIn with values.
type ApplicationMatchExpression struct {
	Key      string   `json:"key"`
	Operator string   `json:"operator"`
	Values   []string `json:"values,omitempty"`
}

// ApplicationSetResourceIgnoreDifferences names Application fields the set does not overwrite.
type ApplicationSetResourceIgnoreDifferences struct {
	Name              string   `json:"name,omitempty"`
	JSONPointers      []string `json:"jsonPointers,omitempty"`
	JQPathExpressions []string `json:"jqPathExpressions,omitempty"`
}

// ApplicationSetGenerator is one generator of a set: exactly one of its kinds is set,
// with an optional Selector filtering its parameter sets.
type ApplicationSetGenerator struct {
	List                    *ListGenerator        `json:"list,omitempty"`
	Clusters                *ClusterGenerator     `json:"clusters,omitempty"`
	Git                     *GitGenerator         `json:"git,omitempty"`
	Matrix                  *MatrixGenerator      `json:"matrix,omitempty"`
	Merge                   *MergeGenerator       `json:"merge,omitempty"`
	SCMProvider             *SCMProviderGenerator `json:"scmProvider,omitempty"`
	PullRequest             *PullRequestGenerator `json:"pullRequest,omitempty"`
	ClusterDecisionResource *DuckTypeGenerator    `json:"clusterDecisionResource,omitempty"`
	// Selector keeps only the parameter sets whose (flattened) values
	// match it.
	Selector *metav1.LabelSelector `json:"selector,omitempty"`
}

// ListGenerator yields its elements as parameter sets.
type ListGenerator struct {
	Elements []json.RawMessage `json:"elements,omitempty"`
	// ElementsYaml is a YAML list of elements (usually rendered from
	// another generator's parameters in a matrix).
	ElementsYaml string                  `json:"elementsYaml,omitempty"`
	Template     *ApplicationSetTemplate `json:"template,omitempty"`
}

// ClusterGenerator yields one parameter set per Argo CD cluster Secret
// (and the local cluster when there is no selector).
type ClusterGenerator struct {
	Selector metav1.LabelSelector    `json:"selector,omitempty"`
	Template *ApplicationSetTemplate `json:"template,omitempty"`
	Values   map[string]string       `json:"values,omitempty"`
	FlatList bool                    `json:"flatList,omitempty"`
}

// GitGenerator yields a parameter set per directory or per config file of
// a Git repository.
type GitGenerator struct {
	RepoURL             string                  `json:"repoURL"`
	Revision            string                  `json:"revision,omitempty"`
	Directories         []GitGeneratorItem      `json:"directories,omitempty"`
	Files               []GitGeneratorItem      `json:"files,omitempty"`
	RequeueAfterSeconds *int64                  `json:"requeueAfterSeconds,omitempty"`
	Template            *ApplicationSetTemplate `json:"template,omitempty"`
	PathParamPrefix     string                  `json:"pathParamPrefix,omitempty"`
	Values              map[string]string       `json:"values,omitempty"`
}

// GitGeneratorItem is a glob of directories or files; Exclude removes what it
// matches.
type GitGeneratorItem struct {
	Path    string `json:"path"`
	Exclude bool   `json:"exclude,omitempty"`
}

// MatrixGenerator yields the cartesian product of two generators' sets;
// one of them (the second, as in Argo CD, or the first) may use the
// other's parameters.
type MatrixGenerator struct {
	Generators []ApplicationSetGenerator `json:"generators"`
	Template   *ApplicationSetTemplate   `json:"template,omitempty"`
}

// MergeGenerator merges the sets of later generators into the first's
// where their MergeKeys values are equal.
type MergeGenerator struct {
	Generators []ApplicationSetGenerator `json:"generators"`
	MergeKeys  []string                  `json:"mergeKeys"`
	Template   *ApplicationSetTemplate   `json:"template,omitempty"`
}

// SCMProviderGenerator yields a set per repository of an SCM provider.
// Exactly one provider key (github, gitlab, ...) is set; its config is
// passed unchanged to the provider the host registered under that key
// (Options.SCMProviders). There is no built-in network provider.
type SCMProviderGenerator struct {
	Github              json.RawMessage              `json:"github,omitempty"`
	Gitlab              json.RawMessage              `json:"gitlab,omitempty"`
	Gitea               json.RawMessage              `json:"gitea,omitempty"`
	Bitbucket           json.RawMessage              `json:"bitbucket,omitempty"`
	BitbucketServer     json.RawMessage              `json:"bitbucketServer,omitempty"`
	AzureDevOps         json.RawMessage              `json:"azureDevOps,omitempty"`
	AWSCodeCommit       json.RawMessage              `json:"awsCodeCommit,omitempty"`
	CloneProtocol       string                       `json:"cloneProtocol,omitempty"`
	Filters             []SCMProviderGeneratorFilter `json:"filters,omitempty"`
	RequeueAfterSeconds *int64                       `json:"requeueAfterSeconds,omitempty"`
	Template            *ApplicationSetTemplate      `json:"template,omitempty"`
	Values              map[string]string            `json:"values,omitempty"`
}

// SCMProviderGeneratorFilter keeps repositories matching all of its set fields
// (regular expressions; PathsExist and PathsDoNotExist are paths).
type SCMProviderGeneratorFilter struct {
	RepositoryMatch *string  `json:"repositoryMatch,omitempty"`
	PathsExist      []string `json:"pathsExist,omitempty"`
	PathsDoNotExist []string `json:"pathsDoNotExist,omitempty"`
	LabelMatch      *string  `json:"labelMatch,omitempty"`
	BranchMatch     *string  `json:"branchMatch,omitempty"`
}

// PullRequestGenerator yields a set per open pull request, from the
// provider the host registered under the key that is set
// (Options.PullRequestProviders). There is no built-in network provider.
type PullRequestGenerator struct {
	Github              json.RawMessage              `json:"github,omitempty"`
	Gitlab              json.RawMessage              `json:"gitlab,omitempty"`
	Gitea               json.RawMessage              `json:"gitea,omitempty"`
	Bitbucket           json.RawMessage              `json:"bitbucket,omitempty"`
	BitbucketServer     json.RawMessage              `json:"bitbucketServer,omitempty"`
	AzureDevOps         json.RawMessage              `json:"azureDevOps,omitempty"`
	Filters             []PullRequestGeneratorFilter `json:"filters,omitempty"`
	RequeueAfterSeconds *int64                       `json:"requeueAfterSeconds,omitempty"`
	Template            *ApplicationSetTemplate      `json:"template,omitempty"`
}

// PullRequestGeneratorFilter keeps pull requests whose branches match (regular
// expressions).
type PullRequestGeneratorFilter struct {
	BranchMatch       *string `json:"branchMatch,omitempty"`
	TargetBranchMatch *string `json:"targetBranchMatch,omitempty"`
}

// DuckTypeGenerator yields a set per decision of a
// duck-typed resource (status.decisions[].clusterName) read from the
// cluster.
type DuckTypeGenerator struct {
	ConfigMapRef        string                  `json:"configMapRef"`
	Name                string                  `json:"name,omitempty"`
	LabelSelector       metav1.LabelSelector    `json:"labelSelector,omitempty"`
	RequeueAfterSeconds *int64                  `json:"requeueAfterSeconds,omitempty"`
	Template            *ApplicationSetTemplate `json:"template,omitempty"`
	Values              map[string]string       `json:"values,omitempty"`
}
