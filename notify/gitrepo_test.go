package notify

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/go-git/go-billy/v5/memfs"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/memory"
)

// gitRepo is a RepoService over a real Git repository (go-git, in
// memory) with one commit: the metadata repo.GetCommitMetadata gives is
// that commit's.
type gitRepo struct {
	repo *git.Repository
	head string
}

func newGitRepo(t *testing.T) *gitRepo {
	t.Helper()
	fs := memfs.New()
	r, err := git.Init(memory.NewStorage(), fs)
	if err != nil {
		t.Fatal(err)
	}
	f, _ := fs.Create("app/cm.yaml")
	_, _ = f.Write([]byte("kind: ConfigMap\n"))
	_ = f.Close()
	wt, _ := r.Worktree()
	if _, err := wt.Add("app/cm.yaml"); err != nil {
		t.Fatal(err)
	}
	h, err := wt.Commit("Deploy web v2", &git.CommitOptions{Author: &object.Signature{Name: "Ada", Email: "ada@example.com",
		When: time.Date(2026, 12, 1, 9, 59, 0, 0, time.UTC)}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.CreateTag("v2", h, nil); err != nil {
		t.Fatal(err)
	}
	return &gitRepo{repo: r, head: h.String()}
}

// GetCommitMetadata implements RepoService.
func (g *gitRepo) GetCommitMetadata(_ context.Context, _, sha, _ string) (CommitMetadata, error) {
	c, err := g.repo.CommitObject(plumbing.NewHash(sha))
	if err != nil {
		return CommitMetadata{}, fmt.Errorf("commit %s: %w", sha, err)
	}
	md := CommitMetadata{Message: c.Message, Author: c.Author.String(), Date: c.Author.When}
	tags, _ := g.repo.Tags()
	_ = tags.ForEach(func(ref *plumbing.Reference) error {
		if ref.Hash() == c.Hash {
			md.Tags = append(md.Tags, ref.Name().Short())
		}
		return nil
	})
	return md, nil
}

// GetAppDetails implements RepoService: a directory application.
func (g *gitRepo) GetAppDetails(context.Context, map[string]any) (map[string]any, error) {
	return map[string]any{"type": "Directory"}, nil
}
