package helmindex

import (
	"fmt"
	"sort"
	"strings"

	"github.com/Masterminds/semver/v3"
)

// Select returns the version Helm chooses among versions (sorted highest
// first) for revision: the one equal to revision, else the first (the
// highest) that the semver constraint revision admits; "" admits every
// version. The error wraps ErrNoVersion.
func Select(versions []string, revision string) (string, error) {
	n, err := selectIndex(versions, revision)
	if err != nil {
		return "", err
	}
	return versions[n], nil
}

func selectIndex(versions []string, revision string) (int, error) {
	if len(versions) == 0 {
		return 0, fmt.Errorf("%w: the chart has no version", ErrNoVersion)
	}
	constraint, err := semver.NewConstraint("*")
	if revision != "" {
		for n, v := range versions {
			if v == revision {
				return n, nil
			}
		}
		constraint, err = semver.NewConstraint(revision)
	}
	if err != nil {
		return 0, fmt.Errorf("%w: %q is neither a version of the chart nor a semver constraint", ErrNoVersion, revision)
	}
	for n, v := range versions {
		test, err := semver.NewVersion(v)
		if err != nil {
			continue
		}
		if constraint.Check(test) {
			return n, nil
		}
	}
	return 0, fmt.Errorf("%w: none satisfies %q", ErrNoVersion, revision)
}

// sortEntries sorts versions highest first as Helm's SortEntries does:
// a version that is not semver goes after the others.
func sortEntries(cvs []*ChartVersion) []*ChartVersion {
	parsed := make([]*semver.Version, len(cvs))
	for n, cv := range cvs {
		parsed[n], _ = semver.NewVersion(cv.Version)
	}
	sort.Stable(byVersion{cvs, parsed})
	return cvs
}

type byVersion struct {
	cvs    []*ChartVersion
	parsed []*semver.Version
}

// Len implements sort.Interface.
func (b byVersion) Len() int { return len(b.cvs) }

// Swap implements sort.Interface.
func (b byVersion) Swap(i, j int) {
	b.cvs[i], b.cvs[j] = b.cvs[j], b.cvs[i]
	b.parsed[i], b.parsed[j] = b.parsed[j], b.parsed[i]
}

// Less orders highest first; unparsable versions last.
func (b byVersion) Less(i, j int) bool {
	vi, vj := b.parsed[i], b.parsed[j]
	switch {
	case vi == nil:
		return false
	case vj == nil:
		return true
	}
	return vj.LessThan(vi)
}

// SortVersions returns the OCI tags that are strict semver versions,
// highest first, as Helm's registry client lists a chart's versions: "_"
// in a tag stands for "+" (OCI tags cannot hold "+", helm#10166) and the
// version is returned in its "+" form.
func SortVersions(tags []string) []string {
	var vs []*semver.Version
	for _, tag := range tags {
		if v, err := semver.StrictNewVersion(strings.ReplaceAll(tag, "_", "+")); err == nil {
			vs = append(vs, v)
		}
	}
	sort.Sort(sort.Reverse(semver.Collection(vs)))
	out := make([]string, len(vs))
	for n, v := range vs {
		out[n] = v.String()
	}
	return out
}
