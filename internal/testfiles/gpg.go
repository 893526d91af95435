package testfiles

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
	"github.com/ProtonMail/go-crypto/openpgp/packet"
	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
)

// GPGKey generates an OpenPGP key (Ed25519, with a signing subkey, as gpg
// makes them) for name and email.
func GPGKey(t testing.TB, name, email string) *openpgp.Entity {
	t.Helper()
	cfg := &packet.Config{Algorithm: packet.PubKeyAlgoEdDSA}
	e, err := openpgp.NewEntity(name, "test key", email, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.AddSigningSubkey(cfg); err != nil {
		t.Fatal(err)
	}
	return e
}

// GPGKeyID is the key ID of e's primary key as argocd-gpg-keys-cm names
// it: 16 upper-case hexadecimal digits.
func GPGKeyID(e *openpgp.Entity) string { return e.PrimaryKey.KeyIdString() }

// GPGPublicKey is e's public key, ASCII-armored, as `gpg --armor
// --export` writes it and argocd-gpg-keys-cm holds it.
func GPGPublicKey(t testing.TB, e *openpgp.Entity) string {
	t.Helper()
	var buf bytes.Buffer
	w, err := armor.Encode(&buf, openpgp.PublicKeyType, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Serialize(w); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// GitPusher commits to a repository of a Git server the way a developer
// does: a go-git clone over HTTP, commits (signed with SignKey when given)
// and annotated tags, pushed with basic credentials (the server's
// PushUsername and PushPassword).
type GitPusher struct {
	t    testing.TB
	repo *gogit.Repository
	dir  string
	auth *githttp.BasicAuth
}

// NewGitPusher clones url into a folder of the test.
func NewGitPusher(t testing.TB, url, username, password string) *GitPusher {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p := &GitPusher{t: t, dir: t.TempDir(), auth: &githttp.BasicAuth{Username: username, Password: password}}
	repo, err := gogit.PlainCloneContext(ctx, p.dir, false, &gogit.CloneOptions{URL: url, Auth: p.auth})
	if err != nil {
		t.Fatal(err)
	}
	p.repo = repo
	return p
}

// Commit writes files (a nil value deletes one), commits them as author
// with message, signed by key unless it is nil, pushes, and returns the
// commit.
func (p *GitPusher) Commit(message string, files map[string][]byte, author string, key *openpgp.Entity) string {
	p.t.Helper()
	wt, err := p.repo.Worktree()
	if err != nil {
		p.t.Fatal(err)
	}
	for name, data := range files {
		full := filepath.Join(p.dir, filepath.FromSlash(name))
		if data == nil {
			if _, err := wt.Remove(name); err != nil {
				p.t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			p.t.Fatal(err)
		}
		if err := os.WriteFile(full, data, 0o644); err != nil {
			p.t.Fatal(err)
		}
		if _, err := wt.Add(name); err != nil {
			p.t.Fatal(err)
		}
	}
	sig := &object.Signature{Name: author, Email: author + "@example.com", When: time.Now()}
	h, err := wt.Commit(message, &gogit.CommitOptions{Author: sig, Committer: sig, SignKey: key, AllowEmptyCommits: true})
	if err != nil {
		p.t.Fatal(err)
	}
	p.push("refs/heads/*:refs/heads/*")
	return h.String()
}

// Tag creates an annotated tag of HEAD, signed by key unless it is nil,
// and pushes it.
func (p *GitPusher) Tag(name, author string, key *openpgp.Entity) {
	p.t.Helper()
	head, err := p.repo.Head()
	if err != nil {
		p.t.Fatal(err)
	}
	sig := &object.Signature{Name: author, Email: author + "@example.com", When: time.Now()}
	if _, err := p.repo.CreateTag(name, head.Hash(), &gogit.CreateTagOptions{Tagger: sig, Message: "release " + name, SignKey: key}); err != nil {
		p.t.Fatal(err)
	}
	p.push(config.RefSpec("refs/tags/" + name + ":refs/tags/" + name))
}

func (p *GitPusher) push(spec config.RefSpec) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := p.repo.PushContext(ctx, &gogit.PushOptions{RemoteName: "origin", RefSpecs: []config.RefSpec{spec}, Auth: p.auth})
	if err != nil && err != gogit.NoErrAlreadyUpToDate {
		p.t.Fatal(err)
	}
}

// Head is the pushed branch's commit.
func (p *GitPusher) Head() plumbing.Hash {
	p.t.Helper()
	ref, err := p.repo.Head()
	if err != nil {
		p.t.Fatal(err)
	}
	return ref.Hash()
}
