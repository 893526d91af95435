package source

// Revision identifies one exact tree of a repository.
type Revision struct {
	// Commit is the full identity of the tree: a 40 (SHA-1) or 64 (SHA-256)
	// hex Git commit id, or a content hash ("sha256:...") for sources that
	// have no commits.
	Commit string `json:"commit"`
	// Ref is the fully qualified ref the commit was resolved from
	// ("refs/heads/main", "refs/tags/v1.2.0"), or "" when the user pinned a
	// commit.
	Ref string `json:"ref,omitempty"`
}

// String returns "ref@commit", or just the commit when Ref is empty.
func (r Revision) String() string {
	if r.Ref == "" {
		return r.Commit
	}
	return r.Ref + "@" + r.Commit
}

// Short returns the first 12 characters of the commit, for display.
func (r Revision) Short() string {
	if len(r.Commit) > 12 {
		return r.Commit[:12]
	}
	return r.Commit
}

// IsZero reports whether the revision is unset.
func (r Revision) IsZero() bool { return r.Commit == "" }
