package resource

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation"
)

// TrackingID ties a live object to the application that manages it. Its text
// form is Argo CD's: "<app>:<group>/<kind>:<namespace>/<name>", with an empty
// group for the core API group and an empty namespace for cluster-scoped
// objects, for example "shop:apps/Deployment:web/frontend" or
// "shop:/Namespace:/web".
//
// The key inside the id is what makes it safe: controllers copy annotations
// onto the objects they create (a Deployment's onto its ReplicaSets), and an
// object whose own key differs from the key in its tracking id is a copy, not
// a managed object.
type TrackingID struct {
	// App names the application that manages the object.
	App string
	// Key names the object the tracking id was written for.
	Key Key
}

// String formats the id as "<app>:<group>/<kind>:<namespace>/<name>".
func (t TrackingID) String() string {
	return t.App + ":" + t.Key.Group + "/" + t.Key.Kind + ":" + t.Key.Namespace + "/" + t.Key.Name
}

// ParseTrackingID reads an id written by String. Names may hold colons (RBAC
// objects such as "system:controller:foo" do), so the id is cut at the first
// colon, then at the colon that ends "group/kind", then at the first slash.
func ParseTrackingID(s string) (TrackingID, error) {
	app, rest, ok := strings.Cut(s, ":")
	if !ok || app == "" {
		return TrackingID{}, fmt.Errorf("resource: tracking id %q: want \"<app>:<group>/<kind>:<namespace>/<name>\"", s)
	}
	gk, nn, ok := strings.Cut(rest, ":")
	if !ok {
		return TrackingID{}, fmt.Errorf("resource: tracking id %q: no \":\" before namespace/name", s)
	}
	group, kind, ok := strings.Cut(gk, "/")
	if !ok {
		return TrackingID{}, fmt.Errorf("resource: tracking id %q: no \"/\" between group and kind", s)
	}
	ns, name, ok := strings.Cut(nn, "/")
	if !ok {
		return TrackingID{}, fmt.Errorf("resource: tracking id %q: no \"/\" between namespace and name", s)
	}
	t := TrackingID{App: app, Key: Key{Group: group, Kind: kind, Namespace: ns, Name: name}}
	if err := t.Validate(); err != nil {
		return TrackingID{}, fmt.Errorf("resource: tracking id %q: %w", s, err)
	}
	return t, nil
}

// Validate reports whether the id can be written and read back: the app
// name must be set and hold no colon, slash or white space, and the key must
// be valid.
func (t TrackingID) Validate() error {
	if err := ValidateAppName(t.App); err != nil {
		return err
	}
	return t.Key.Validate()
}

// ValidateAppName reports whether name can stand as the application part of
// a tracking id.
func ValidateAppName(name string) error {
	if name == "" {
		return fmt.Errorf("application name is empty")
	}
	if strings.ContainsAny(name, ":/ \t\r\n") {
		return fmt.Errorf("application name %q holds a colon, slash or white space", name)
	}
	return nil
}

// TrackingMethod says how an object is tied to its application, with
// Argo CD's names (its application.resourceTrackingMethod setting).
type TrackingMethod string

// Tracking methods.
const (
	// TrackingAnnotation writes the tracking id ("<app>:<group>/<kind>:
	// <namespace>/<name>") in an annotation: copies made by controllers are
	// told apart by the key inside the id. The default.
	TrackingAnnotation TrackingMethod = "annotation"
	// TrackingLabel writes the app's name in a label (Argo CD's legacy
	// app.kubernetes.io/instance). A label is copied by controllers (a
	// Deployment's template labels reach its ReplicaSets and Pods), so an
	// object with a controller owner reference is never taken for a
	// managed one. App names longer than a label value (63) are refused.
	TrackingLabel TrackingMethod = "label"
	// TrackingAnnotationAndLabel tracks by annotation and also writes the
	// label (the app's name cut to 63 characters, as Argo CD does), for
	// label selectors; ownership is decided by the annotation.
	TrackingAnnotationAndLabel TrackingMethod = "annotation+label"
)

// DefaultTrackingLabel is the label TrackingLabel and
// TrackingAnnotationAndLabel write by default (Argo CD's instance label).
const DefaultTrackingLabel = "app.kubernetes.io/instance"

// AnnotationArgoInstallationID is Argo CD's instance annotation.
const AnnotationArgoInstallationID = "argocd.argoproj.io/installation-id"

// Tracking says where tracking ids are written and which engine instance
// this is. The zero value is not useful; start from DefaultTracking.
type Tracking struct {
	// Method is how objects are tied to apps. Empty means
	// TrackingAnnotation.
	Method TrackingMethod
	// AnnotationKey holds the tracking id. Default AnnotationTrackingID; set
	// AnnotationArgoTrackingID to share Argo CD's scheme (TrackingArgoCD).
	AnnotationKey string
	// LabelKey is the label of the label methods. Default
	// DefaultTrackingLabel.
	LabelKey string
	// InstanceAnnotationKey holds the instance id. Default AnnotationInstance.
	InstanceAnnotationKey string
	// InstanceID names this engine. Objects carrying another instance's id
	// (or any id, when this one is empty) are never claimed, so two engines
	// on one cluster never prune each other's objects. Default empty.
	InstanceID string
}

// DefaultTracking returns the tracking settings used when none are given.
func DefaultTracking() Tracking {
	return Tracking{Method: TrackingAnnotation, AnnotationKey: AnnotationTrackingID, LabelKey: DefaultTrackingLabel, InstanceAnnotationKey: AnnotationInstance}
}

// TrackingArgoCD returns tracking with Argo CD's own keys (its tracking-id
// annotation and installation-id annotation), so that objects an Argo CD
// installation already manages are adopted as they are, without a diff
// storm. Set InstanceID to Argo CD's installationID when it has one.
func TrackingArgoCD() Tracking {
	return Tracking{Method: TrackingAnnotation, AnnotationKey: AnnotationArgoTrackingID, LabelKey: DefaultTrackingLabel, InstanceAnnotationKey: AnnotationArgoInstallationID}
}

// Validate reports a tracking method this package does not know.
func (t Tracking) Validate() error {
	switch t.Method {
	case "", TrackingAnnotation, TrackingLabel, TrackingAnnotationAndLabel:
		return nil
	}
	return fmt.Errorf("resource: unknown tracking method %q (want annotation, label or annotation+label)", t.Method)
}

func (t Tracking) method() TrackingMethod {
	if t.Method == "" {
		return TrackingAnnotation
	}
	return t.Method
}

func (t Tracking) labelKey() string {
	if t.LabelKey == "" {
		return DefaultTrackingLabel
	}
	return t.LabelKey
}

func (t Tracking) keys() (trackingKey, instanceKey string) {
	trackingKey, instanceKey = t.AnnotationKey, t.InstanceAnnotationKey
	if trackingKey == "" {
		trackingKey = AnnotationTrackingID
	}
	if instanceKey == "" {
		instanceKey = AnnotationInstance
	}
	return trackingKey, instanceKey
}

// Set writes app's tracking id for obj (and the instance id, when there is
// one) into obj's annotations. obj's namespace must already be final.
func (t Tracking) Set(obj *unstructured.Unstructured, app string) error {
	id := TrackingID{App: app, Key: KeyOf(obj)}
	if err := id.Validate(); err != nil {
		return fmt.Errorf("%s: tracking: %w", KeyOf(obj), err)
	}
	trackingKey, instanceKey := t.keys()
	method := t.method()
	if method != TrackingAnnotation {
		value := app
		if method == TrackingAnnotationAndLabel && len(value) > 63 {
			value = strings.TrimRight(value[:63], "-_.")
		}
		if msgs := validation.IsValidLabelValue(value); len(msgs) > 0 {
			return fmt.Errorf("%s: tracking label %s=%q: %s", KeyOf(obj), t.labelKey(), value, strings.Join(msgs, "; "))
		}
		labels := obj.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		labels[t.labelKey()] = value
		obj.SetLabels(labels)
	}
	ann := obj.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	if method == TrackingLabel {
		delete(ann, trackingKey)
	} else {
		ann[trackingKey] = id.String()
	}
	if t.InstanceID != "" {
		ann[instanceKey] = t.InstanceID
	} else {
		delete(ann, instanceKey)
	}
	obj.SetAnnotations(ann)
	return nil
}

// ID returns the tracking id written on obj, if any and readable. With
// TrackingLabel the id is the label's app and obj's own key.
func (t Tracking) ID(obj *unstructured.Unstructured) (TrackingID, bool) {
	if t.method() == TrackingLabel {
		app := obj.GetLabels()[t.labelKey()]
		if app == "" {
			return TrackingID{}, false
		}
		return TrackingID{App: app, Key: KeyOf(obj)}, true
	}
	trackingKey, _ := t.keys()
	raw, ok := obj.GetAnnotations()[trackingKey]
	if !ok {
		return TrackingID{}, false
	}
	id, err := ParseTrackingID(raw)
	return id, err == nil
}

// AppOf returns the application that owns obj from this instance's point of
// view, or "" when obj is not managed by this instance: it has no readable
// tracking id, its instance id differs, or the key in its tracking id is not
// its own key (a copy made by a controller); with TrackingLabel, an object
// with a controller owner reference is such a copy.
func (t Tracking) AppOf(obj *unstructured.Unstructured) string {
	id, ok := t.ID(obj)
	if !ok {
		return ""
	}
	if t.method() == TrackingLabel {
		for _, ref := range obj.GetOwnerReferences() {
			if ref.Controller != nil && *ref.Controller {
				return ""
			}
		}
	}
	_, instanceKey := t.keys()
	if obj.GetAnnotations()[instanceKey] != t.InstanceID {
		return ""
	}
	if id.Key != KeyOf(obj) {
		return ""
	}
	return id.App
}

// OwnedBy reports whether obj is managed by app on this instance.
func (t Tracking) OwnedBy(obj *unstructured.Unstructured, app string) bool {
	return app != "" && t.AppOf(obj) == app
}
