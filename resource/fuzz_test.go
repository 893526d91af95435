package resource

import (
	"errors"
	"testing"
)

// FuzzDecode checks that no input panics, that every error is a
// *DecodeError, and that every object returned has apiVersion and kind.
func FuzzDecode(f *testing.F) {
	f.Add([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\napiVersion: v1\nkind: List\nitems: []\n"))
	f.Add([]byte(`{"apiVersion":"v1","kind":"A"}{"x":1}`))
	f.Add([]byte("a: &a [*a]"))
	f.Add([]byte(billionLaughs(4)))
	f.Add([]byte("---\n---\n- 1\n"))
	opts := DecodeOptions{MaxStreamBytes: 1 << 16, MaxDocumentBytes: 1 << 14, MaxDocuments: 50, MaxAliasExpansion: 1000}
	f.Fuzz(func(t *testing.T, data []byte) {
		objs, err := Decode("fuzz.yaml", data, opts)
		if err != nil {
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("error %v is not a *DecodeError", err)
			}
			if objs != nil {
				t.Fatal("objects returned with an error")
			}
			return
		}
		if len(objs) > opts.MaxDocuments {
			t.Fatalf("%d objects over the limit", len(objs))
		}
		for _, o := range objs {
			if o.GetAPIVersion() == "" || o.GetKind() == "" {
				t.Fatal("object without apiVersion or kind")
			}
		}
	})
}

// FuzzTrackingID checks that parsing never panics and that whatever parses
// formats back to the same text.
func FuzzTrackingID(f *testing.F) {
	f.Add("shop:apps/Deployment:web/frontend")
	f.Add("shop:/Namespace:/web")
	f.Add("a:b/c:d/e:f")
	f.Fuzz(func(t *testing.T, s string) {
		id, err := ParseTrackingID(s)
		if err != nil {
			return
		}
		if id.String() != s {
			t.Fatalf("%q parsed and formatted as %q", s, id.String())
		}
		back, err := ParseTrackingID(id.String())
		if err != nil || back != id {
			t.Fatalf("round trip of %q failed: %v", s, err)
		}
	})
}
