package state

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

// ConfigMapStore keeps each app's state in a ConfigMap of one
// namespace ("gitops-state-<key>", key state.json), for hosts without the
// Application CRD: a CLI run after an agent's can show what its last
// automated sync did, and history survives restarts. Writes are guarded by
// resourceVersion, so two writers never silently overwrite each other.
type ConfigMapStore struct {
	client    kubernetes.Interface
	namespace string
}

// stateKey is the ConfigMap key holding the JSON state.
const stateKey = "state.json"

// stateLabel marks the ConfigMaps of a ConfigMapStore.
const stateLabel = "gitops.kubegitops.io/state-of"

// NewConfigMapStore returns a store in namespace, which must exist.
func NewConfigMapStore(client kubernetes.Interface, namespace string) *ConfigMapStore {
	return &ConfigMapStore{client: client, namespace: namespace}
}

// configMapName names an app's ConfigMap; keys too long for the prefix
// are shortened with a hash.
func configMapName(key string) string {
	name := "gitops-state-" + key
	if len(name) <= 253 {
		return name
	}
	sum := sha256.Sum256([]byte(key))
	return "gitops-state-" + key[:200] + "-" + hex.EncodeToString(sum[:8])
}

// Load implements Store.
func (s *ConfigMapStore) Load(ctx context.Context, key string) (AppState, error) {
	cm, err := s.client.CoreV1().ConfigMaps(s.namespace).Get(ctx, configMapName(key), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return AppState{}, nil
	}
	if err != nil {
		return AppState{}, fmt.Errorf("state of %s: %w", key, err)
	}
	var st AppState
	if err := json.Unmarshal([]byte(cm.Data[stateKey]), &st); err != nil {
		return AppState{}, fmt.Errorf("state of %s: ConfigMap %s/%s: %w", key, s.namespace, cm.Name, err)
	}
	return st, nil
}

// Save implements Store.
func (s *ConfigMapStore) Save(ctx context.Context, key string, st AppState) error {
	data, err := json.Marshal(st)
	if err != nil {
		return fmt.Errorf("state of %s: %w", key, err)
	}
	cms := s.client.CoreV1().ConfigMaps(s.namespace)
	name := configMapName(key)
	cur, err := cms.Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: s.namespace,
			Labels: map[string]string{stateLabel: labelValue(key)}}, Data: map[string]string{stateKey: string(data)}}
		_, err = cms.Create(ctx, cm, metav1.CreateOptions{})
	case err == nil:
		cur.Data = map[string]string{stateKey: string(data)}
		_, err = cms.Update(ctx, cur, metav1.UpdateOptions{})
	}
	if err != nil {
		return fmt.Errorf("state of %s: ConfigMap %s/%s: %w", key, s.namespace, name, err)
	}
	return nil
}

// Delete implements Store.
func (s *ConfigMapStore) Delete(ctx context.Context, key string) error {
	err := s.client.CoreV1().ConfigMaps(s.namespace).Delete(ctx, configMapName(key), metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("state of %s: %w", key, err)
	}
	return nil
}

// labelValue fits an app key into a label value (63 characters).
func labelValue(key string) string {
	if len(key) <= 63 {
		return key
	}
	sum := sha256.Sum256([]byte(key))
	return key[:46] + "-" + hex.EncodeToString(sum[:8])
}
