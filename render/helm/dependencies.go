package helm

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"golang.org/x/sync/singleflight"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"

	"github.com/kubegitops/gitops/internal/helmindex"
	"github.com/kubegitops/gitops/render"
)

// dependencyCache keeps downloaded chart archives by repository, name and
// version, shared by every render of one Renderer, and runs concurrent
// downloads of the same archive once (argo-cd#8698, argo-cd#16725).
type dependencyCache struct {
	mu      sync.Mutex
	entries map[string][]byte
	flight  singleflight.Group
}

// missingDependencies returns the dependencies of c that charts/ does not
// provide, with the version Chart.lock pins when there is one.
func missingDependencies(c *chart.Chart) []*chart.Dependency {
	present := map[string]bool{}
	for _, d := range c.Dependencies() {
		present[d.Name()] = true
	}
	locked := map[string]string{}
	if c.Lock != nil {
		for _, d := range c.Lock.Dependencies {
			locked[d.Name] = d.Version
		}
	}
	var out []*chart.Dependency
	for _, d := range c.Metadata.Dependencies {
		if present[d.Name] {
			continue
		}
		dep := *d
		if v, ok := locked[d.Name]; ok {
			dep.Version = v
		}
		out = append(out, &dep)
	}
	return out
}

// fetchDependencies downloads the missing dependencies of c from their
// http(s) chart repositories and returns them as charts/<name>-<version>.tgz
// files. Every archive passes checkArchive before Helm sees it.
//
// With Options.Dependencies set, http(s) and oci:// dependencies are
// fetched through it, with allowed (HelmSource.DependencyRepos) passed on.
func (r *Renderer) fetchDependencies(ctx context.Context, c *chart.Chart, limits render.Limits, allowed []string) ([]*loader.BufferedFile, error) {
	var files []*loader.BufferedFile
	for _, d := range missingDependencies(c) {
		scheme := render.URLScheme(d.Repository)
		var data []byte
		var err error
		switch {
		case r.opts.Dependencies != nil && (scheme == "http" || scheme == "https" || scheme == "oci"):
			data, err = r.opts.Dependencies.FetchDependency(ctx, DependencyRequest{Repository: d.Repository, Name: d.Name, Version: d.Version, Allowed: allowed})
		case scheme == "http" || scheme == "https":
			key := d.Repository + "|" + d.Name + "|" + d.Version
			data, err = r.deps.get(key, func() ([]byte, error) { return r.download(ctx, d, limits) })
		default:
			return nil, fmt.Errorf("%w: dependency %s from repository %q: only http(s) and oci:// chart repositories are fetched", render.ErrSchemeNotAllowed, d.Name, d.Repository)
		}
		if err != nil {
			return nil, err
		}
		if v, ok := archiveVersion(data); ok {
			d.Version = v // a constraint resolved: name the file by the version
		}
		name := fmt.Sprintf("charts/%s-%s.tgz", d.Name, d.Version)
		if err := checkArchive(name, data, limits); err != nil {
			return nil, err
		}
		files = append(files, &loader.BufferedFile{Name: name, Data: data})
	}
	return files, nil
}

func (d *dependencyCache) get(key string, fetch func() ([]byte, error)) ([]byte, error) {
	d.mu.Lock()
	data, ok := d.entries[key]
	d.mu.Unlock()
	if ok {
		return data, nil
	}
	v, err, _ := d.flight.Do(key, func() (any, error) {
		data, err := fetch()
		if err != nil {
			return nil, err
		}
		d.mu.Lock()
		d.entries[key] = data
		d.mu.Unlock()
		return data, nil
	})
	if err != nil {
		return nil, err
	}
	return v.([]byte), nil
}

// download resolves d in its repository's index (read by helmindex, as
// source/helmrepo reads it) and fetches the archive.
func (r *Renderer) download(ctx context.Context, d *chart.Dependency, limits render.Limits) ([]byte, error) {
	indexURL, err := helmindex.IndexURL(d.Repository)
	if err != nil {
		return nil, fmt.Errorf("dependency %s: %w", d.Name, err)
	}
	indexData, err := r.get(ctx, indexURL, limits.MaxFileBytes)
	if err != nil {
		return nil, err
	}
	idx, err := helmindex.Parse(d.Repository, indexData, limits.MaxFileBytes)
	if err != nil {
		return nil, fmt.Errorf("dependency %s: %w", d.Name, err)
	}
	cv, err := idx.Get(d.Name, d.Version)
	if err != nil {
		return nil, fmt.Errorf("dependency %s: %w", d.Name, err)
	}
	u, err := idx.ChartURL(cv)
	if err != nil {
		return nil, fmt.Errorf("dependency %s: %w", d.Name, err)
	}
	return r.get(ctx, u, limits.MaxTotalBytes)
}

// get fetches url with the renderer's timeout and at most max bytes. Errors
// name the URL without any user information.
func (r *Renderer) get(ctx context.Context, url string, max int64) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, &render.PathError{Op: "fetch", Path: redactURL(url), Err: err}
	}
	resp, err := r.http.Do(req)
	if err != nil {
		return nil, &render.PathError{Op: "fetch", Path: redactURL(url), Err: fmt.Errorf("request failed")}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, &render.PathError{Op: "fetch", Path: redactURL(url), Err: fmt.Errorf("status %d", resp.StatusCode)}
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, max+1))
	if err != nil {
		return nil, &render.PathError{Op: "fetch", Path: redactURL(url), Err: err}
	}
	if int64(len(data)) > max {
		return nil, &render.PathError{Op: "fetch", Path: redactURL(url), Err: fmt.Errorf("%w: more than %d bytes", render.ErrTooLarge, max)}
	}
	return data, nil
}

func redactURL(u string) string {
	if i := strings.Index(u, "://"); i >= 0 {
		if at := strings.Index(u[i+3:], "@"); at >= 0 && !strings.Contains(u[i+3:i+3+at], "/") {
			return u[:i+3] + "***@" + u[i+3+at+1:]
		}
	}
	return u
}

// archiveVersion reads the version from the Chart.yaml of a chart archive.
func archiveVersion(data []byte) (string, bool) {
	c, err := loader.LoadArchive(bytes.NewReader(data))
	if err != nil || c.Metadata == nil {
		return "", false
	}
	return c.Metadata.Version, true
}
