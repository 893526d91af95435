package git

import (
	"encoding/hex"
	"fmt"
	"sort"
	"strings"

	"github.com/Masterminds/semver/v3"

	"github.com/kubegitops/gitops/source"
)

// refTable is what one ls-remote told us: every advertised ref with the
// commit it points to (annotated tags already peeled) and where HEAD points.
type refTable struct {
	// commits maps a fully qualified ref name to its commit id.
	commits map[string]string
	// head is the commit of HEAD, and headRef the branch HEAD points to
	// ("" when the server did not say).
	head, headRef string
	// tagObjects maps each annotated tag's ref name to its tag object id
	// (what source integrity verifies).
	tagObjects map[string]string
}

// resolveIn turns a revision as the user wrote it into a Revision using the
// advertised refs only. Rules, in order:
//
//  1. "" and "HEAD": the commit of HEAD, Ref the branch HEAD points to.
//  2. A full 40-hex commit id: that commit, Ref "" (no lookup: the fetch
//     verifies it exists). SHA-256 repositories are not supported by
//     go-git v5.
//  3. A name starting with "refs/": that exact ref.
//  4. With a tag prefix (Repository.TagPrefix), see resolvePrefixed; what
//     it leaves goes on with rule 5.
//  5. Otherwise the first of refs/<rev>, refs/tags/<rev>, refs/heads/<rev>
//     that exists (Git's own precedence: a tag wins over a branch of the
//     same name).
//  6. A semver constraint (">=1.2.0 <2", "~1.4", "^1", "1.x"): the highest
//     tag whose name, with an optional leading "v", is a version satisfying
//     it. Pre-releases count only when the constraint names one.
//  7. 4 to 39 hex digits: the one advertised tip whose commit id starts
//     with them (Ref "", as for a pinned commit). A short id of a commit
//     that is no branch or tag tip cannot be resolved without a full clone
//     and is reported as not found.
//
// Annotated tags resolve to the commit they point to, never to the tag
// object.
func resolveIn(t refTable, rev, tagPrefix string) (source.Revision, error) {
	rev = strings.TrimSpace(rev)
	if rev == "" || rev == "HEAD" {
		if t.head == "" {
			return source.Revision{}, fmt.Errorf("HEAD: %w", source.ErrRevisionNotFound)
		}
		return source.Revision{Commit: t.head, Ref: t.headRef}, nil
	}
	if isFullHash(rev) {
		return source.Revision{Commit: strings.ToLower(rev)}, nil
	}
	if strings.HasPrefix(rev, "refs/") {
		if c, ok := t.commits[rev]; ok {
			return source.Revision{Commit: c, Ref: rev}, nil
		}
		return source.Revision{}, fmt.Errorf("%s: %w", rev, source.ErrRevisionNotFound)
	}
	if tagPrefix != "" {
		if r, done, err := resolvePrefixed(t, rev, tagPrefix); done {
			return r, err
		}
	}
	if r, ok := exactRef(t, rev); ok {
		return r, nil
	}
	if c, err := semver.NewConstraint(rev); err == nil {
		if r, ok := highestTag(t, c, ""); ok {
			return r, nil
		}
		if looksLikeConstraint(rev) {
			return source.Revision{}, fmt.Errorf("no tag satisfies %q: %w", rev, source.ErrRevisionNotFound)
		}
	}
	if isHex(rev) && len(rev) >= 4 {
		return resolveShort(t, strings.ToLower(rev))
	}
	return source.Revision{}, fmt.Errorf("%s: %w", rev, source.ErrRevisionNotFound)
}

// resolvePrefixed is Argo CD's tagPrefix: an exact version ("1.0.3",
// "v1.2") names the ref prefix+version (a tag first, as rule 5 looks
// names up); a semver constraint is evaluated over the tags that start
// with prefix, the prefix stripped, and resolves to the highest match
// with the prefix put back ("component-b/" and "1.0.*" give
// "refs/tags/component-b/1.0.3"). Anything else (a branch, a short
// commit id) is not its business: done is false and the usual rules go
// on, as Argo CD resolves such a revision without the prefix.
func resolvePrefixed(t refTable, rev, prefix string) (r source.Revision, done bool, err error) {
	if _, verr := semver.NewVersion(rev); verr == nil {
		if r, ok := exactRef(t, prefix+rev); ok {
			return r, true, nil
		}
		return source.Revision{}, true, fmt.Errorf("no tag %q (tagPrefix %q, version %q): %w", prefix+rev, prefix, rev, source.ErrRevisionNotFound)
	}
	c, cerr := semver.NewConstraint(rev)
	if cerr != nil {
		return source.Revision{}, false, nil
	}
	if r, ok := highestTag(t, c, prefix); ok {
		return r, true, nil
	}
	return source.Revision{}, true, fmt.Errorf("no tag with tagPrefix %q satisfies %q: %w", prefix, rev, source.ErrRevisionNotFound)
}

// exactRef looks rev up as Git does: refs/<rev>, refs/tags/<rev>,
// refs/heads/<rev>, the first that exists.
func exactRef(t refTable, rev string) (source.Revision, bool) {
	for _, name := range []string{"refs/" + rev, "refs/tags/" + rev, "refs/heads/" + rev} {
		if c, ok := t.commits[name]; ok {
			return source.Revision{Commit: c, Ref: name}, true
		}
	}
	return source.Revision{}, false
}

// highestTag returns the tag, among those whose name starts with prefix,
// whose name with the prefix stripped is the highest version satisfying c.
func highestTag(t refTable, c *semver.Constraints, prefix string) (source.Revision, bool) {
	var best *semver.Version
	var bestRef string
	for name := range t.commits {
		tag, ok := strings.CutPrefix(name, "refs/tags/"+prefix)
		if !ok {
			continue
		}
		v, err := semver.NewVersion(tag)
		if err != nil || !c.Check(v) {
			continue
		}
		// Ties (v1.0.0 and 1.0.0) go to the lexically smaller name, so the
		// result does not depend on map order.
		if best == nil || v.GreaterThan(best) || (v.Equal(best) && name < bestRef) {
			best, bestRef = v, name
		}
	}
	if best == nil {
		return source.Revision{}, false
	}
	return source.Revision{Commit: t.commits[bestRef], Ref: bestRef}, true
}

func resolveShort(t refTable, prefix string) (source.Revision, error) {
	found := map[string]bool{}
	for _, c := range t.commits {
		if strings.HasPrefix(c, prefix) {
			found[c] = true
		}
	}
	if strings.HasPrefix(t.head, prefix) {
		found[t.head] = true
	}
	switch len(found) {
	case 0:
		return source.Revision{}, fmt.Errorf("%s (a short commit id must be the tip of a branch or tag; use the full id): %w", prefix, source.ErrRevisionNotFound)
	case 1:
		for c := range found {
			return source.Revision{Commit: c}, nil
		}
	}
	ids := make([]string, 0, len(found))
	for c := range found {
		ids = append(ids, c)
	}
	sort.Strings(ids)
	return source.Revision{}, fmt.Errorf("%s matches %s: %w", prefix, strings.Join(ids, ", "), source.ErrAmbiguousRevision)
}

// looksLikeConstraint reports whether rev uses constraint syntax rather
// than being a plain version, so that "no tag satisfies" is the right
// message rather than "not found".
func looksLikeConstraint(rev string) bool {
	return strings.ContainsAny(rev, "<>=~^*|, ") || strings.HasSuffix(rev, ".x") || strings.HasSuffix(rev, ".X")
}

func isFullHash(s string) bool { return len(s) == 40 && isHex(s) }

func isHex(s string) bool {
	_, err := hex.DecodeString(padEven(s))
	return err == nil
}

func padEven(s string) string {
	if len(s)%2 == 1 {
		return s + "0"
	}
	return s
}
