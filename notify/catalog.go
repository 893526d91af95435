package notify

import (
	_ "embed"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

//go:embed catalog.yaml
var catalogYAML []byte

// CatalogTriggers are the names of the catalog's triggers, Argo CD's.
var CatalogTriggers = []string{"on-created", "on-deleted", "on-deployed", "on-health-degraded",
	"on-sync-failed", "on-sync-running", "on-sync-status-unknown", "on-sync-succeeded"}

// Catalog returns the catalog's ConfigMap data (trigger.* and template.*
// entries), a new map each time. The triggers are Argo CD's, written from
// its catalog's semantics: on-created (once per app), on-deleted (deletion
// timestamp set, once per app), on-deployed (sync Succeeded and health
// Healthy since the sync finished, once per synced revision),
// on-health-degraded (health Degraded), on-sync-failed (phase Error or
// Failed), on-sync-running (phase Running) and on-sync-succeeded (phase
// Succeeded), these three once per synced revision, and
// on-sync-status-unknown (sync status Unknown). on-health-degraded and
// on-sync-status-unknown send once per change, where Argo CD's catalog keys
// them by revision too (catalog.yaml says why). Merge it under a
// ConfigMap's own data with WithCatalog.
func Catalog() map[string]string {
	var cm corev1.ConfigMap
	if err := yaml.Unmarshal(catalogYAML, &cm); err != nil {
		// The file is embedded and checked by the package's tests.
		return map[string]string{}
	}
	return cm.Data
}

// CatalogManifest is the catalog as a ConfigMap manifest (YAML).
func CatalogManifest() []byte { return append([]byte(nil), catalogYAML...) }

// WithCatalog returns data with the catalog's entries added where data
// has no entry of the same key.
func WithCatalog(data map[string]string) map[string]string {
	out := Catalog()
	for k, v := range data {
		out[k] = v
	}
	return out
}
