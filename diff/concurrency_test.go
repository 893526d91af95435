package diff

import (
	"context"
	"path/filepath"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestDifferConcurrentUse runs many diffs on one Differ at once (run with
// -race): the type caches, rules and dry-run cache are shared.
func TestDifferConcurrentUse(t *testing.T) {
	d := mustDiffer(t, func() Options {
		o := DefaultOptions()
		o.IgnoreRules = []IgnoreRule{{Group: "apps", Kind: "Deployment", JQPathExpressions: []string{`.spec.replicas`}}}
		return o
	}())
	files, _ := filepath.Glob("testdata/corpus/*.yaml")
	var cases []corpusCase
	for _, f := range files {
		cases = append(cases, loadCorpusCase(t, f))
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, c := range cases {
				if _, err := d.Diff(context.Background(), &unstructured.Unstructured{Object: c.Desired}, &unstructured.Unstructured{Object: c.LiveSSA}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
