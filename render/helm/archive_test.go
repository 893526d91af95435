package helm

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/fstest"

	"github.com/kubegitops/gitops/render"
)

func tgz(t *testing.T, entries map[string]int) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for name, size := range entries {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(size)}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(make([]byte, size)); err != nil {
			t.Fatal(err)
		}
	}
	_ = tw.Close()
	_ = zw.Close()
	return buf.Bytes()
}

// TestS5ArchiveBombsAndOversizedFilesFail: a sub-chart archive that expands
// far past the budget (a gzip bomb of zeros), one with thousands of tiny
// entries, and an oversized template all fail with typed errors before Helm
// loads them.
func TestS5ArchiveBombsAndOversizedFilesFail(t *testing.T) {
	limits := render.Limits{MaxFileBytes: 1 << 20, MaxTotalBytes: 4 << 20, MaxFiles: 500}
	r := New(Options{Limits: limits})

	bomb := tgz(t, map[string]int{"bomb/Chart.yaml": 64 << 20})
	if len(bomb) > 1<<20 {
		t.Fatalf("bomb is %d bytes compressed; the test wants a small archive", len(bomb))
	}
	snap := fixture(t)
	snap.MapFS["charts/app/charts/bomb-0.1.0.tgz"] = &fstest.MapFile{Data: bomb}
	if _, err := r.Render(context.Background(), prodInput(snap)); !errors.Is(err, render.ErrTooLarge) {
		t.Fatalf("gzip bomb: %v, want ErrTooLarge", err)
	}

	many := map[string]int{}
	for i := 0; i < 2000; i++ {
		many[fmt.Sprintf("tiny/templates/f%d.yaml", i)] = 1
	}
	snap = fixture(t)
	snap.MapFS["charts/app/charts/tiny-0.1.0.tgz"] = &fstest.MapFile{Data: tgz(t, many)}
	if _, err := r.Render(context.Background(), prodInput(snap)); !errors.Is(err, render.ErrTooManyFiles) {
		t.Fatalf("archive with 2000 entries: %v, want ErrTooManyFiles", err)
	}

	snap = fixture(t)
	snap.MapFS["charts/app/templates/huge.yaml"] = &fstest.MapFile{Data: make([]byte, 2<<20)}
	if _, err := r.Render(context.Background(), prodInput(snap)); !errors.Is(err, render.ErrTooLarge) {
		t.Fatalf("oversized template: %v, want ErrTooLarge", err)
	}
}
