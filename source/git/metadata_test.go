package git

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/kubegitops/gitops/source"
)

// TestRevisionMetadata reads the author and message of commits from a
// fresh cache (fetched on demand) and again from the store, and refuses a
// commit the repository does not have with ErrRevisionNotFound.
func TestRevisionMetadata(t *testing.T) {
	f := newFixture(t)
	s := newSource(t)
	ctx := context.Background()
	for _, c := range []struct{ commit, message string }{{f.second, "second"}, {f.first, "first"}, {f.second, "second"}} {
		md, err := s.RevisionMetadata(ctx, f.repo, source.Revision{Commit: c.commit})
		if err != nil {
			t.Fatalf("%s: %v", c.commit, err)
		}
		if strings.TrimSpace(md.Message) != c.message || md.Author != "test <test@example.invalid>" || md.Date.IsZero() {
			t.Errorf("%s: metadata %+v, want message %q by test <test@example.invalid> with a date", c.commit, md, c.message)
		}
	}
	_, err := s.RevisionMetadata(ctx, f.repo, source.Revision{Commit: strings.Repeat("ab", 20)})
	if !errors.Is(err, source.ErrRevisionNotFound) {
		t.Errorf("unknown commit: %v, want ErrRevisionNotFound", err)
	}
	_, err = s.RevisionMetadata(ctx, f.repo, source.Revision{Commit: "main"})
	if !errors.Is(err, source.ErrRevisionNotFound) || !strings.Contains(err.Error(), "Resolve it first") {
		t.Errorf("a branch name: %v, want a refusal asking for a commit", err)
	}
}
