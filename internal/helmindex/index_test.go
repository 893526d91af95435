package helmindex_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/repo"
	"sigs.k8s.io/yaml"

	"github.com/kubegitops/gitops/internal/helmindex"
)

// A repository index with what real ones hold: unsorted versions, a
// non-semver version, an empty entry, an invalid entry, the duplicate
// dependency Helm tolerates, prereleases, build metadata, Helm 2 fields.
const indexYAML = `apiVersion: v1
generated: "2024-01-01T00:00:00Z"
entries:
  web:
    - {apiVersion: v2, name: web, version: 1.0.0, urls: [web-1.0.0.tgz], checksum: abc, engine: gotpl}
    - {apiVersion: v2, name: web, version: 1.2.0, urls: [web-1.2.0.tgz]}
    - {apiVersion: v2, name: web, version: 1.10.0-rc.1, urls: [web-1.10.0-rc.1.tgz]}
    - {apiVersion: v2, name: web, version: 1.1.0+build.7, urls: ["https://cdn.example/web-1.1.0.tgz"]}
    - {apiVersion: v2, name: web, version: latest, urls: [web-latest.tgz]}
    -
    - {apiVersion: v2, name: "", version: 9.9.9, urls: [bad.tgz]}
  db:
    - apiVersion: v2
      name: db
      version: 2.0.0
      urls: [charts/db-2.0.0.tgz]
      dependencies:
        - {name: common, version: 1.x, repository: "https://x"}
        - {name: common, version: 1.x, repository: "https://x"}
    - {name: db, version: 1.5.0, urls: [charts/db-1.5.0.tgz]}
  empty: []
`

// TestGetChoosesAsHelmDoes: for every chart and revision, Parse and Get
// choose the version Helm's LoadIndexFile and IndexFile.Get choose, and
// fail where Helm fails.
func TestGetChoosesAsHelmDoes(t *testing.T) {
	for _, doc := range []struct{ name, data string }{{"yaml", indexYAML}, {"json", mustJSON(t, indexYAML)}} {
		path := filepath.Join(t.TempDir(), "index.yaml")
		if err := os.WriteFile(path, []byte(doc.data), 0o600); err != nil {
			t.Fatal(err)
		}
		want, err := repo.LoadIndexFile(path)
		if err != nil {
			t.Fatal(err)
		}
		got, err := helmindex.Parse("https://charts.example/stable", []byte(doc.data), 1<<20)
		if err != nil {
			t.Fatalf("%s: %v", doc.name, err)
		}
		for _, name := range []string{"web", "db", "empty", "nope"} {
			if len(got.Entries[name]) != len(want.Entries[name]) {
				t.Errorf("%s: %s has %d entries, Helm keeps %d", doc.name, name, len(got.Entries[name]), len(want.Entries[name]))
			}
			for _, rev := range []string{"", "*", "1.0.0", "1.x", "~1.1", ">=1.2.0-0", "1.1.0+build.7", "latest", "2.0.0", "^1", "not a constraint", "3.x"} {
				wcv, werr := want.Get(name, rev)
				gcv, gerr := got.Get(name, rev)
				switch {
				case (werr == nil) != (gerr == nil):
					t.Errorf("%s: Get(%s, %q): error %v, Helm's %v", doc.name, name, rev, gerr, werr)
				case werr == nil && gcv.Version != wcv.Version:
					t.Errorf("%s: Get(%s, %q) = %s, Helm chooses %s", doc.name, name, rev, gcv.Version, wcv.Version)
				case gerr != nil && !errors.Is(gerr, helmindex.ErrNoChart) && !errors.Is(gerr, helmindex.ErrNoVersion):
					t.Errorf("%s: Get(%s, %q): untyped error %v", doc.name, name, rev, gerr)
				}
			}
		}
	}
}

func mustJSON(t *testing.T, y string) string {
	t.Helper()
	data, err := yaml.YAMLToJSON([]byte(y))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestParseRefusesWhatIsNotAnIndex: each bad index is a typed *Error
// naming the repository without its credentials.
func TestParseRefusesWhatIsNotAnIndex(t *testing.T) {
	const repoURL = "https://user:SECRET@charts.example/stable"
	for _, c := range []struct {
		name, data string
		want       error
	}{
		{"empty", "", helmindex.ErrEmpty},
		{"blank", "\n  \n", helmindex.ErrEmpty},
		{"too large", indexYAML + strings.Repeat("#", 1<<10), helmindex.ErrTooLarge},
		{"not yaml", "apiVersion: v1\nentries: [", helmindex.ErrInvalid},
		{"unknown field", "apiVersion: v1\nentries: {}\nextra: 1\n", helmindex.ErrInvalid},
		{"entries not a map", "apiVersion: v1\nentries: [1, 2]\n", helmindex.ErrInvalid},
		{"no apiVersion", "entries:\n  web:\n    - {name: web, version: 1.0.0}\n", helmindex.ErrNoAPIVersion},
	} {
		_, err := helmindex.Parse(repoURL, []byte(c.data), int64(len(indexYAML)))
		var ie *helmindex.Error
		if !errors.Is(err, c.want) || !errors.As(err, &ie) {
			t.Errorf("%s: error %v, want %v as *helmindex.Error", c.name, err, c.want)
			continue
		}
		if !strings.Contains(err.Error(), "charts.example/stable") || strings.Contains(err.Error(), "SECRET") {
			t.Errorf("%s: error %q must name the repository without its password", c.name, err)
		}
	}
}

// TestChartURLResolvesAsHelmDoes: relative chart URLs against the
// repository URL, its query kept, as repo.ResolveReferenceURL does.
func TestChartURLResolvesAsHelmDoes(t *testing.T) {
	for _, c := range []struct{ base, ref string }{
		{"https://charts.example/stable", "web-1.0.0.tgz"},
		{"https://charts.example/stable/", "web-1.0.0.tgz"},
		{"https://charts.example/stable/", "charts/web-1.0.0.tgz"},
		{"https://charts.example/stable/", "/abs/web-1.0.0.tgz"},
		{"https://charts.example/stable?sig=abc&x=1", "web-1.0.0.tgz"},
		{"https://charts.example/a%2Fb/", "web-1.0.0.tgz"},
		{"https://charts.example/stable", "https://cdn.example/web.tgz?t=1"},
		{"https://charts.example", "index.yaml"},
	} {
		want, werr := repo.ResolveReferenceURL(c.base, c.ref)
		got, err := helmindex.ResolveReferenceURL(c.base, c.ref)
		if err != nil || werr != nil || got != want {
			t.Errorf("ResolveReferenceURL(%q, %q) = %q %v, Helm's %q %v", c.base, c.ref, got, err, want, werr)
		}
	}
	if _, err := helmindex.ResolveReferenceURL("https://charts.example", "%zz"); !errors.Is(err, helmindex.ErrInvalidURL) {
		t.Errorf("unparsable chart URL: %v", err)
	}
	idx, err := helmindex.Parse("https://charts.example/stable?sig=abc", []byte(indexYAML), 0)
	if err != nil {
		t.Fatal(err)
	}
	cv, err := idx.Get("db", "2.0.0")
	if err != nil {
		t.Fatal(err)
	}
	if u, err := idx.ChartURL(cv); err != nil || u != "https://charts.example/stable/charts/db-2.0.0.tgz?sig=abc" {
		t.Errorf("ChartURL = %q %v", u, err)
	}
}

// TestOCITagsSelectAsHelmDoes: tags are listed as Helm's registry client
// lists them ("_" read as "+", non-semver dropped, highest first) and a
// revision selects as registry.GetTagMatchingVersionOrConstraint does.
func TestOCITagsSelectAsHelmDoes(t *testing.T) {
	tags := helmindex.SortVersions([]string{"1.0.0", "latest", "1.1.0_build.7", "v2.0.0", "1.0.1", "1.2.0-rc.1"})
	if strings.Join(tags, " ") != "1.2.0-rc.1 1.1.0+build.7 1.0.1 1.0.0" {
		t.Fatalf("SortVersions = %v", tags)
	}
	for _, c := range []struct{ revision, want string }{
		{"", "1.1.0+build.7"}, {"*", "1.1.0+build.7"}, {"1.0.x", "1.0.1"}, {"1.0.0", "1.0.0"}, {"^1.1", "1.1.0+build.7"}, {">=1.2.0-0", "1.2.0-rc.1"},
	} {
		if got, err := helmindex.Select(tags, c.revision); err != nil || got != c.want {
			t.Errorf("Select(%q) = %q %v, want %s", c.revision, got, err, c.want)
		}
	}
	for _, rev := range []string{"9.x", "not a version"} {
		if _, err := helmindex.Select(tags, rev); !errors.Is(err, helmindex.ErrNoVersion) {
			t.Errorf("Select(%q): %v", rev, err)
		}
	}
}
