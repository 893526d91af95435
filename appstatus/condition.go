package appstatus

// ConditionType classifies a condition.
type ConditionType string

// Condition types, Argo CD's.
const (
	ConditionComparisonError     ConditionType = "ComparisonError"
	ConditionInvalidSpec         ConditionType = "InvalidSpecError"
	ConditionSyncError           ConditionType = "SyncError"
	ConditionSharedResource      ConditionType = "SharedResourceWarning"
	ConditionTaintedKinds        ConditionType = "TaintedKindsWarning"
	ConditionSyncWindowBlocked   ConditionType = "SyncWindowBlocked"
	ConditionOrphanedResources   ConditionType = "OrphanedResourceWarning"
	ConditionRepeatedSyncFailure ConditionType = "RepeatedSyncFailure"
	// ConditionExcludedResource warns that an app's desired state holds
	// objects of kinds the engine excludes (Options.Cache.Filter, argocd-cm's
	// resource.exclusions and resource.inclusions): they are neither
	// compared nor applied, as in Argo CD.
	ConditionExcludedResource ConditionType = "ExcludedResourceWarning"
)

// Condition is an error or warning about an application.
type Condition struct {
	// Type says what kind of error or warning this is.
	Type ConditionType `json:"type"`
	// Message is the condition's text, for people.
	Message string `json:"message"`
	// Err is the typed error the condition reports (Message is its text),
	// for errors.As (a *engine.ClusterUnavailableError, say); nil for a
	// warning or a condition read back from JSON, which does not keep it.
	Err error `json:"-"`
}

// IsError reports whether the condition is an error rather than a warning.
func (c Condition) IsError() bool {
	switch c.Type {
	case ConditionComparisonError, ConditionInvalidSpec, ConditionSyncError, ConditionRepeatedSyncFailure:
		return true
	}
	return false
}

// HasError reports whether any of cs is an error (IsError).
func HasError(cs []Condition) bool {
	for _, c := range cs {
		if c.IsError() {
			return true
		}
	}
	return false
}
