package argodocs

import (
	"archive/zip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// Module is the module path of Argo CD's release.
const Module = "github.com/argoproj/argo-cd/v3"

// Version is the Argo CD release the tests read: the current release.
const Version = "v3.6.1"

// downloadTimeout bounds `go mod download` of the release zip (about 58 MB).
const downloadTimeout = 10 * time.Minute

// Release is an opened release zip. Paths given to its methods are relative
// to the module's root ("docs/operator-manual/project.yaml").
type Release struct {
	zr     *zip.ReadCloser
	prefix string
	files  map[string]*zip.File
}

// Open opens the zip of Argo CD's release version (Version for the
// current one), downloading it into the module cache when it is not there.
func Open(ctx context.Context, version string) (*Release, error) {
	zipPath, err := zipFile(ctx, version)
	if err != nil {
		return nil, err
	}
	zr, err := zip.OpenReader(zipPath)
	if err != nil {
		return nil, fmt.Errorf("argodocs: %s: %w", zipPath, err)
	}
	r := &Release{zr: zr, prefix: Module + "@" + version + "/", files: map[string]*zip.File{}}
	for _, f := range zr.File {
		if rel, ok := strings.CutPrefix(f.Name, r.prefix); ok {
			r.files[rel] = f
		}
	}
	return r, nil
}

// ForTest opens the current release for a test, closing it when the test
// ends; a failure to open it fails the test.
func ForTest(t testing.TB) *Release {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), downloadTimeout)
	defer cancel()
	r, err := Open(ctx, Version)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r
}

// Close closes the zip.
func (r *Release) Close() error { return r.zr.Close() }

// Version is the release's version.
func (r *Release) Version() string {
	return strings.TrimSuffix(strings.TrimPrefix(r.prefix, Module+"@"), "/")
}

// ReadFile returns the content of the release's file at name.
func (r *Release) ReadFile(name string) ([]byte, error) {
	f, ok := r.files[name]
	if !ok {
		return nil, fmt.Errorf("argodocs: %s has no file %s: %w", r.Version(), name, os.ErrNotExist)
	}
	rc, err := f.Open()
	if err != nil {
		return nil, fmt.Errorf("argodocs: %s %s: %w", r.Version(), name, err)
	}
	defer rc.Close()
	return io.ReadAll(rc)
}

// MustReadFile is ReadFile for tests: an error fails t.
func (r *Release) MustReadFile(t testing.TB, name string) []byte {
	t.Helper()
	b, err := r.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Glob returns the release's file names matching pattern (path.Match
// syntax, "docs/operator-manual/*.yaml"), sorted.
func (r *Release) Glob(pattern string) ([]string, error) {
	if _, err := path.Match(pattern, ""); err != nil {
		return nil, fmt.Errorf("argodocs: pattern %q: %w", pattern, err)
	}
	var out []string
	for name := range r.files {
		if ok, _ := path.Match(pattern, name); ok {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out, nil
}

// zipFile returns the path of the release's zip in the module cache,
// downloading it first when it is missing.
func zipFile(ctx context.Context, version string) (string, error) {
	modCache, err := goEnv(ctx, "GOMODCACHE")
	if err != nil {
		return "", err
	}
	dir := filepath.Join(modCache, "cache", "download", "github.com", "argoproj", "argo-cd", "v3", "@v")
	zipPath := filepath.Join(dir, version+".zip")
	if whole(dir, version) {
		return zipPath, nil
	}
	ctx, cancel := context.WithTimeout(ctx, downloadTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, goCommand(), "mod", "download", "-json", Module+"@"+version)
	cmd.Dir = os.TempDir() // outside any module: the download needs no go.mod
	cmd.Env = append(os.Environ(), "GOTOOLCHAIN=local", "GOFLAGS=-mod=mod")
	out, runErr := cmd.Output()
	var res struct{ Zip, Error string }
	_ = json.Unmarshal(out, &res)
	if res.Zip != "" {
		zipPath = res.Zip
		dir = filepath.Dir(zipPath)
	}
	if whole(dir, version) {
		return zipPath, nil
	}
	msg := res.Error
	if msg == "" && runErr != nil {
		msg = runErr.Error()
		var ee *exec.ExitError
		if errors.As(runErr, &ee) && len(ee.Stderr) > 0 {
			msg += ": " + strings.TrimSpace(string(ee.Stderr))
		}
	}
	return "", fmt.Errorf("argodocs: go mod download %s@%s stored no zip: %s", Module, version, msg)
}

// whole reports whether the module cache holds the release's zip with its
// ziphash, which the go command writes once the zip is complete.
func whole(dir, version string) bool {
	if _, err := os.Stat(filepath.Join(dir, version+".ziphash")); err != nil {
		return false
	}
	_, err := os.Stat(filepath.Join(dir, version+".zip"))
	return err == nil
}

func goEnv(ctx context.Context, name string) (string, error) {
	if v := os.Getenv(name); v != "" {
		return v, nil
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, goCommand(), "env", name).Output()
	if err != nil {
		return "", fmt.Errorf("argodocs: go env %s: %w", name, err)
	}
	v := strings.TrimSpace(string(out))
	if v == "" {
		return "", fmt.Errorf("argodocs: go env %s is empty", name)
	}
	return v, nil
}

// goCommand is the go command on PATH (make test's, and CI's).
func goCommand() string { return "go" }
