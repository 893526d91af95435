package appset

import "github.com/kubegitops/gitops/apis/v1alpha1"

// The ApplicationSet types are the model's (package apis/v1alpha1, with
// Argo CD's names); these aliases keep this package's names.
type (
	// ApplicationSet is v1alpha1.ApplicationSet.
	ApplicationSet = v1alpha1.ApplicationSet
	// Spec is v1alpha1.ApplicationSetSpec.
	Spec = v1alpha1.ApplicationSetSpec
	// Template is v1alpha1.ApplicationSetTemplate.
	Template = v1alpha1.ApplicationSetTemplate
	// TemplateMeta is v1alpha1.ApplicationSetTemplateMeta.
	TemplateMeta = v1alpha1.ApplicationSetTemplateMeta
	// SyncPolicy is v1alpha1.ApplicationSetSyncPolicy.
	SyncPolicy = v1alpha1.ApplicationSetSyncPolicy
	// Strategy is v1alpha1.ApplicationSetStrategy.
	Strategy = v1alpha1.ApplicationSetStrategy
	// RollingSyncStrategy is v1alpha1.ApplicationSetRolloutStrategy.
	RollingSyncStrategy = v1alpha1.ApplicationSetRolloutStrategy
	// RollingSyncStep is v1alpha1.ApplicationSetRolloutStep.
	RollingSyncStep = v1alpha1.ApplicationSetRolloutStep
	// MatchExpression is v1alpha1.ApplicationMatchExpression.
	MatchExpression = v1alpha1.ApplicationMatchExpression
	// IgnoreDifference is v1alpha1.ApplicationSetResourceIgnoreDifferences.
	IgnoreDifference = v1alpha1.ApplicationSetResourceIgnoreDifferences
	// Generator is v1alpha1.ApplicationSetGenerator.
	Generator = v1alpha1.ApplicationSetGenerator
	// ListGenerator is v1alpha1.ListGenerator.
	ListGenerator = v1alpha1.ListGenerator
	// ClustersGenerator is v1alpha1.ClusterGenerator.
	ClustersGenerator = v1alpha1.ClusterGenerator
	// GitGenerator is v1alpha1.GitGenerator.
	GitGenerator = v1alpha1.GitGenerator
	// GitPathItem is v1alpha1.GitGeneratorItem.
	GitPathItem = v1alpha1.GitGeneratorItem
	// MatrixGenerator is v1alpha1.MatrixGenerator.
	MatrixGenerator = v1alpha1.MatrixGenerator
	// MergeGenerator is v1alpha1.MergeGenerator.
	MergeGenerator = v1alpha1.MergeGenerator
	// SCMProviderGenerator is v1alpha1.SCMProviderGenerator.
	SCMProviderGenerator = v1alpha1.SCMProviderGenerator
	// SCMProviderFilter is v1alpha1.SCMProviderGeneratorFilter.
	SCMProviderFilter = v1alpha1.SCMProviderGeneratorFilter
	// PullRequestGenerator is v1alpha1.PullRequestGenerator.
	PullRequestGenerator = v1alpha1.PullRequestGenerator
	// PullRequestFilter is v1alpha1.PullRequestGeneratorFilter.
	PullRequestFilter = v1alpha1.PullRequestGeneratorFilter
	// ClusterDecisionResourceGenerator is v1alpha1.DuckTypeGenerator.
	ClusterDecisionResourceGenerator = v1alpha1.DuckTypeGenerator
	// PluginGenerator is v1alpha1.PluginGenerator.
	PluginGenerator = v1alpha1.PluginGenerator
)

// The values of SyncPolicy.ApplicationsSync.
const (
	PolicyCreateOnly   = v1alpha1.ApplicationsSyncCreateOnly
	PolicyCreateUpdate = v1alpha1.ApplicationsSyncCreateUpdate
	PolicyCreateDelete = v1alpha1.ApplicationsSyncCreateDelete
	PolicySync         = v1alpha1.ApplicationsSyncSync
)
