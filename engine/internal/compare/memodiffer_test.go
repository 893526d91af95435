package compare

import (
	"reflect"
	"testing"
	"unsafe"

	"github.com/kubegitops/gitops/diff"
	"github.com/kubegitops/gitops/resource"
)

// A kept verdict fits a map slot (values over 128 bytes are allocated
// apart) and stays out of the 288-byte class of decoded maps' groups.
func TestMemoEntryIsKeptInItsMapSlot(t *testing.T) {
	if n := unsafe.Sizeof(memoEntry{}); n > 64 {
		t.Fatalf("a memo entry is %d bytes, want 64 or less", n)
	}
}

// A hit returns what the miss returned, but the objects and the patch.
func TestMemoEntryKeepsTheVerdict(t *testing.T) {
	id := resource.Key{Kind: "ConfigMap", Namespace: "ns", Name: "c"}
	for name, res := range map[string]diff.Result{
		"in sync": {Key: id, Mode: diff.ModeStructuredMerge},
		"drift": {Key: id, Mode: diff.ModeThreeWay, Modified: true, TwoWay: true,
			Changes:      []diff.Change{{Path: "/data/k"}},
			ResetIgnored: []string{"/data/x"}, Text: "-a\n+b\n"},
		"missing":         {Key: id, Mode: diff.ModeStructuredMerge, Modified: true, Missing: true},
		"extraneous":      {Key: id, Mode: diff.ModeStructuredMerge, Modified: true, Extraneous: true},
		"named from live": {Key: resource.Key{Kind: "ConfigMap", Namespace: "live-ns", Name: "c"}, Mode: diff.ModeStructuredMerge},
	} {
		got := keep([32]byte{1}, id, res).result(id)
		if !reflect.DeepEqual(got, res) {
			t.Errorf("%s: kept %+v, got back %+v", name, res, got)
		}
	}
	if keep([32]byte{1}, id, diff.Result{Key: id, Mode: diff.ModeStructuredMerge}).more != nil {
		t.Error("an object in sync keeps more than the entry")
	}
}
