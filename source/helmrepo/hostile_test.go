package helmrepo_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kubegitops/gitops/internal/chartserver"
	"github.com/kubegitops/gitops/source"
	"github.com/kubegitops/gitops/source/helmrepo"
)

type entry struct {
	name     string
	typ      byte
	body     []byte
	size     int64 // for streamed zero bodies
	linkname string
}

// archive writes a gzipped tar of entries; an entry with size and no body
// is that many zero bytes, streamed.
func archive(t testing.TB, entries func(emit func(entry))) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	tw := tar.NewWriter(zw)
	zeros := make([]byte, 1<<20)
	entries(func(e entry) {
		hdr := &tar.Header{Name: e.name, Typeflag: e.typ, Mode: 0o644, Linkname: e.linkname, Size: int64(len(e.body))}
		if e.typ == 0 {
			hdr.Typeflag = tar.TypeReg
		}
		if e.size > 0 {
			hdr.Size = e.size
		}
		if hdr.Typeflag != tar.TypeReg {
			hdr.Size = 0
		}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		if e.size > 0 {
			for left := e.size; left > 0; {
				n := min(left, int64(len(zeros)))
				if _, err := tw.Write(zeros[:n]); err != nil {
					t.Fatal(err)
				}
				left -= n
			}
		} else if len(e.body) > 0 {
			if _, err := tw.Write(e.body); err != nil {
				t.Fatal(err)
			}
		}
	})
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func chartYAML(emit func(entry)) {
	emit(entry{name: "evil/Chart.yaml", body: []byte("apiVersion: v2\nname: evil\nversion: 1.0.0\n")})
}

func TestHostileArchivesAreRefusedByName(t *testing.T) {
	r := chartserver.New(t, chartserver.Options{})
	root := t.TempDir()
	cacheDir := filepath.Join(root, "cache")
	s := newSource(t, func(o *helmrepo.Options) { o.CacheDir = cacheDir })
	cases := []struct {
		version string
		want    error
		build   func(emit func(entry))
	}{
		{"1.0.1", helmrepo.ErrUnsafeArchive, func(emit func(entry)) {
			chartYAML(emit)
			emit(entry{name: "evil/../../escaped.yaml", body: []byte("x")})
		}},
		{"1.0.2", helmrepo.ErrUnsafeArchive, func(emit func(entry)) {
			chartYAML(emit)
			emit(entry{name: "/etc/evil.yaml", body: []byte("x")})
		}},
		{"1.0.3", helmrepo.ErrUnsafeArchive, func(emit func(entry)) {
			chartYAML(emit)
			emit(entry{name: "evil/templates/passwd.yaml", typ: tar.TypeSymlink, linkname: "/etc/passwd"})
		}},
		{"1.0.4", helmrepo.ErrUnsafeArchive, func(emit func(entry)) {
			chartYAML(emit)
			emit(entry{name: "evil/templates/hard.yaml", typ: tar.TypeLink, linkname: "evil/Chart.yaml"})
		}},
		{"1.0.5", helmrepo.ErrArchiveTooLarge, func(emit func(entry)) { // 100k files
			chartYAML(emit)
			for i := range 100_000 {
				emit(entry{name: "evil/templates/f" + itoa(i) + ".yaml", body: []byte("a: b\n")})
			}
		}},
	}
	for _, c := range cases {
		r.AddArchive("evil", c.version, archive(t, c.build))
	}
	ctx := context.Background()
	repo := source.Repository{URL: r.URL, Chart: "evil"}
	for _, c := range cases {
		_, err := s.Snapshot(ctx, repo, source.Revision{Commit: c.version})
		var ae *helmrepo.ArchiveError
		if !errors.As(err, &ae) || !errors.Is(err, c.want) || ae.Chart != "evil" || ae.Version != c.version {
			t.Errorf("version %s: %v, want an *ArchiveError naming evil %s wrapping %v", c.version, err, c.version, c.want)
		}
	}
	entries, err := os.ReadDir(root)
	if err != nil || len(entries) != 1 || entries[0].Name() != "cache" {
		t.Errorf("files beside the cache: %v", entries)
	}
	if _, err := os.Stat(filepath.Join(root, "escaped.yaml")); err == nil {
		t.Error("traversal wrote a file")
	}
}

// TestDecompressionBombIsBoundedInMemory serves a chart that expands to
// 1 GiB (256 files of 4 MiB of zeros, each under the per-file limit) and
// measures the heap while the snapshot refuses it.
func TestDecompressionBombIsBoundedInMemory(t *testing.T) {
	r := chartserver.New(t, chartserver.Options{})
	s := newSource(t, nil)
	bomb := bombArchive(t, 256, 4<<20)
	r.AddArchive("evil", "6.6.6", bomb)
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	var peak atomic.Uint64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			if m.HeapAlloc > peak.Load() {
				peak.Store(m.HeapAlloc)
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	_, err := s.Snapshot(context.Background(), source.Repository{URL: r.URL, Chart: "evil"}, source.Revision{Commit: "6.6.6"})
	close(stop)
	<-done
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if !errors.Is(err, helmrepo.ErrArchiveTooLarge) {
		t.Fatalf("bomb: %v, want ErrArchiveTooLarge", err)
	}
	grew := int64(peak.Load()) - int64(before.HeapAlloc)
	t.Logf("bomb: %d KiB compressed, 1 GiB expanded; peak heap growth %d MiB, allocated %d MiB",
		len(bomb)>>10, grew>>20, (after.TotalAlloc-before.TotalAlloc)>>20)
	// The default limit is 64 MiB unpacked: the heap must stay near it,
	// far from the 1 GiB the archive expands to.
	if grew > 192<<20 {
		t.Errorf("peak heap grew by %d MiB unpacking a bomb", grew>>20)
	}
}

func itoa(i int) string { return string(appendInt(nil, i)) }

func appendInt(b []byte, i int) []byte {
	if i >= 10 {
		b = appendInt(b, i/10)
	}
	return append(b, byte('0'+i%10))
}

// bombArchive builds a chart archive of files of size zero bytes each as
// concatenated gzip members (one compressed block of zeros reused for
// every file, as gzip readers accept multi-member streams), so that a
// 1 GiB bomb is built in milliseconds.
func bombArchive(t testing.TB, files int, size int64) []byte {
	t.Helper()
	member := func(data []byte) []byte {
		var b bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
		zw.Write(data)
		zw.Close()
		return b.Bytes()
	}
	header := func(name string, size int64) []byte {
		var b bytes.Buffer
		tw := tar.NewWriter(&b)
		if err := tw.WriteHeader(&tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: 0o644, Size: size}); err != nil {
			t.Fatal(err)
		}
		tw.Flush()
		return b.Bytes()
	}
	chartBody := []byte("apiVersion: v2\nname: evil\nversion: 6.6.6\n")
	first := append(header("evil/Chart.yaml", int64(len(chartBody))), chartBody...)
	first = append(first, make([]byte, 512-len(chartBody)%512)...)
	out := member(first)
	zeros := member(make([]byte, size)) // size is a multiple of 512
	for i := range files {
		out = append(out, member(header("evil/files/z"+itoa(i), size))...)
		out = append(out, zeros...)
	}
	return append(out, member(make([]byte, 1024))...) // end of archive
}
