package gitops

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// ConfigMapStateStore keeps each app's state in a ConfigMap of one
// namespace ("gitops-state-<app>", key state.json), for hosts without the
// Application CRD: a CLI run after an agent's can show what its last
// automated sync did, and history survives restarts. Writes are guarded by
// resourceVersion, so two writers never silently overwrite each other.
type ConfigMapStateStore struct {
	client    kubernetes.Interface
	namespace string
}

// stateKey is the ConfigMap key holding the JSON state.
const stateKey = "state.json"

// stateLabel marks the ConfigMaps of a ConfigMapStateStore.
const stateLabel = "gitops.kubegitops.io/state-of"

// NewConfigMapStateStore returns a store in namespace, which must exist.
func NewConfigMapStateStore(client kubernetes.Interface, namespace string) *ConfigMapStateStore {
	return &ConfigMapStateStore{client: client, namespace: namespace}
}

// configMapName names an app's ConfigMap; names too long for the prefix
// are shortened with a hash.
func configMapName(app string) string {
	name := "gitops-state-" + app
	if len(name) <= 253 {
		return name
	}
	sum := sha256.Sum256([]byte(app))
	return "gitops-state-" + app[:200] + "-" + hex.EncodeToString(sum[:8])
}

// Load implements StateStore.
func (s *ConfigMapStateStore) Load(ctx context.Context, app string) (AppState, error) {
	cm, err := s.client.CoreV1().ConfigMaps(s.namespace).Get(ctx, configMapName(app), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return AppState{}, nil
	}
	if err != nil {
		return AppState{}, fmt.Errorf("state of %s: %w", app, err)
	}
	var st AppState
	if err := json.Unmarshal([]byte(cm.Data[stateKey]), &st); err != nil {
		return AppState{}, fmt.Errorf("state of %s: ConfigMap %s/%s: %w", app, s.namespace, cm.Name, err)
	}
	return st, nil
}

// Save implements StateStore.
func (s *ConfigMapStateStore) Save(ctx context.Context, app string, st AppState) error {
	data, err := json.Marshal(st)
	if err != nil {
		return fmt.Errorf("state of %s: %w", app, err)
	}
	cms := s.client.CoreV1().ConfigMaps(s.namespace)
	name := configMapName(app)
	cur, err := cms.Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: s.namespace,
			Labels: map[string]string{stateLabel: labelValue(app)}}, Data: map[string]string{stateKey: string(data)}}
		_, err = cms.Create(ctx, cm, metav1.CreateOptions{})
	case err == nil:
		cur.Data = map[string]string{stateKey: string(data)}
		_, err = cms.Update(ctx, cur, metav1.UpdateOptions{})
	}
	if err != nil {
		return fmt.Errorf("state of %s: ConfigMap %s/%s: %w", app, s.namespace, name, err)
	}
	return nil
}

// Delete implements StateStore.
func (s *ConfigMapStateStore) Delete(ctx context.Context, app string) error {
	err := s.client.CoreV1().ConfigMaps(s.namespace).Delete(ctx, configMapName(app), metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("state of %s: %w", app, err)
	}
	return nil
}

// labelValue fits an app name into a label value (63 characters).
func labelValue(app string) string {
	if len(app) <= 63 {
		return app
	}
	sum := sha256.Sum256([]byte(app))
	return app[:46] + "-" + hex.EncodeToString(sum[:8])
}
