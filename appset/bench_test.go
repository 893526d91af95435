package appset

import (
	"context"
	"fmt"
	"testing"

	"github.com/kubegitops/gitops/source"
	"github.com/kubegitops/gitops/source/dir"
)

// fixedRepos serves one prebuilt snapshot, so that benchmarks time
// generation and not the reading of a folder.
type fixedRepos struct{ snap source.Snapshot }

func (f *fixedRepos) Snapshot(context.Context, string, string) (source.Snapshot, error) {
	return f.snap, nil
}

func snapshotOf(b *testing.B, files map[string]string) source.Snapshot {
	b.Helper()
	ctx := context.Background()
	src := dir.New(dir.DefaultOptions())
	repo := source.Repository{URL: writeTree(b, files)}
	rev, err := src.Resolve(ctx, repo, "")
	if err != nil {
		b.Fatal(err)
	}
	snap, err := src.Snapshot(ctx, repo, rev)
	if err != nil {
		b.Fatal(err)
	}
	return snap
}

func configFiles(n int, changed int) map[string]string {
	files := map[string]string{}
	for i := range n {
		replicas := 2
		if i == changed {
			replicas = 3
		}
		files[fmt.Sprintf("clusters/c%04d/config.yaml", i)] = fmt.Sprintf(
			"cluster:\n  name: c%04d\n  address: https://c%04d.example.com:6443\n  region: kr\nreplicas: %d\nfeatures: [a, b, c]\n", i, i, replicas)
	}
	return files
}

const filesSet = header + `  goTemplate: true
  generators:
  - git:
      repoURL: ` + repoURL + `
      files: [{path: 'clusters/*/config.yaml'}]
  template:
    metadata: {name: '{{.cluster.name}}-guestbook', labels: {region: '{{.cluster.region}}'}}
    spec:
      project: default
      source: {repoURL: ` + repoURL + `, targetRevision: main, path: 'apps/guestbook', helm: {parameters: [{name: replicas, value: '{{.replicas}}'}]}}
      destination: {server: '{{.cluster.address}}', namespace: guestbook}
`

// BenchmarkGitFiles1000/first: a git files generator over 1,000 config
// files with a cold Runner; /after-one-file-changed: a Runner that
// generated the previous commit generates the next one, in which one file
// changed (only that file is parsed again).
func BenchmarkGitFiles1000(b *testing.B) {
	before := snapshotOf(b, configFiles(1000, -1))
	after := snapshotOf(b, configFiles(1000, 7))
	set := loadOne(b, filesSet)
	ctx := context.Background()
	b.Run("first", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			opts := DefaultOptions()
			opts.Repos = &fixedRepos{before}
			res, err := NewRunner(opts).Generate(ctx, set)
			if err != nil || len(res.Applications) != 1000 {
				b.Fatalf("%d apps, %v", len(res.Applications), err)
			}
		}
	})
	b.Run("after-one-file-changed", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			b.StopTimer()
			repos := &fixedRepos{before}
			opts := DefaultOptions()
			opts.Repos = repos
			r := NewRunner(opts)
			if _, err := r.Generate(ctx, set); err != nil {
				b.Fatal(err)
			}
			repos.snap = after
			b.StartTimer()
			res, err := r.Generate(ctx, set)
			if err != nil || len(res.Applications) != 1000 {
				b.Fatalf("%d apps, %v", len(res.Applications), err)
			}
		}
	})
}

// BenchmarkMatrix50x100: git directories (100 folders) x clusters (50
// Secrets): 5,000 Applications.
func BenchmarkMatrix50x100(b *testing.B) {
	files := map[string]string{}
	for i := range 100 {
		files[fmt.Sprintf("apps/app%03d/kustomization.yaml", i)] = "resources: []\n"
	}
	var cls StaticClusters
	for i := range 50 {
		cls = append(cls, Cluster{Name: fmt.Sprintf("cluster-%02d", i), Server: fmt.Sprintf("https://c%02d.example.com", i),
			Labels: map[string]string{"env": "prod"}})
	}
	opts := DefaultOptions()
	opts.Repos = &fixedRepos{snapshotOf(b, files)}
	opts.Clusters = cls
	set := loadOne(b, header+`  goTemplate: true
  generators:
  - matrix:
      generators:
      - git: {repoURL: `+repoURL+`, directories: [{path: 'apps/*'}]}
      - clusters: {selector: {matchLabels: {env: prod}}}
  template:
    metadata: {name: '{{.path.basename}}-{{.name}}', labels: {app: '{{.path.basename}}'}}
    spec:
      project: default
      source: {repoURL: `+repoURL+`, targetRevision: main, path: '{{.path.path}}'}
      destination: {server: '{{.server}}', namespace: '{{.path.basename}}'}
`)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		res, err := NewRunner(opts).Generate(ctx, set)
		if err != nil || len(res.Applications) != 5000 {
			b.Fatalf("%d apps, %v", len(res.Applications), err)
		}
	}
}
