package imageupdate

import (
	"path"
	"sort"
	"time"

	"github.com/Masterminds/semver/v3"
)

// Tag is one tag of a repository with what the registry said about it.
// Digest, Created and Platforms are filled only when the strategy or a
// platform filter needs them.
type Tag struct {
	// Name is the tag.
	Name string
	// Digest of the manifest or index the tag points to ("sha256:...").
	Digest string
	// Created is the newest creation date among the image configs the tag
	// offers (for an index: among the platforms kept).
	Created time.Time
	// Platforms the tag offers ("linux/amd64"); one entry for a single
	// image, one per manifest for an index.
	Platforms []string
}

// eligible reports whether a tag name passes allow-tags and ignore-tags.
// Rules: a tag matching any ignore-tags glob is out; with allow-tags, a
// tag the expression does not match is out.
func (i Image) eligible(tag string) bool {
	for _, g := range i.Ignore {
		if ok, _ := path.Match(g, tag); ok {
			return false
		}
	}
	return i.Allow == nil || i.Allow.MatchString(tag)
}

// needsMetadata reports whether choosing needs each tag's manifest.
func (i Image) needsMetadata() bool {
	return i.Strategy == StrategyNewestBuild || len(i.Platforms) > 0
}

// Choose picks the tag to run among tags, which have passed eligible and
// the platform filter. Rules by strategy:
//   - semver: tags that parse as semantic versions (a leading "v" is
//     allowed) and satisfy the constraint; the highest wins. Without a
//     constraint every version is a candidate, prereleases included; with
//     one, prereleases only when the constraint names one (Masterminds
//     semver rules).
//   - newest-build: the newest Created; equal dates: the name sorting last.
//   - alphabetical: the name sorting last (byte order).
//   - digest: the tag named by the constraint, with its digest.
//
// ok is false when no tag qualifies.
func (i Image) Choose(tags []Tag) (Tag, bool) {
	var best Tag
	found := false
	switch i.Strategy {
	case StrategySemver:
		// Highest first, then the first the constraint accepts: the
		// constraint (the costly part) is checked only down to the answer.
		type version struct {
			v *semver.Version
			t Tag
		}
		vs := make([]version, 0, len(tags))
		for _, t := range tags {
			if v, err := semver.NewVersion(t.Name); err == nil {
				vs = append(vs, version{v, t})
			}
		}
		sort.Slice(vs, func(a, b int) bool {
			if c := vs[a].v.Compare(vs[b].v); c != 0 {
				return c > 0
			}
			return vs[a].t.Name > vs[b].t.Name
		})
		for _, v := range vs {
			if i.semver == nil || i.semver.Check(v.v) {
				return v.t, true
			}
		}
	case StrategyNewestBuild:
		for _, t := range tags {
			if !found || t.Created.After(best.Created) || (t.Created.Equal(best.Created) && t.Name > best.Name) {
				best, found = t, true
			}
		}
	case StrategyAlphabetical:
		sorted := make([]string, 0, len(tags))
		byName := make(map[string]Tag, len(tags))
		for _, t := range tags {
			sorted = append(sorted, t.Name)
			byName[t.Name] = t
		}
		sort.Strings(sorted)
		if len(sorted) > 0 {
			best, found = byName[sorted[len(sorted)-1]], true
		}
	case StrategyDigest:
		for _, t := range tags {
			if t.Name == i.Constraint && t.Digest != "" {
				best, found = t, true
			}
		}
	}
	return best, found
}
