package engine

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"hash/maphash"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubegitops/gitops/health"
	"github.com/kubegitops/gitops/resource"
	"github.com/kubegitops/gitops/source"
)

// refreshMemo is what an app's last refresh compared and concluded, kept
// so that a refresh where nothing it read has changed gives the same
// answer without rendering or diffing. At a fleet's steady state almost
// every refresh is such a one: rendering (snapshot, cache key, store read,
// decode) and comparing were about half of a 10,000-app fleet's steady
// CPU (BENCHMARKS.md).
//
// A memo is used only when all of these hold, else the refresh renders and
// compares as usual and keeps a new memo:
//   - the same inputs (memoInputs): the app's name, spec and annotations,
//     the revisions its sources resolve to now, its destination cluster
//     and that cluster's discovery generation (scopes and API versions);
//   - the same Differ (rebuilt whenever the app's comparison options
//     change), which the memo lives beside;
//   - the same live objects: every desired object looked up in the cluster
//     cache has the same uid and resourceVersion (or is still absent), and
//     the app's managed objects are the same, each at the same version;
//   - not a hard refresh, no tainted kind in the cluster cache, no host
//     Policies (they may answer differently for the same object), and a
//     cache that counts its discoveries.
//
// A comparison that produced a diff error, a verdict from a deduced schema
// or a policy error is never kept. Health is never memoized: it is judged
// again from the live objects on every refresh (a Lua check may read the
// clock).
type refreshMemo struct {
	inputs    [sha256.Size]byte
	live      uint64
	revisions []source.Revision
	excluded  []resource.Key
	cmp       comparison
	// links pairs each health judged from a live object with the row
	// that shows it, so that both are judged again on reuse.
	links []healthLink
}

// healthLink is an index into comparison.healths and the index of the row
// showing the same status (-1 when none does).
type healthLink struct{ health, row int }

// memoInputs hashes what a refresh's render and comparison depend on
// besides the live objects. ok is false when the app may not be memoized.
func (e *Engine) memoInputs(app *Application, cs *clusterState, revs []source.Revision) (sum [sha256.Size]byte, ok bool) {
	gen, counted := cs.DiscoveryGeneration()
	if !counted || len(e.opts.Policies) > 0 {
		return sum, false
	}
	data, err := json.Marshal(struct {
		App         string
		Spec        ApplicationSpec
		Annotations map[string]string
		Revisions   []source.Revision
		Cluster     string
		Discovery   uint64
		Project     []byte
	}{e.AppKey(app), app.Spec, app.Annotations, revs, cs.Name(), gen, e.projectFingerprint(app)})
	if err != nil {
		return sum, false
	}
	return sha256.Sum256(data), true
}

// liveFingerprint hashes the uid and resourceVersion of every object a
// comparison read: the cache entry of each desired key (keys, in order;
// absence counts) and the app's managed objects.
func (e *Engine) liveFingerprint(cs *clusterState, app string, keys []health.ResourceHealth) uint64 {
	lh := e.newLiveHash()
	for _, rh := range keys {
		live, _ := cs.Cache().Get(rh.Key)
		lh.desired(live)
	}
	lh.managed(cs.Cache().Managed(app))
	return lh.sum()
}

// liveHash builds a live fingerprint object by object. compare feeds it
// the very objects it compares, as it reads them, so a memo is kept under
// the versions its comparison saw: a watch event that lands between the
// comparison and keepMemo must not give an old verdict the new versions'
// fingerprint (every later refresh would reuse it while the cache has
// long moved on).
type liveHash struct{ h maphash.Hash }

func (e *Engine) newLiveHash() *liveHash {
	lh := &liveHash{}
	lh.h.SetSeed(e.memoSeed)
	return lh
}

func (lh *liveHash) version(obj *unstructured.Unstructured) {
	lh.h.WriteString(string(obj.GetUID()))
	lh.h.WriteByte(0)
	lh.h.WriteString(obj.GetResourceVersion())
	lh.h.WriteByte(0)
}

// desired adds the live object of one desired key; nil when it has none.
func (lh *liveHash) desired(live *unstructured.Unstructured) {
	if live != nil {
		lh.version(live)
		return
	}
	lh.h.WriteByte(1)
}

// managed adds the app's managed objects, after every desired key.
func (lh *liveHash) managed(objs []*unstructured.Unstructured) {
	lh.h.WriteByte(2)
	for _, obj := range objs {
		lh.h.WriteString(obj.GetAPIVersion())
		lh.h.WriteByte(0)
		lh.h.WriteString(obj.GetKind())
		lh.h.WriteByte(0)
		lh.h.WriteString(obj.GetNamespace())
		lh.h.WriteByte(0)
		lh.h.WriteString(obj.GetName())
		lh.h.WriteByte(0)
		lh.version(obj)
	}
}

func (lh *liveHash) sum() uint64 { return lh.h.Sum64() }

// keepMemo remembers cmp as the outcome of inputs for the app's differ,
// unless cmp is volatile.
func (e *Engine) keepMemo(app *Application, cs *clusterState, differ Differ, inputs [sha256.Size]byte, desired rendered, cmp comparison) {
	if cmp.volatile || cmp.policyErr != nil || len(cs.Cache().Tainted()) > 0 {
		e.dropMemo(app, differ)
		return
	}
	m := &refreshMemo{
		inputs:    inputs,
		live:      cmp.seen,
		revisions: slices.Clone(desired.revisions),
		excluded:  slices.Clone(desired.excluded),
		cmp:       cmp.clone(),
	}
	rowOf := make(map[*health.Status]int, len(cmp.rows))
	for i, row := range cmp.rows {
		if row.Health != nil {
			rowOf[row.Health] = i
		}
	}
	for _, h := range cmp.fromLive {
		r, ok := rowOf[cmp.healths[h].Status]
		if !ok {
			r = -1
		}
		m.links = append(m.links, healthLink{health: h, row: r})
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if d, ok := e.differs[e.AppKey(app)]; ok && d.differ == differ {
		d.memo = m
	}
}

// dropMemo forgets the app's memo.
func (e *Engine) dropMemo(app *Application, differ Differ) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if d, ok := e.differs[e.AppKey(app)]; ok && d.differ == differ {
		d.memo = nil
	}
}

// reuseMemo returns the app's memoized comparison and render outcome when
// the memo's conditions hold (see refreshMemo), with every health judged
// again from the live objects.
func (e *Engine) reuseMemo(ctx context.Context, app *Application, cs *clusterState, differ Differ, inputs [sha256.Size]byte) (comparison, rendered, bool) {
	e.mu.Lock()
	var m *refreshMemo
	if d, ok := e.differs[e.AppKey(app)]; ok && d.differ == differ {
		m = d.memo
	}
	e.mu.Unlock()
	if m == nil || m.inputs != inputs || len(cs.Cache().Tainted()) > 0 ||
		e.liveFingerprint(cs, e.AppKey(app), m.cmp.healths) != m.live {
		return comparison{}, rendered{}, false
	}
	cmp := m.cmp.clone()
	for _, l := range m.links {
		key := cmp.healths[l.health].Key
		live, ok := cs.Cache().Get(key)
		if !ok {
			return comparison{}, rendered{}, false // gone since the fingerprint
		}
		hs, err := health.CheckContext(ctx, e.health, live)
		if err != nil {
			hs = &health.Status{Code: health.Unknown, Message: err.Error()}
		}
		cmp.healths[l.health] = health.ResourceHealthOf(live, hs)
		if l.row >= 0 {
			cmp.rows[l.row].Health = hs
		}
	}
	return cmp, rendered{revisions: slices.Clone(m.revisions), excluded: slices.Clone(m.excluded)}, true
}

// clone copies a comparison's slices, health statuses and child
// Applications, so that a memo and the statuses made from it share nothing
// mutable. fromLive is left out: a memo keeps it as its links.
func (c comparison) clone() comparison {
	out := c
	out.rows = slices.Clone(c.rows)
	out.healths = slices.Clone(c.healths)
	copied := map[*health.Status]*health.Status{}
	copyOf := func(s *health.Status) *health.Status {
		if s == nil {
			return nil
		}
		if n, ok := copied[s]; ok {
			return n
		}
		n := *s
		copied[s] = &n
		return &n
	}
	for i := range out.rows {
		out.rows[i].Health = copyOf(out.rows[i].Health)
	}
	for i := range out.healths {
		out.healths[i].Status = copyOf(out.healths[i].Status)
	}
	out.conditions = slices.Clone(c.conditions)
	out.fromLive = nil
	out.children = nil
	for _, child := range c.children {
		out.children = append(out.children, child.DeepCopy())
	}
	return out
}
