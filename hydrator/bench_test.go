package hydrator_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"testing/fstest"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/hydrator"
	"github.com/kubegitops/gitops/internal/gitserver"
	"github.com/kubegitops/gitops/internal/testfiles"
	"github.com/kubegitops/gitops/internal/testfiles/testengine"
	"github.com/kubegitops/gitops/render"
	"github.com/kubegitops/gitops/render/plain"
	"github.com/kubegitops/gitops/source"
	gitsrc "github.com/kubegitops/gitops/source/git"
)

// counting counts the renders that reach the renderer (render cache
// misses).
type counting struct {
	next *plain.Renderer
	n    *atomic.Int64
}

func (c counting) Render(ctx context.Context, in render.Input) ([]*unstructured.Unstructured, error) {
	c.n.Add(1)
	return c.next.Render(ctx, in)
}

func (c counting) Identity(in render.Input) (render.Identity, error) { return c.next.Identity(in) }

// BenchmarkHydrate100AppsOneChanged: 100 apps of one dry repository
// hydrate to one branch; each iteration commits a change to one app's
// folder and hydrates the group: the figures are the renders that missed
// the render cache and the hydrated commits per iteration.
func BenchmarkHydrate100AppsOneChanged(b *testing.B) {
	const apps = 100
	ctx := context.Background()
	opts := gitserver.DefaultOptions()
	opts.PushUsername, opts.PushPassword = pushUser, pushPassword
	gs := testfiles.GitServer(b, opts)
	files := fstest.MapFS{}
	for i := range apps {
		files[fmt.Sprintf("apps/a%03d/cm.yaml", i)] = &fstest.MapFile{Data: []byte(fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a%03d}\ndata: {v: \"0\"}\n", i))}
	}
	if _, err := gs.CreateRepository(ctx, "many", files); err != nil {
		b.Fatal(err)
	}
	url := gs.RepoURL("many")
	var renders atomic.Int64
	eng := testengine.New(b, cluster.Config(), func(o *gitops.Options) {
		o.Renderers = map[render.Kind]render.Renderer{render.KindPlain: counting{plain.New(plain.DefaultOptions()), &renders}}
	})
	src, err := eng.Sources().Source(url)
	if err != nil {
		b.Fatal(err)
	}
	hopts := hydrator.DefaultOptions()
	hopts.Git = src.(*gitsrc.Source)
	hopts.WriteCredentials = func(string, string) *source.Credentials {
		return &source.Credentials{Username: pushUser, Password: pushPassword}
	}
	h, err := hydrator.New(eng, hopts)
	if err != nil {
		b.Fatal(err)
	}
	group := make([]*v1alpha1.Application, apps)
	for i := range group {
		a := &v1alpha1.Application{Spec: v1alpha1.ApplicationSpec{
			SourceHydrator: &v1alpha1.SourceHydrator{
				DrySource:  v1alpha1.DrySource{RepoURL: url, TargetRevision: "HEAD", Path: fmt.Sprintf("apps/a%03d", i)},
				SyncSource: v1alpha1.SyncSource{TargetBranch: "env/prod", Path: fmt.Sprintf("prod/a%03d", i)},
			},
			Destination: v1alpha1.ApplicationDestination{Server: v1alpha1.KubernetesInternalAPIServerAddr, Namespace: "bench"},
		}}
		a.Name = fmt.Sprintf("a%03d", i)
		group[i] = a
	}
	if o := h.Hydrate(ctx, group); o.Err != nil || !o.Committed {
		b.Fatalf("first hydration: %+v", o)
	}
	var commits, missed int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		if _, err := gs.Commit(ctx, "many", "change one", map[string][]byte{
			"apps/a007/cm.yaml": []byte(fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a007}\ndata: {v: \"%d\"}\n", i+1)),
		}); err != nil {
			b.Fatal(err)
		}
		eng.Apps().Invalidate(url)
		before := renders.Load()
		b.StartTimer()
		o := h.Hydrate(ctx, group)
		if o.Err != nil {
			b.Fatal(o.Err)
		}
		missed += renders.Load() - before
		if o.Committed {
			commits++
		}
	}
	b.ReportMetric(float64(missed)/float64(b.N), "renders/op")
	b.ReportMetric(float64(commits)/float64(b.N), "commits/op")
}
