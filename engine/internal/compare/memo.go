package compare

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"hash/maphash"
	"slices"
	"unique"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/cache"
	"github.com/kubegitops/gitops/health"
	"github.com/kubegitops/gitops/resource"
	"github.com/kubegitops/gitops/source"
)

// memo is what an app's last refresh compared and concluded, kept
// so that a refresh where nothing it read has changed gives the same
// answer without rendering or diffing. At a fleet's steady state almost
// every refresh is such a one: rendering (snapshot, cache key, store read,
// decode) and comparing were about half of a 10,000-app fleet's steady
// CPU (BENCHMARKS.md).
//
// A memo is used only when all of these hold, else the refresh renders and
// compares as usual and keeps a new memo:
//   - the same inputs (Inputs): the app's name, spec and annotations,
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
// or a policy error is never kept. Health is judged again from the live
// objects on every reuse (a Lua script may read the clock, a host's Go
// check anything), except a pure verdict: one *health.DefaultChecker
// gave for a kind it judges by the object alone (DefaultChecker.Pure: a
// built-in Go check or the generic one). The live fingerprint vouches that
// the object is at the version the verdict was given for, so while the
// same checker judges, the kept verdict stands and the object is not read
// again from the cache (a decode) to be judged the same.
type memo struct {
	inputs    Inputs
	live      uint64
	revisions []source.Revision
	excluded  []resource.Key
	cmp       Result
	// links pairs each health judged from a live object with the row
	// that shows it, so that a reuse judging it again (any verdict that
	// is not pure) updates both.
	links []healthLink
	// checker gave the pure verdicts of links (nil when none is).
	checker health.Checker
}

// healthLink is an index into Result.Healths and the index of the row
// showing the same status (-1 when none does); pure marks a verdict
// memo.checker gave from the object alone.
type healthLink struct {
	health, row int
	pure        bool
}

// Inputs is the fingerprint of what a refresh's render and comparison
// depend on besides the live objects.
type Inputs [sha256.Size]byte

// Inputs hashes what a refresh of app (whose key is appKey) depends on
// besides the live objects: the app, the revisions its sources resolve to
// (revs), the destination and its discovery generation, and project, what
// of the app's project the comparison reads. ok is false when the app may
// not be memoized.
func (c *Comparer) Inputs(app *v1alpha1.Application, appKey string, dest Destination, revs []source.Revision, project []byte) (sum Inputs, ok bool) {
	if dest.Discovery == nil {
		return sum, false
	}
	gen, counted := dest.Discovery()
	if !counted || len(c.cfg.Policies) > 0 {
		return sum, false
	}
	data, err := json.Marshal(struct {
		App         string
		Spec        v1alpha1.ApplicationSpec
		Annotations map[string]string
		Revisions   []source.Revision
		Cluster     string
		Discovery   uint64
		Project     []byte
	}{appKey, app.Spec, app.Annotations, revs, dest.Name, gen, project})
	if err != nil {
		return sum, false
	}
	return sha256.Sum256(data), true
}

// liveFingerprint hashes the uid and resourceVersion of every object a
// comparison read: the cache entry of each desired key (keys, in order;
// absence counts) and the app's managed objects. A cache that offers
// versions (cache.Versions, as *cache.ClusterCache does) is asked for them
// alone: a memoized refresh then decodes no object it will not judge.
func (c *Comparer) liveFingerprint(cc Cache, app string, keys []health.ResourceHealth) uint64 {
	lh := c.newLiveHash()
	if v, ok := cc.(cache.Versions); ok {
		for _, rh := range keys {
			ver, found := v.ObjectVersion(rh.Key)
			lh.desiredVersion(ver, found)
		}
		lh.managedVersions(v.ManagedVersions(app))
		return lh.sum()
	}
	for _, rh := range keys {
		live, _ := cc.Get(rh.Key)
		lh.desired(live)
	}
	lh.managed(cc.Managed(app))
	return lh.sum()
}

// liveHash builds a live fingerprint object by object. compare feeds it
// the very objects it compares, as it reads them, so a memo is kept under
// the versions its comparison saw: a watch event that lands between the
// comparison and Keep must not give an old verdict the new versions'
// fingerprint (every later refresh would reuse it while the cache has
// long moved on). An object and its cache.Version hash alike.
type liveHash struct{ h maphash.Hash }

func (c *Comparer) newLiveHash() *liveHash {
	lh := &liveHash{}
	lh.h.SetSeed(c.seed)
	return lh
}

func (lh *liveHash) version(uid, resourceVersion string) {
	lh.h.WriteString(uid)
	lh.h.WriteByte(0)
	lh.h.WriteString(resourceVersion)
	lh.h.WriteByte(0)
}

// desired adds the live object of one desired key; nil when it has none.
func (lh *liveHash) desired(live *unstructured.Unstructured) {
	lh.desiredVersion(versionOf(live), live != nil)
}

// desiredVersion is desired for a cache's version of the object.
func (lh *liveHash) desiredVersion(v cache.Version, found bool) {
	if found {
		lh.version(string(v.UID), v.ResourceVersion)
		return
	}
	lh.h.WriteByte(1)
}

// managed adds the app's managed objects, after every desired key.
func (lh *liveHash) managed(objs []*unstructured.Unstructured) {
	vs := make([]cache.Version, len(objs))
	for i, obj := range objs {
		vs[i] = versionOf(obj)
	}
	lh.managedVersions(vs)
}

// managedVersions is managed for a cache's versions of the objects.
func (lh *liveHash) managedVersions(vs []cache.Version) {
	lh.h.WriteByte(2)
	for _, v := range vs {
		lh.identity(v.APIVersion, v.Key.Kind, v.Key.Namespace, v.Key.Name)
		lh.version(string(v.UID), v.ResourceVersion)
	}
}

// versionOf is what the fingerprint reads of obj (nothing of nil).
func versionOf(obj *unstructured.Unstructured) cache.Version {
	if obj == nil {
		return cache.Version{}
	}
	return cache.Version{Key: resource.KeyOf(obj), APIVersion: obj.GetAPIVersion(), UID: obj.GetUID(), ResourceVersion: obj.GetResourceVersion()}
}

func (lh *liveHash) identity(apiVersion, kind, namespace, name string) {
	for _, s := range [...]string{apiVersion, kind, namespace, name} {
		lh.h.WriteString(s)
		lh.h.WriteByte(0)
	}
}

func (lh *liveHash) sum() uint64 { return lh.h.Sum64() }

// Outcome is a refresh's comparison and what of the render it compared
// the app's status reports.
type Outcome struct {
	// Result is the comparison.
	Result Result
	// Revisions are the revisions rendered, one per source.
	Revisions []source.Revision
	// Excluded are the desired objects of kinds the cache excludes.
	Excluded []resource.Key
}

// Keep remembers out as the outcome of inputs for the app's differ, unless
// its comparison is volatile.
func (c *Comparer) Keep(appKey string, dest Destination, differ Differ, inputs Inputs, out Outcome) {
	cmp := out.Result
	if cmp.volatile || cmp.PolicyErr != nil || len(dest.Cache.Tainted()) > 0 {
		c.setMemo(appKey, differ, nil)
		return
	}
	m := &memo{
		inputs:    inputs,
		live:      cmp.seen,
		revisions: slices.Clone(out.Revisions),
		excluded:  slices.Clone(out.Excluded),
		cmp:       cmp.clone(),
	}
	// The keys' strings are the decoded desired and live objects'; the
	// memo, and every status made from it, keeps canonical copies instead
	// (one per distinct string), so that those objects' small strings
	// are freed with the rest of their decode.
	for i := range m.cmp.Rows {
		m.cmp.Rows[i].Key = internKey(m.cmp.Rows[i].Key)
	}
	for i := range m.cmp.Healths {
		m.cmp.Healths[i].Key = internKey(m.cmp.Healths[i].Key)
	}
	rowOf := make(map[*health.Status]int, len(cmp.Rows))
	for i, row := range cmp.Rows {
		if row.Health != nil {
			rowOf[row.Health] = i
		}
	}
	dc, _ := cmp.checker.(*health.DefaultChecker)
	for _, h := range cmp.fromLive {
		r, ok := rowOf[cmp.Healths[h].Status]
		if !ok {
			r = -1
		}
		pure := dc != nil && dc.Pure(cmp.Healths[h].Key.GroupKind())
		if pure {
			m.checker = dc
		}
		m.links = append(m.links, healthLink{health: h, row: r, pure: pure})
	}
	c.setMemo(appKey, differ, m)
}

// setMemo sets the memo of the app's differ (nil forgets it), unless the
// app has another differ by now.
func (c *Comparer) setMemo(appKey string, differ Differ, m *memo) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if d, ok := c.entries[appKey]; ok && d.differ == differ {
		d.memo = m
	}
}

// Reuse returns the app's memoized comparison and render outcome when the
// memo's conditions hold (see memo), with every health judged again from
// the live objects but the pure verdicts of the checker current now.
func (c *Comparer) Reuse(ctx context.Context, appKey string, dest Destination, differ Differ, inputs Inputs) (Outcome, bool) {
	c.mu.Lock()
	var m *memo
	if d, ok := c.entries[appKey]; ok && d.differ == differ {
		m = d.memo
	}
	c.mu.Unlock()
	if m == nil || m.inputs != inputs || len(dest.Cache.Tainted()) > 0 ||
		c.liveFingerprint(dest.Cache, appKey, m.cmp.Healths) != m.live {
		return Outcome{}, false
	}
	cmp := m.cmp.clone()
	checker := c.checker()
	samePure := m.checker != nil && checker == m.checker
	for _, l := range m.links {
		if l.pure && samePure {
			continue // the same version, judged by the object alone
		}
		key := cmp.Healths[l.health].Key
		live, ok := dest.Cache.Get(key)
		if !ok {
			return Outcome{}, false // gone since the fingerprint
		}
		hs, err := health.CheckContext(ctx, checker, live)
		if err != nil {
			hs = &health.Status{Code: health.Unknown, Message: err.Error()}
		}
		cmp.Healths[l.health] = health.ResourceHealthOf(live, hs)
		if l.row >= 0 {
			cmp.Rows[l.row].Health = hs
		}
	}
	return Outcome{Result: cmp, Revisions: slices.Clone(m.revisions), Excluded: slices.Clone(m.excluded)}, true
}

// clone copies a Result's slices, health statuses and child
// Applications, so that a memo and the statuses made from it share nothing
// mutable. fromLive is left out: a memo keeps it as its links.
func (c Result) clone() Result {
	out := c
	out.Rows = slices.Clone(c.Rows)
	out.Healths = slices.Clone(c.Healths)
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
	for i := range out.Rows {
		out.Rows[i].Health = copyOf(out.Rows[i].Health)
	}
	for i := range out.Healths {
		out.Healths[i].Status = copyOf(out.Healths[i].Status)
	}
	out.Conditions = slices.Clone(c.Conditions)
	out.fromLive = nil
	out.Children = nil
	for _, child := range c.Children {
		out.Children = append(out.Children, child.DeepCopy())
	}
	return out
}

// internKey returns k with canonical copies of its strings.
func internKey(k resource.Key) resource.Key {
	return resource.Key{Group: intern(k.Group), Kind: intern(k.Kind), Namespace: intern(k.Namespace), Name: intern(k.Name)}
}

func intern(s string) string {
	if s == "" {
		return ""
	}
	return unique.Make(s).Value()
}
