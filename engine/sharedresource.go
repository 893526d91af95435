package engine

import (
	"fmt"
	"sort"
	"strings"

	"github.com/kubegitops/gitops/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// SharedResourceError fails a sync with FailOnSharedResource=true before
// any write: objects of the app that another app already manages.
type SharedResourceError struct {
	// App is the application being synced.
	App string
	// Owners maps each shared object to the app that manages it.
	Owners map[resource.Key]string
}

// Error implements error: every shared object and its other app.
func (e *SharedResourceError) Error() string {
	parts := make([]string, 0, len(e.Owners))
	for k, other := range e.Owners {
		parts = append(parts, fmt.Sprintf("%s is managed by application %s", k, other))
	}
	sort.Strings(parts)
	return fmt.Sprintf("sync of %s refused (FailOnSharedResource=true): %s", e.App, strings.Join(parts, "; "))
}

// sharedResources refuses a sync of app whose desired objects another app
// already manages (compare.Comparer.SharedOwners).
func (e *Engine) sharedResources(cs *clusterState, app *Application, desired []*unstructured.Unstructured) error {
	owners := e.parts().comparer.SharedOwners(app, e.instanceOf(app), e.compareView(cs), desired)
	if len(owners) == 0 {
		return nil
	}
	return &SharedResourceError{App: app.Name, Owners: owners}
}
