package appset

import (
	"encoding/json"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// ApplicationSet is an Argo CD ApplicationSet (argoproj.io/v1alpha1), with
// Argo CD's field names so that manifests written for Argo CD load
// unchanged. Fields Argo CD has and this package does not implement are
// refused by Load (an unknown field) rather than ignored.
type ApplicationSet struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              Spec `json:"spec"`
}

// Spec is what an ApplicationSet generates and how it rolls it out.
type Spec struct {
	// GoTemplate renders the template with text/template and sprig instead
	// of the fasttemplate default ({{path.basename}}).
	GoTemplate bool `json:"goTemplate,omitempty"`
	// GoTemplateOptions are text/template options; "missingkey=error" makes
	// a missing parameter an error.
	GoTemplateOptions []string `json:"goTemplateOptions,omitempty"`
	// Generators produce the parameter sets; their outputs are joined.
	Generators []Generator `json:"generators"`
	// Template is the Application each parameter set is rendered into.
	Template Template `json:"template"`
	// TemplatePatch is a go template rendered per parameter set whose
	// result (YAML or JSON) is merged over the rendered Application
	// (RFC 7386 merge patch: maps merge, lists are replaced, null deletes).
	// It needs GoTemplate.
	TemplatePatch *string `json:"templatePatch,omitempty"`
	// SyncPolicy says what the set may do to the Applications it owns.
	SyncPolicy *SyncPolicy `json:"syncPolicy,omitempty"`
	// Strategy is how changed Applications are rolled out.
	Strategy *Strategy `json:"strategy,omitempty"`
	// IgnoreApplicationDifferences are fields of generated Applications
	// the set does not overwrite once the Application exists.
	IgnoreApplicationDifferences []IgnoreDifference `json:"ignoreApplicationDifferences,omitempty"`
}

// Template is an Application without kind: its metadata and spec. The spec
// is kept as raw JSON: it is rendered per parameter set and the result is
// checked by the host's Application loader (Options.Validate).
type Template struct {
	Metadata TemplateMeta    `json:"metadata"`
	Spec     json.RawMessage `json:"spec,omitempty"`
}

// TemplateMeta is the metadata of a generated Application.
type TemplateMeta struct {
	Name        string            `json:"name,omitempty"`
	Namespace   string            `json:"namespace,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
	Finalizers  []string          `json:"finalizers,omitempty"`
}

// SyncPolicy limits what the set does to its Applications.
type SyncPolicy struct {
	// PreserveResourcesOnDeletion keeps the objects of an Application the
	// set deletes (its resources-finalizer is not honoured).
	PreserveResourcesOnDeletion bool `json:"preserveResourcesOnDeletion,omitempty"`
	// ApplicationsSync is one of create-only, create-update, create-delete
	// and sync (the default: create, update and delete).
	ApplicationsSync *string `json:"applicationsSync,omitempty"`
}

// The values of SyncPolicy.ApplicationsSync.
const (
	PolicyCreateOnly   = "create-only"
	PolicyCreateUpdate = "create-update"
	PolicyCreateDelete = "create-delete"
	PolicySync         = "sync"
)

// Strategy is the rollout of generated Applications.
type Strategy struct {
	// Type is AllAtOnce (the default) or RollingSync.
	Type        string               `json:"type,omitempty"`
	RollingSync *RollingSyncStrategy `json:"rollingSync,omitempty"`
}

// RollingSyncStrategy syncs Applications in steps.
type RollingSyncStrategy struct {
	Steps []RollingSyncStep `json:"steps,omitempty"`
}

// RollingSyncStep selects the Applications of one step by their labels;
// MaxUpdate bounds how many of them sync at once (a number or a
// percentage; default all).
type RollingSyncStep struct {
	MatchExpressions []MatchExpression   `json:"matchExpressions,omitempty"`
	MaxUpdate        *intstr.IntOrString `json:"maxUpdate,omitempty"`
}

// MatchExpression is a label requirement: In or NotIn with values.
type MatchExpression struct {
	Key      string   `json:"key"`
	Operator string   `json:"operator"`
	Values   []string `json:"values,omitempty"`
}

// IgnoreDifference names Application fields the set does not overwrite.
type IgnoreDifference struct {
	Name              string   `json:"name,omitempty"`
	JSONPointers      []string `json:"jsonPointers,omitempty"`
	JQPathExpressions []string `json:"jqPathExpressions,omitempty"`
}

// Generator is one generator of a set: exactly one of its kinds is set,
// with an optional Selector filtering its parameter sets.
type Generator struct {
	List                    *ListGenerator                    `json:"list,omitempty"`
	Clusters                *ClustersGenerator                `json:"clusters,omitempty"`
	Git                     *GitGenerator                     `json:"git,omitempty"`
	Matrix                  *MatrixGenerator                  `json:"matrix,omitempty"`
	Merge                   *MergeGenerator                   `json:"merge,omitempty"`
	SCMProvider             *SCMProviderGenerator             `json:"scmProvider,omitempty"`
	PullRequest             *PullRequestGenerator             `json:"pullRequest,omitempty"`
	ClusterDecisionResource *ClusterDecisionResourceGenerator `json:"clusterDecisionResource,omitempty"`
	// Selector keeps only the parameter sets whose (flattened) values
	// match it.
	Selector *metav1.LabelSelector `json:"selector,omitempty"`
}

// ListGenerator yields its elements as parameter sets.
type ListGenerator struct {
	Elements []json.RawMessage `json:"elements,omitempty"`
	// ElementsYaml is a YAML list of elements (usually rendered from
	// another generator's parameters in a matrix).
	ElementsYaml string    `json:"elementsYaml,omitempty"`
	Template     *Template `json:"template,omitempty"`
}

// ClustersGenerator yields one parameter set per Argo CD cluster Secret
// (and the local cluster when there is no selector).
type ClustersGenerator struct {
	Selector metav1.LabelSelector `json:"selector,omitempty"`
	Template *Template            `json:"template,omitempty"`
	Values   map[string]string    `json:"values,omitempty"`
	FlatList bool                 `json:"flatList,omitempty"`
}

// GitGenerator yields a parameter set per directory or per config file of
// a Git repository.
type GitGenerator struct {
	RepoURL             string            `json:"repoURL"`
	Revision            string            `json:"revision,omitempty"`
	Directories         []GitPathItem     `json:"directories,omitempty"`
	Files               []GitPathItem     `json:"files,omitempty"`
	RequeueAfterSeconds *int64            `json:"requeueAfterSeconds,omitempty"`
	Template            *Template         `json:"template,omitempty"`
	PathParamPrefix     string            `json:"pathParamPrefix,omitempty"`
	Values              map[string]string `json:"values,omitempty"`
}

// GitPathItem is a glob of directories or files; Exclude removes what it
// matches.
type GitPathItem struct {
	Path    string `json:"path"`
	Exclude bool   `json:"exclude,omitempty"`
}

// MatrixGenerator yields the cartesian product of two generators' sets;
// one of them (the second, as in Argo CD, or the first) may use the
// other's parameters.
type MatrixGenerator struct {
	Generators []Generator `json:"generators"`
	Template   *Template   `json:"template,omitempty"`
}

// MergeGenerator merges the sets of later generators into the first's
// where their MergeKeys values are equal.
type MergeGenerator struct {
	Generators []Generator `json:"generators"`
	MergeKeys  []string    `json:"mergeKeys"`
	Template   *Template   `json:"template,omitempty"`
}

// SCMProviderGenerator yields a set per repository of an SCM provider.
// Exactly one provider key (github, gitlab, ...) is set; its config is
// passed unchanged to the provider the host registered under that key
// (Options.SCMProviders). There is no built-in network provider.
type SCMProviderGenerator struct {
	Github              json.RawMessage     `json:"github,omitempty"`
	Gitlab              json.RawMessage     `json:"gitlab,omitempty"`
	Gitea               json.RawMessage     `json:"gitea,omitempty"`
	Bitbucket           json.RawMessage     `json:"bitbucket,omitempty"`
	BitbucketServer     json.RawMessage     `json:"bitbucketServer,omitempty"`
	AzureDevOps         json.RawMessage     `json:"azureDevOps,omitempty"`
	AWSCodeCommit       json.RawMessage     `json:"awsCodeCommit,omitempty"`
	CloneProtocol       string              `json:"cloneProtocol,omitempty"`
	Filters             []SCMProviderFilter `json:"filters,omitempty"`
	RequeueAfterSeconds *int64              `json:"requeueAfterSeconds,omitempty"`
	Template            *Template           `json:"template,omitempty"`
	Values              map[string]string   `json:"values,omitempty"`
}

// SCMProviderFilter keeps repositories matching all of its set fields
// (regular expressions; PathsExist and PathsDoNotExist are paths).
type SCMProviderFilter struct {
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
	Github              json.RawMessage     `json:"github,omitempty"`
	Gitlab              json.RawMessage     `json:"gitlab,omitempty"`
	Gitea               json.RawMessage     `json:"gitea,omitempty"`
	Bitbucket           json.RawMessage     `json:"bitbucket,omitempty"`
	BitbucketServer     json.RawMessage     `json:"bitbucketServer,omitempty"`
	AzureDevOps         json.RawMessage     `json:"azureDevOps,omitempty"`
	Filters             []PullRequestFilter `json:"filters,omitempty"`
	RequeueAfterSeconds *int64              `json:"requeueAfterSeconds,omitempty"`
	Template            *Template           `json:"template,omitempty"`
}

// PullRequestFilter keeps pull requests whose branches match (regular
// expressions).
type PullRequestFilter struct {
	BranchMatch       *string `json:"branchMatch,omitempty"`
	TargetBranchMatch *string `json:"targetBranchMatch,omitempty"`
}

// ClusterDecisionResourceGenerator yields a set per decision of a
// duck-typed resource (status.decisions[].clusterName) read from the
// cluster.
type ClusterDecisionResourceGenerator struct {
	ConfigMapRef        string               `json:"configMapRef"`
	Name                string               `json:"name,omitempty"`
	LabelSelector       metav1.LabelSelector `json:"labelSelector,omitempty"`
	RequeueAfterSeconds *int64               `json:"requeueAfterSeconds,omitempty"`
	Template            *Template            `json:"template,omitempty"`
	Values              map[string]string    `json:"values,omitempty"`
}
