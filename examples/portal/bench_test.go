package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/apis/v1alpha1"
)

// benchPortal serves n apps of 10 projects to an offline destination: the
// run loop records each (Unknown, the cluster being unavailable), which is
// all the list reads. The apps are generated here, never committed.
func benchPortal(b testing.TB, n int) *portal {
	b.Helper()
	return benchPortalWith(b, n, benchExtra{})
}

// benchExtra adds to benchPortal's apps: more apps (YAML documents, DIR
// in them is the folder the apps' repoURL names), files of that folder
// and clusters.
type benchExtra struct {
	apps     string
	files    map[string][]byte
	clusters []gitops.ClusterConfig
}

// benchPortalWith is benchPortal with more apps, files and clusters.
func benchPortalWith(b testing.TB, n int, extra benchExtra) *portal {
	b.Helper()
	dir := b.TempDir()
	for name, data := range extra.files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o700); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			b.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "tokens.txt"), []byte(tokAdmin+" alice platform\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "cm.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	var y strings.Builder
	for i := range n {
		fmt.Fprintf(&y, "---\napiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: app-%04d, labels: {team: t%d}}\n"+
			"spec:\n  project: p%d\n  source: {repoURL: %s, path: .}\n  destination: {server: https://offline.example, namespace: ns-%d}\n",
			i, i%10, i%10, dir, i)
	}
	y.WriteString(strings.ReplaceAll(extra.apps, "DIR", dir))
	apps, err := gitops.LoadApplications(strings.NewReader(y.String()))
	if err != nil {
		b.Fatal(err)
	}
	list := make([]*gitops.Application, len(apps))
	for i := range apps {
		list[i] = &apps[i]
	}
	pol, err := loadPolicyText("rules:\n  - {group: platform, role: admin}\n")
	if err != nil {
		b.Fatal(err)
	}
	tokens, err := loadTokenFile(filepath.Join(dir, "tokens.txt"))
	if err != nil {
		b.Fatal(err)
	}
	opts := gitops.DefaultOptions()
	opts.Clusters = append([]gitops.ClusterConfig{{Name: "offline", Server: "https://offline.example"}}, extra.clusters...)
	p, err := startPortal(context.Background(), portalConfig{Engine: opts, Apps: list, Tokens: tokens, Policy: pol})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(p.close)
	deadline := time.Now().Add(2 * time.Minute)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		done := 0
		for _, a := range list {
			if _, ok := p.engine.Apps().AppStatus(v1alpha1.KeyOf(a)); ok {
				done++
			}
		}
		if done == len(list) {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d apps reconciled", done, len(list))
		}
		<-tick.C
	}
	return p
}

// BenchmarkListAPI1000Apps is the list API's answer time with 1,000 apps:
// one page of 50, unfiltered and with a project filter and a search.
func BenchmarkListAPI1000Apps(b *testing.B) {
	p := benchPortal(b, 1000)
	c := caller{identity: identity{User: "bench", Groups: []string{"platform"}}}
	for _, q := range []string{"", "project=p3&q=app-09", "sync=Synced"} {
		b.Run("q="+q, func(b *testing.B) {
			h := p.srv.authedAs(c, p.srv.apiList)
			var size int
			for b.Loop() {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/v1/apps?"+q, nil))
				if rec.Code != http.StatusOK {
					b.Fatalf("%d %s", rec.Code, rec.Body)
				}
				size = rec.Body.Len()
			}
			b.ReportMetric(float64(size), "bytes/answer")
		})
	}
}

// BenchmarkListPage1000Apps renders the list page (HTML, one page of 50)
// with 1,000 apps and reports its weight with the script and style.
func BenchmarkListPage1000Apps(b *testing.B) {
	p := benchPortal(b, 1000)
	c := caller{identity: identity{User: "bench", Groups: []string{"platform"}}}
	h := p.srv.authedAs(c, p.srv.listPage)
	assets := 0
	for _, f := range []string{"web/static/app.js", "web/static/list.js", "web/static/style.css"} {
		data, err := webFS.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		assets += len(data)
	}
	var size int
	for b.Loop() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
		if rec.Code != http.StatusOK {
			b.Fatalf("%d", rec.Code)
		}
		size = rec.Body.Len()
	}
	b.ReportMetric(float64(size), "html-bytes")
	b.ReportMetric(float64(size+assets), "page-bytes")
}

// authedAs calls h as c, without authentication (benchmarks).
func (s *server) authedAs(c caller, h func(http.ResponseWriter, *http.Request, caller)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h(w, r, c) })
}
