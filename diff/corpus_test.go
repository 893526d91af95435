package diff

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestGoldenCorpus runs every case of testdata/corpus (desired objects and
// the live objects a real API server returned for them, created with
// client-side apply and with server-side apply) through the local modes,
// against each live variant: as read, and stripped of managedFields and
// last-applied as the cluster cache keeps it.
//
// "insync" cases are known false positives of GitOps engines and must give
// no change; "changed" cases must give exactly the listed changes. A case
// that needsHistory (a removal, another manager's field) is only checked
// where the history is there (Result.TwoWay false).
func TestGoldenCorpus(t *testing.T) {
	files, err := filepath.Glob("testdata/corpus/*.yaml")
	if err != nil || len(files) < 15 {
		t.Fatalf("corpus: %d files, %v", len(files), err)
	}
	for _, file := range files {
		c := loadCorpusCase(t, file)
		t.Run(c.Name, func(t *testing.T) {
			modes := c.Modes
			if len(modes) == 0 {
				modes = []Mode{ModeThreeWay, ModeStructuredMerge}
			}
			desired := &unstructured.Unstructured{Object: c.Desired}
			variants := map[string]*unstructured.Unstructured{
				"csa":          {Object: c.LiveCSA},
				"ssa":          {Object: c.LiveSSA},
				"csa-stripped": stripHistory(&unstructured.Unstructured{Object: c.LiveCSA}),
				"ssa-stripped": stripHistory(&unstructured.Unstructured{Object: c.LiveSSA}),
			}
			checked := 0
			for _, mode := range modes {
				opts := DefaultOptions()
				opts.Mode = mode
				d := mustDiffer(t, opts)
				for vname, live := range variants {
					res, err := d.Diff(context.Background(), desired, live)
					if err != nil {
						t.Fatalf("%s/%s: %v", mode, vname, err)
					}
					if c.NeedsHistory && res.TwoWay {
						continue
					}
					checked++
					var paths []string
					for _, ch := range res.Changes {
						paths = append(paths, ch.Path)
					}
					switch c.Expect {
					case "insync":
						if res.Modified {
							t.Errorf("%s/%s: false positive: %v\n%s", mode, vname, res.Changes, res.Text)
						}
					case "changed":
						if !res.Modified || !slices.Equal(paths, c.Changes) {
							t.Errorf("%s/%s: changes %v, want %v\n%s", mode, vname, paths, c.Changes, res.Text)
						}
						if res.Patch.IsEmpty() || res.Text == "" {
							t.Errorf("%s/%s: modified but no patch or text", mode, vname)
						}
					default:
						t.Fatalf("expect %q", c.Expect)
					}
				}
			}
			if checked == 0 {
				t.Fatal("no variant checked")
			}
		})
	}
}
