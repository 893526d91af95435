package preview

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/appset"
	"github.com/kubegitops/gitops/resource"
	"github.com/kubegitops/gitops/source"
)

// manifests are the Applications, ApplicationSets and AppProjects the
// app files of one side hold.
type manifests struct {
	apps     []found
	sets     []appset.ApplicationSet
	setFiles []string
	projects []gitops.Project
}

// found is an Application and where it came from.
type found struct {
	app    *gitops.Application
	origin string
}

// loadManifests reads opts.Apps at one side: from the side's tree when the
// path exists there, else from disk.
func loadManifests(snap source.Snapshot, paths []string) (manifests, error) {
	var m manifests
	for _, p := range paths {
		files, err := appFiles(snap, p)
		if err != nil {
			return manifests{}, err
		}
		for _, f := range files {
			if err := m.decode(f.name, f.data); err != nil {
				return manifests{}, err
			}
		}
	}
	return m, nil
}

type appFile struct {
	name string
	data []byte
}

// appFiles lists the manifest files of p, from the tree or from disk.
func appFiles(snap source.Snapshot, p string) ([]appFile, error) {
	if rel := path.Clean(filepath.ToSlash(p)); !filepath.IsAbs(p) && fs.ValidPath(rel) {
		if _, err := fs.Stat(snap, rel); err == nil {
			return treeFiles(snap, rel)
		}
	}
	if _, err := os.Stat(p); err != nil {
		return nil, fmt.Errorf("apps %s: neither in the repository nor on disk: %w", p, err)
	}
	return treeFiles(os.DirFS(filepath.Dir(p)), filepath.Base(p))
}

// treeFiles reads p of fsys, or the manifest files of the folder p
// (v1alpha1.ManifestFiles).
func treeFiles(fsys fs.FS, p string) ([]appFile, error) {
	names, err := v1alpha1.ManifestFiles(fsys, p)
	if err != nil {
		return nil, fmt.Errorf("apps %w", err)
	}
	out := make([]appFile, 0, len(names))
	for _, n := range names {
		data, err := fs.ReadFile(fsys, n)
		if err != nil {
			return nil, fmt.Errorf("apps %s: %w", n, err)
		}
		out = append(out, appFile{name: n, data: data})
	}
	return out, nil
}

// decode splits one file into Applications, ApplicationSets and
// AppProjects, each loaded strictly; any other kind is refused.
func (m *manifests) decode(name string, data []byte) error {
	objs, err := resource.Decode(name, data, resource.DefaultDecodeOptions())
	if err != nil {
		return err
	}
	for _, obj := range objs {
		js, err := json.Marshal(obj.Object)
		if err != nil {
			return fmt.Errorf("%s: %s: %w", name, resource.KeyOf(obj), err)
		}
		switch resource.GroupKindOf(obj).String() {
		case "Application.argoproj.io":
			apps, err := gitops.LoadApplications(bytes.NewReader(js))
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			for i := range apps {
				m.apps = append(m.apps, found{app: &apps[i], origin: "file " + name})
			}
		case "ApplicationSet.argoproj.io":
			sets, err := appset.Load(bytes.NewReader(js))
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			for range sets {
				m.setFiles = append(m.setFiles, name)
			}
			m.sets = append(m.sets, sets...)
		case "AppProject.argoproj.io":
			projs, err := gitops.LoadProjects(bytes.NewReader(js))
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			m.projects = append(m.projects, projs...)
		default:
			return fmt.Errorf("%s: %s: %w", name, resource.KeyOf(obj), ErrUnsupportedKind)
		}
	}
	return nil
}

// ErrUnsupportedKind is wrapped when an app file holds something other
// than Applications, ApplicationSets and AppProjects.
var ErrUnsupportedKind = errors.New("not an Application, ApplicationSet or AppProject")

// sideRepos serves git generators: the previewed repository at the
// side's commit (whatever revision the generator names: the preview asks
// what the change does to it), others through the default sources.
type sideRepos struct {
	src     source.Source
	repo    source.Repository
	rev     source.Revision
	repoURL string
	others  *defaultSources
	creds   func(string) *source.Credentials
}

// Snapshot implements appset.Repos.
func (r sideRepos) Snapshot(ctx context.Context, repoURL, revision string) (source.Snapshot, error) {
	if sameRepo(repoURL, r.repoURL) {
		return r.src.Snapshot(ctx, r.repo, r.rev)
	}
	s, err := r.others.get(repoURL)
	if err != nil {
		return nil, err
	}
	repo := source.Repository{URL: repoURL}
	if r.creds != nil {
		repo.Credentials = r.creds(repoURL)
	}
	return appset.SourceRepos{Source: s, Repository: func(string) (source.Repository, error) { return repo, nil }}.Snapshot(ctx, repoURL, revision)
}

// generate runs the ApplicationSets of one side.
func generate(ctx context.Context, m manifests, repos appset.Repos, clusters appset.Clusters) ([]found, error) {
	opts := appset.DefaultOptions()
	opts.Repos = repos
	opts.Clusters = clusters
	opts.Validate = func(obj map[string]any) error {
		js, err := json.Marshal(obj)
		if err != nil {
			return err
		}
		_, err = gitops.LoadApplications(bytes.NewReader(js))
		return err
	}
	var out []found
	for i := range m.sets {
		set := &m.sets[i]
		res, err := appset.Generate(ctx, set, opts)
		if err != nil {
			return nil, fmt.Errorf("%s: ApplicationSet %s: %w", m.setFiles[i], set.Name, err)
		}
		for _, obj := range res.Applications {
			js, err := json.Marshal(obj.Object)
			if err != nil {
				return nil, err
			}
			apps, err := gitops.LoadApplications(bytes.NewReader(js))
			if err != nil {
				return nil, fmt.Errorf("ApplicationSet %s: %w", set.Name, err)
			}
			out = append(out, found{app: &apps[0], origin: "ApplicationSet " + set.Name})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return appID(out[i].app) < appID(out[j].app) })
	return out, nil
}

// appID names an app in reports: namespace/name, or the name alone.
func appID(a *gitops.Application) string {
	if a.Namespace == "" {
		return a.Name
	}
	return a.Namespace + "/" + a.Name
}
