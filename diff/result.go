package diff

import (
	"encoding/json"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubegitops/gitops/resource"
)

// Result is the comparison of one desired object with its live object.
// Every object and text in it went through the same normalisation and
// ignore rules, and a Secret's values are masked everywhere in it (except
// Patch.Data, which sync sends to the API server).
type Result struct {
	// Key names the object.
	Key resource.Key
	// Mode is the mode that computed PredictedLive.
	Mode Mode
	// Modified is true when the object is out of sync: it is missing, it is
	// extraneous (and not IgnoreExtraneous), or Changes is not empty. An
	// unmodified result has no Changes, no Text and an empty Patch.
	Modified bool
	// TwoWay is true when removals could not be seen: ModeThreeWay without
	// a last-applied annotation, or ModeStructuredMerge without
	// managedFields on the live object.
	TwoWay bool
	// SchemaFallback, when not empty, says that the kind's schema
	// (Options.Schema) could not model this object in ModeStructuredMerge
	// and why: it was compared with a deduced schema instead (maps as
	// structs, lists atomic), which may show a list as changed whole.
	SchemaFallback string
	// Deduced is true when ModeStructuredMerge compared with a deduced
	// schema (lists atomic): Options.Schema had no model of the kind (a
	// custom resource offline, or a CRD the cluster does not publish yet),
	// or could not model the object (SchemaFallback). A caller that keeps
	// Results should not keep such a one: the kind's model may appear.
	Deduced bool
	// Missing: there is no live object. Extraneous: there is no desired
	// object.
	Missing, Extraneous bool
	// Desired, PredictedLive and Live are the normalised objects, with
	// ignored fields removed and Secret values masked. PredictedLive is
	// what the live object would be after a sync. Live and PredictedLive
	// are stored objects, with the server's defaults filled in; Desired is
	// the object as declared, without them (the server defaults only what
	// a write leaves absent). Nil when absent.
	Desired, PredictedLive, Live *unstructured.Unstructured
	// Changes lists the changed fields from Live to PredictedLive, sorted
	// by path.
	Changes []Change
	// ResetIgnored lists (as JSON pointers, sorted) the fields the ignore
	// rules hide from this comparison whose value in Git differs from the
	// live one: a sync that applies the object writes Git's value to them,
	// as Argo CD does, unless the application's sync options hold
	// RespectIgnoreDifferences=true (then it is empty: such a sync keeps
	// their live values, see Differ.KeepIgnored). It is filled whether or
	// not the object is Modified (an object in sync is written only with
	// ApplyOutOfSyncOnly=false); when Modified, Text ends with a note
	// naming them.
	ResetIgnored []string
	// Text is a unified diff of Live against PredictedLive in YAML, empty
	// when not Modified.
	Text string
	// Patch turns the live object into PredictedLive; empty when not
	// Modified or when the live object is missing (create it instead).
	Patch Patch
}

// Patch is a patch for the API server: a strategic merge patch for built-in
// kinds (lists merge by key, so only changed items appear), a JSON merge
// patch for other kinds. It never changes an ignored field: ignored fields
// keep their live values. For a Secret its printed and JSON forms are
// masked; only Data returns the real bytes.
type Patch struct {
	// Type is the patch type to send.
	Type types.PatchType
	data []byte
	// masked is the printable form when the patch holds Secret values.
	masked []byte
}

// Data returns the patch body to send to the API server. For a Secret it
// holds real values: never log it.
func (p Patch) Data() []byte { return p.data }

// IsEmpty reports whether there is nothing to patch.
func (p Patch) IsEmpty() bool { return len(p.data) == 0 }

// String returns the patch body for people: masked for a Secret.
func (p Patch) String() string {
	if p.masked != nil {
		return string(p.masked)
	}
	return string(p.data)
}

// GoString keeps %#v as safe as %v.
func (p Patch) GoString() string {
	return "diff.Patch{Type:" + string(p.Type) + ", Data:" + p.String() + "}"
}

// MarshalJSON writes {"type": ..., "data": <patch>}, masked for a Secret.
func (p Patch) MarshalJSON() ([]byte, error) {
	body := p.data
	if p.masked != nil {
		body = p.masked
	}
	if len(body) == 0 {
		body = []byte("null")
	}
	return json.Marshal(struct {
		Type types.PatchType `json:"type,omitempty"`
		Data json.RawMessage `json:"data"`
	}{p.Type, body})
}
