package notify

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"sort"
	"strings"
	gosync "sync"
	"time"

	"k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
)

// NotifiedAnnotation is the annotation of an Application where Argo CD
// keeps what was sent for it: a JSON map of state key (StateKey) to the
// Unix time it was sent.
const NotifiedAnnotation = "notified.notifications.argoproj.io"

// notifiedMaxSize is how many keys the annotation keeps (Argo CD's
// notifiedHistoryMaxSize); past it the oldest are dropped.
const notifiedMaxSize = 100

// Annotations reads and writes one annotation of an Application: the seam
// to where a host keeps its Applications. DynamicAnnotations is one for the
// Application custom resource in a cluster.
type Annotations interface {
	// Annotation returns the value of annotation key of the Application
	// namespace/name ("" when it has none).
	Annotation(ctx context.Context, namespace, name, key string) (string, error)
	// SetAnnotation sets annotation key of the Application namespace/name
	// to value, or removes it when value is "".
	SetAnnotation(ctx context.Context, namespace, name, key, value string) error
}

// AnnotationState is a State kept where Argo CD keeps it: in the
// notified.notifications.argoproj.io annotation of each Application, so
// that it survives restarts and moves with the Application. It reads and
// writes on every call. Its writes of one Application are serialised (each
// reads the annotation and writes it back with one more key), since the
// Controller records deliveries from several goroutines.
type AnnotationState struct {
	apps  Annotations
	now   func() time.Time
	locks [64]gosync.Mutex // by a hash of namespace/name
}

// NewAnnotationState returns a State kept in the Applications' annotations
// through apps.
func NewAnnotationState(apps Annotations) *AnnotationState {
	return &AnnotationState{apps: apps, now: time.Now}
}

// splitKey splits a Controller's key into the Application and the item of
// its annotation.
func splitKey(key string) (namespace, name, item string, err error) {
	id, item, ok := strings.Cut(key, "|")
	ns, n, ok2 := strings.Cut(id, "/")
	if !ok || !ok2 || n == "" {
		return "", "", "", fmt.Errorf("notification state key %q does not start with namespace/name|", key)
	}
	return ns, n, item, nil
}

func (s *AnnotationState) read(ctx context.Context, ns, name string) (map[string]int64, error) {
	v, err := s.apps.Annotation(ctx, ns, name, NotifiedAnnotation)
	if err != nil {
		return nil, err
	}
	m := map[string]int64{}
	if v != "" {
		// As Argo CD, an annotation that is not such a map is empty.
		if json.Unmarshal([]byte(v), &m) != nil {
			m = map[string]int64{}
		}
	}
	return m, nil
}

// Notified implements State.
func (s *AnnotationState) Notified(ctx context.Context, key string) (bool, error) {
	ns, name, item, err := splitKey(key)
	if err != nil {
		return false, err
	}
	m, err := s.read(ctx, ns, name)
	if err != nil {
		return false, err
	}
	_, ok := m[item]
	return ok, nil
}

// SetNotified implements State: it records key with the time, or removes
// it, keeping the newest 100 keys, and writes the annotation only when it
// changes.
func (s *AnnotationState) SetNotified(ctx context.Context, key string, notified bool) error {
	ns, name, item, err := splitKey(key)
	if err != nil {
		return err
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(ns + "/" + name))
	lock := &s.locks[h.Sum32()%uint32(len(s.locks))]
	lock.Lock()
	defer lock.Unlock()
	m, err := s.read(ctx, ns, name)
	if err != nil {
		return err
	}
	if _, ok := m[item]; ok == notified {
		return nil
	}
	if notified {
		m[item] = s.now().Unix()
	} else {
		delete(m, item)
	}
	if extra := len(m) - notifiedMaxSize; extra > 0 {
		keys := sortedKeys(m)
		sort.SliceStable(keys, func(i, j int) bool { return m[keys[i]] < m[keys[j]] })
		for _, k := range keys[:extra] {
			delete(m, k)
		}
	}
	value := ""
	if len(m) > 0 {
		b, err := json.Marshal(m)
		if err != nil {
			return err
		}
		value = string(b)
	}
	return s.apps.SetAnnotation(ctx, ns, name, NotifiedAnnotation, value)
}

// ApplicationGVR is the Application custom resource, argoproj.io/v1alpha1.
var ApplicationGVR = schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "applications"}

// DynamicAnnotations is Annotations of a custom resource (ApplicationGVR
// by default) through a dynamic client: a get to read, a JSON merge patch
// of metadata.annotations to write.
type DynamicAnnotations struct {
	// Client is the cluster's dynamic client.
	Client dynamic.Interface
	// Resource is the resource; zero: ApplicationGVR.
	Resource schema.GroupVersionResource
}

func (d DynamicAnnotations) resource(ns string) dynamic.ResourceInterface {
	gvr := d.Resource
	if gvr.Empty() {
		gvr = ApplicationGVR
	}
	return d.Client.Resource(gvr).Namespace(ns)
}

// Annotation implements Annotations.
func (d DynamicAnnotations) Annotation(ctx context.Context, namespace, name, key string) (string, error) {
	u, err := d.resource(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("application %s/%s: %w", namespace, name, err)
	}
	return u.GetAnnotations()[key], nil
}

// SetAnnotation implements Annotations. An Application that no longer
// exists has nothing to remember: that is not an error.
func (d DynamicAnnotations) SetAnnotation(ctx context.Context, namespace, name, key, value string) error {
	var v any = value
	if value == "" {
		v = nil // a merge patch's null removes the annotation
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{key: v}}})
	if err != nil {
		return err
	}
	_, err = d.resource(namespace).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
	if errors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("application %s/%s: %w", namespace, name, err)
	}
	return nil
}
