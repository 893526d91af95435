package preview

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"

	"golang.org/x/sync/errgroup"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/source"
)

// ErrInvalidOptions is wrapped by errors in Options.
var ErrInvalidOptions = errors.New("preview: invalid options")

// side is one of the two commits with what its app files define.
type side struct {
	name string // "base" or "head"
	rev  source.Revision
	snap source.Snapshot
	m    manifests
	apps []found
}

// result is one app's render at one side.
type result struct {
	found
	objs    []*unstructured.Unstructured
	reads   map[string]readKind
	err     error
	specKey string
	// rendered is false when the base render was reused: the change
	// touched nothing it read.
	rendered bool
	reason   string
	depth    int
}

// run holds what both sides share.
type run struct {
	opts    Options
	eng     *gitops.Engine
	changes *changeSet
	base    source.Revision
	// pins caches, per targetRevision of the previewed repository,
	// whether it names the base (and so is previewed at each side's
	// commit).
	pinMu sync.Mutex
	pins  map[string]bool
}

// Run previews what moving the repository from opts.Base to opts.Head
// does to every app: see the package documentation. The error is for a
// preview that could not be made at all (bad options, a revision that
// does not resolve, an unreadable app file); an app whose render fails
// at head is reported in the Report (and makes ExitCode 2).
func Run(ctx context.Context, opts Options) (Report, error) {
	if opts.Source == nil || opts.Base == "" || opts.Head == "" || len(opts.Apps) == 0 {
		return Report{}, fmt.Errorf("%w: Source, Base, Head and Apps are required", ErrInvalidOptions)
	}
	d := DefaultOptions()
	if opts.Parallelism <= 0 {
		opts.Parallelism = d.Parallelism
	}
	if opts.MaxDepth <= 0 {
		opts.MaxDepth = d.MaxDepth
	}
	if opts.Log.GetSink() == nil {
		opts.Log = d.Log
	}
	if opts.RepoURL == "" {
		opts.RepoURL = opts.Repository.URL
	}
	base, err := openSide(ctx, opts, "base", opts.Base)
	if err != nil {
		return Report{}, err
	}
	defer closeSnap(base.snap)
	head, err := openSide(ctx, opts, "head", opts.Head)
	if err != nil {
		return Report{}, err
	}
	defer closeSnap(head.snap)
	changes, err := newChangeSet(base.snap, head.snap)
	if err != nil {
		return Report{}, fmt.Errorf("changed paths %s..%s: %w", short(base.rev.Commit), short(head.rev.Commit), err)
	}
	var renders atomic.Int64
	eng, err := offlineEngine(opts, &renders)
	if err != nil {
		return Report{}, err
	}
	defer eng.Close()
	r := &run{opts: opts, eng: eng, changes: changes, base: base.rev, pins: map[string]bool{}}
	rep := Report{Base: base.rev.Commit, Head: head.rev.Commit, ChangedPaths: changes.paths}
	others := &defaultSources{}
	for _, s := range []*side{base, head} {
		if err := r.loadSide(ctx, s, others); err != nil {
			return Report{}, err
		}
	}
	baseRes, err := r.renderSide(ctx, base, nil)
	rep.Renders.Base = int(renders.Load())
	headRes, err := r.renderSide(ctx, head, baseRes)
	if err != nil {
		return Report{}, err
	}
	rep.Renders.Head = int(renders.Load()) - rep.Renders.Base
	if err := r.report(ctx, &rep, base, head, baseRes, headRes); err != nil {
		return Report{}, err
	}
	return rep, nil
}

func openSide(ctx context.Context, opts Options, name, ref string) (*side, error) {
	rev, err := opts.Source.Resolve(ctx, opts.Repository, ref)
	if err != nil {
		return nil, fmt.Errorf("%s %q of %s: %w", name, ref, source.RedactURL(opts.RepoURL), err)
	}
	snap, err := opts.Source.Snapshot(ctx, opts.Repository, rev)
	if err != nil {
		return nil, fmt.Errorf("%s %s of %s: %w", name, short(rev.Commit), source.RedactURL(opts.RepoURL), err)
	}
	return &side{name: name, rev: rev, snap: snap}, nil
}

func closeSnap(s source.Snapshot) {
	if c, ok := s.(source.Closer); ok {
		_ = c.Close()
	}
}

func short(commit string) string {
	if len(commit) > 12 {
		return commit[:12]
	}
	return commit
}

// loadSide reads the app files at one side and generates its
// ApplicationSets.
func (r *run) loadSide(ctx context.Context, s *side, others *defaultSources) error {
	m, err := loadManifests(s.snap, r.opts.Apps)
	if err != nil {
		return fmt.Errorf("%s %s: %w", s.name, short(s.rev.Commit), err)
	}
	repos := sideRepos{src: r.opts.Source, repo: r.opts.Repository, rev: s.rev, repoURL: r.opts.RepoURL, others: others, creds: r.opts.Credentials}
	gen, err := generate(ctx, m, repos, r.opts.AppSetClusters)
	if err != nil {
		return fmt.Errorf("%s %s: %w", s.name, short(s.rev.Commit), err)
	}
	s.m = m
	s.apps = append(append([]found{}, m.apps...), gen...)
	return nil
}

// renderSide renders every app of a side and, level by level, the child
// Applications they render (app of apps). With prior (the base results),
// an app whose spec is unchanged and whose base render read nothing the
// change touched is not rendered again.
func (r *run) renderSide(ctx context.Context, s *side, prior map[string]*result) (map[string]*result, error) {
	out := map[string]*result{}
	level := s.apps
	for depth := 0; len(level) > 0; depth++ {
		if depth > r.opts.MaxDepth {
			return nil, fmt.Errorf("%s: app of apps nested deeper than %d (%s)", s.name, r.opts.MaxDepth, level[0].origin)
		}
		var todo []*result
		for _, f := range level {
			id := appID(f.app)
			if prev, dup := out[id]; dup {
				return nil, fmt.Errorf("%s: application %s is defined twice (%s, %s)", s.name, id, prev.origin, f.origin)
			}
			key, err := r.specKey(ctx, f.app)
			if err != nil {
				return nil, fmt.Errorf("%s: application %s: %w", s.name, id, err)
			}
			res := &result{found: f, specKey: key, depth: depth}
			out[id] = res
			todo = append(todo, res)
		}
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(r.opts.Parallelism)
		for _, res := range todo {
			g.Go(func() error {
				r.renderOne(gctx, s, res, prior)
				return ctx.Err()
			})
		}
		if err := g.Wait(); err != nil {
			return nil, err
		}
		level = nil
		for _, res := range todo {
			for _, obj := range res.objs {
				if obj.GetKind() != "Application" || obj.GroupVersionKind().Group != "argoproj.io" {
					continue
				}
				child, err := decodeChild(obj)
				if err != nil {
					res.err = errors.Join(res.err, err)
					continue
				}
				level = append(level, found{app: child, origin: "app " + appID(res.app)})
			}
		}
		sort.SliceStable(level, func(i, j int) bool { return appID(level[i].app) < appID(level[j].app) })
	}
	return out, nil
}

// renderOne renders one app at the side's commit, or reuses its base
// render when nothing it read changed.
func (r *run) renderOne(ctx context.Context, s *side, res *result, prior map[string]*result) {
	if prior != nil {
		prev := prior[appID(res.app)]
		switch {
		case prev == nil:
			res.reason = "new application"
		case prev.specKey != res.specKey:
			res.reason = "application spec changed"
		case prev.err != nil:
			res.reason = "base render failed"
		default:
			if p := r.changes.affects(prev.reads); p != "" {
				res.reason = "reads " + p
			} else {
				res.objs, res.reads = prev.objs, prev.reads
				return
			}
		}
	}
	res.rendered = true
	app, roles := r.renderCopy(ctx, res.app, s.rev.Commit)
	rec := newReads(roles)
	objs, _, err := r.eng.Render(withReads(ctx, rec), app)
	res.objs, res.err, res.reads = objs, err, rec.Paths()
}

// renderCopy returns the app as the offline engine renders it at commit:
// sources of the previewed repository that track the base pinned to
// commit, the destination the offline one (same namespace), the
// implicit default project (project rules are checked on the result),
// and the role of each non-chart source for the read recorder.
func (r *run) renderCopy(ctx context.Context, app *gitops.Application, commit string) (*gitops.Application, []sourceRole) {
	c := copyApp(app)
	c.Spec.Project = ""
	c.Spec.Destination = gitops.ApplicationDestination{Server: offlineServer, Namespace: app.Spec.Destination.Namespace}
	var roles []sourceRole
	pin := func(src *gitops.ApplicationSource) {
		if src.Chart != "" {
			return
		}
		prev := sameRepo(src.RepoURL, r.opts.RepoURL) && r.pinned(ctx, src.TargetRevision)
		if prev {
			src.TargetRevision = commit
		}
		roles = append(roles, sourceRole{previewed: prev, valuesOnly: src.Ref != "" && src.Path == ""})
	}
	if c.Spec.Source != nil {
		pin(c.Spec.Source)
	}
	for i := range c.Spec.Sources {
		pin(&c.Spec.Sources[i])
	}
	return c, roles
}

// pinned reports whether a targetRevision of the previewed repository
// names the base: empty, HEAD, the base or Options.Branch as written, or
// a revision that resolves to the base commit.
func (r *run) pinned(ctx context.Context, target string) bool {
	switch target {
	case "", "HEAD", r.opts.Base, r.base.Commit:
		return true
	}
	if b := r.opts.Branch; b != "" && (target == b || target == "refs/heads/"+b) {
		return true
	}
	r.pinMu.Lock()
	defer r.pinMu.Unlock()
	if v, ok := r.pins[target]; ok {
		return v
	}
	ctx, cancel := context.WithTimeout(ctx, gitTimeout)
	defer cancel()
	rev, err := r.opts.Source.Resolve(ctx, r.opts.Repository, target)
	v := err == nil && rev.Commit == r.base.Commit
	r.pins[target] = v
	return v
}

// specKey is the app's spec with, for each source, whether it is pinned:
// equal keys at both sides mean the app asks for the same render.
func (r *run) specKey(ctx context.Context, app *gitops.Application) (string, error) {
	type keyed struct {
		Spec   gitops.ApplicationSpec `json:"spec"`
		Pinned []bool                 `json:"pinned"`
	}
	k := keyed{Spec: app.Spec}
	for _, src := range app.Spec.AllSources() {
		k.Pinned = append(k.Pinned, src.Chart == "" && sameRepo(src.RepoURL, r.opts.RepoURL) && r.pinned(ctx, src.TargetRevision))
	}
	data, err := json.Marshal(k)
	return string(data), err
}

func copyApp(app *gitops.Application) *gitops.Application {
	return app.DeepCopy()
}

func decodeChild(obj *unstructured.Unstructured) (*gitops.Application, error) {
	data, err := json.Marshal(obj.Object)
	if err != nil {
		return nil, err
	}
	apps, err := gitops.LoadApplications(bytesReader(data))
	if err != nil {
		return nil, fmt.Errorf("child application %s: %w", obj.GetName(), err)
	}
	return &apps[0], nil
}
