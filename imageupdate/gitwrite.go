package imageupdate

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"text/template"
	"time"

	"github.com/go-git/go-billy/v5/memfs"
	"github.com/go-git/go-billy/v5/util"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	"github.com/go-git/go-git/v5/storage/memory"

	"github.com/kubegitops/gitops/source"
)

// DefaultCommitMessage is Argo CD Image Updater's commit message template.
// Its data: .AppName and .AppChanges (each with .Image, .OldTag, .NewTag).
const DefaultCommitMessage = `build: automatic update of {{ .AppName }}

{{ range .AppChanges -}}
updates image {{ .Image }} tag '{{ .OldTag }}' to '{{ .NewTag }}'
{{ end -}}
`

// GitOptions configure the git write-back. Start from DefaultGitOptions.
type GitOptions struct {
	// AuthorName and AuthorEmail sign the commits (author and committer).
	AuthorName, AuthorEmail string
	// MessageTemplate is a text/template of the commit message (see
	// DefaultCommitMessage for its data).
	MessageTemplate string
	// Timeout bounds one clone or one push. Default 90 s.
	Timeout time.Duration
	// MaxAttempts bounds the pushes tried when others keep committing to
	// the branch in between. Default 3.
	MaxAttempts int

	// beforePush, set by tests, runs after the commit is made and before
	// it is pushed.
	beforePush func(ctx context.Context, attempt int) error
}

// DefaultGitOptions returns Argo CD Image Updater's author and message, a
// 90 s bound per clone or push, and 3 push attempts.
func DefaultGitOptions() GitOptions {
	return GitOptions{AuthorName: "argocd-image-updater", AuthorEmail: "noreply@argoproj.io", MessageTemplate: DefaultCommitMessage, Timeout: 90 * time.Second, MaxAttempts: 3}
}

func (o GitOptions) withDefaults() GitOptions {
	def := DefaultGitOptions()
	if o.AuthorName == "" {
		o.AuthorName = def.AuthorName
	}
	if o.AuthorEmail == "" {
		o.AuthorEmail = def.AuthorEmail
	}
	if o.MessageTemplate == "" {
		o.MessageTemplate = def.MessageTemplate
	}
	if o.Timeout <= 0 {
		o.Timeout = def.Timeout
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = def.MaxAttempts
	}
	return o
}

// templateChange is one entry of .AppChanges and .Images.
type templateChange struct {
	Image, Alias, OldTag, NewTag string
}

type templateData struct {
	AppName    string
	AppChanges []templateChange
	// Images is AppChanges under the name branch templates use.
	Images []templateChange
	// SHA256 is a hash of the changes: a branch name per distinct update.
	SHA256 string
}

func newTemplateData(app string, changes []Change) templateData {
	d := templateData{AppName: app}
	h := sha256.New()
	for _, c := range changes {
		tc := templateChange{Image: c.Repository, Alias: c.Alias, OldTag: c.OldTag, NewTag: c.tagValue()}
		d.AppChanges = append(d.AppChanges, tc)
		fmt.Fprintf(h, "%s:%s\n", c.Repository, c.tagValue())
	}
	d.Images = d.AppChanges
	d.SHA256 = hex.EncodeToString(h.Sum(nil))
	return d
}

func execTemplate(what, text string, data templateData) (string, error) {
	t, err := template.New(what).Option("missingkey=error").Parse(text)
	if err != nil {
		return "", errorf(ErrAnnotation, "%s template: %v", what, err)
	}
	var b bytes.Buffer
	if err := t.Execute(&b, data); err != nil {
		return "", errorf(ErrAnnotation, "%s template: %v", what, err)
	}
	return b.String(), nil
}

// gitAuth returns the go-git auth for the write-back: the Secret named by
// git:secret:ns/name (fields username and password), else the app's
// repository credentials when their scope covers the repository URL. SSH
// keys are refused with ErrCredentials: the write-back pushes over HTTPS
// only.
func (u *Updater) gitAuth(ctx context.Context, app App, cfg Config) (transport.AuthMethod, error) {
	creds := app.Credentials
	if cfg.GitSecret != "" {
		data, err := u.secret(ctx, cfg.GitSecret)
		if err != nil {
			return nil, err
		}
		if len(data["sshPrivateKey"]) > 0 {
			return nil, errorf(ErrCredentials, "secret %s holds an SSH key: the git write-back pushes over HTTPS only", cfg.GitSecret)
		}
		creds = &source.Credentials{Username: string(data["username"]), Password: string(data["password"])}
	}
	if creds == nil || !creds.AppliesTo(app.RepoURL, app.RepoURL) {
		return nil, nil
	}
	switch creds.Kind() {
	case "basic":
		return &githttp.BasicAuth{Username: creds.Username, Password: creds.Password}, nil
	case "bearer":
		return &githttp.TokenAuth{Token: creds.BearerToken}, nil
	case "ssh":
		return nil, errorf(ErrCredentials, "SSH credentials: the git write-back pushes over HTTPS only")
	}
	return nil, nil
}

// writeGit records the changes in the app's repository: clone the base
// branch (its tip only, depth 1, in memory), edit, commit, push to the
// target branch. When the push is
// rejected because the branch moved, it starts over on the new head
// (edits recomputed there), so both commits survive; at most
// GitOptions.MaxAttempts times. With DryRun it stops before committing
// and fills res.Files.
func (u *Updater) writeGit(ctx context.Context, app App, cfg Config, images []Image, res *Result) error {
	if !strings.HasPrefix(app.RepoURL, "http://") && !strings.HasPrefix(app.RepoURL, "https://") {
		return errorf(ErrWriteBackTarget, "repository %s: the git write-back pushes over HTTP(S) only", source.RedactURL(app.RepoURL))
	}
	auth, err := u.gitAuth(ctx, app, cfg)
	if err != nil {
		return err
	}
	data := newTemplateData(app.Name, res.Changes)
	base := cfg.BaseBranch
	if base == "" {
		base = app.TargetRevision
	}
	if base == "HEAD" {
		base = ""
	}
	target := base
	if cfg.TargetBranch != "" {
		if target, err = execTemplate("git-branch", cfg.TargetBranch, data); err != nil {
			return err
		}
	}
	msg, err := execTemplate("commit message", u.opts.Git.MessageTemplate, data)
	if err != nil {
		return err
	}
	var secrets []string
	if pu, err := url.Parse(app.RepoURL); err == nil && pu.User != nil {
		p, _ := pu.User.Password()
		secrets = append(secrets, p)
	}
	switch a := auth.(type) {
	case *githttp.BasicAuth:
		secrets = append(secrets, a.Password)
	case *githttp.TokenAuth:
		secrets = append(secrets, a.Token)
	}
	for attempt := 1; attempt <= u.opts.Git.MaxAttempts; attempt++ {
		res.Attempts = attempt
		done, err := u.tryCommit(ctx, app, cfg, images, res, auth, base, target, msg, attempt)
		if err != nil || done {
			return redactErr(err, app.RepoURL, source.RedactURL(app.RepoURL), secrets...)
		}
		u.opts.Logger.V(1).Info("push rejected, the branch moved; retrying on its new head", "app", app.Name, "attempt", attempt)
	}
	return errorf(ErrGit, "%s: the branch kept moving; gave up after %d attempts", source.RedactURL(app.RepoURL), u.opts.Git.MaxAttempts)
}

// tryCommit makes one attempt; done is false when the push lost a race.
func (u *Updater) tryCommit(ctx context.Context, app App, cfg Config, images []Image, res *Result, auth transport.AuthMethod, base, target, msg string, attempt int) (bool, error) {
	redacted := source.RedactURL(app.RepoURL)
	cctx, cancel := context.WithTimeout(ctx, u.opts.Git.Timeout)
	defer cancel()
	co := &git.CloneOptions{URL: app.RepoURL, Auth: auth, SingleBranch: true, Tags: git.NoTags, Depth: 1}
	if base != "" {
		co.ReferenceName = plumbing.NewBranchReferenceName(base)
	}
	fsys := memfs.New()
	repo, err := git.CloneContext(cctx, memory.NewStorage(), fsys, co)
	if err != nil {
		return false, gitErr(cctx, redacted, "clone", err)
	}
	head, err := repo.Head()
	if err != nil {
		return false, gitErr(cctx, redacted, "clone", err)
	}
	edits, err := planEdits(fsys, app, cfg, images, res.Changes)
	if err != nil {
		return false, err
	}
	res.Files = edits
	if len(edits) == 0 || u.opts.DryRun {
		// Nothing to write: the repository already says so.
		return true, nil
	}
	wt, err := repo.Worktree()
	if err != nil {
		return false, gitErr(cctx, redacted, "worktree", err)
	}
	for _, e := range edits {
		if err := util.WriteFile(fsys, e.Path, e.After, 0o644); err != nil {
			return false, gitErr(cctx, redacted, "write "+e.Path, err)
		}
		if _, err := wt.Add(e.Path); err != nil {
			return false, gitErr(cctx, redacted, "add "+e.Path, err)
		}
	}
	sig := &object.Signature{Name: u.opts.Git.AuthorName, Email: u.opts.Git.AuthorEmail, When: time.Now()}
	commit, err := wt.Commit(msg, &git.CommitOptions{Author: sig, Committer: sig})
	if err != nil {
		return false, gitErr(cctx, redacted, "commit", err)
	}
	if hook := u.opts.Git.beforePush; hook != nil {
		if err := hook(cctx, attempt); err != nil {
			return false, err
		}
	}
	targetRef := head.Name()
	if target != "" {
		targetRef = plumbing.NewBranchReferenceName(target)
	}
	spec := config.RefSpec(head.Name().String() + ":" + targetRef.String())
	force := targetRef != head.Name()
	if force {
		// A separate target branch belongs to the updater: it is reset to
		// base plus this commit, as Argo CD Image Updater does.
		spec = "+" + spec
	}
	err = repo.PushContext(cctx, &git.PushOptions{RemoteName: "origin", RefSpecs: []config.RefSpec{spec}, Auth: auth})
	switch {
	case err == nil:
		res.Commit, res.Branch = commit.String(), targetRef.Short()
		return true, nil
	case errors.Is(err, git.NoErrAlreadyUpToDate):
		return true, nil
	case lostRace(err):
		return false, nil
	}
	return false, gitErr(cctx, redacted, "push", err)
}

// lostRace reports whether a push was refused because the branch moved.
func lostRace(err error) bool {
	if errors.Is(err, git.ErrNonFastForwardUpdate) {
		return true
	}
	m := err.Error()
	for _, s := range []string{"non-fast-forward", "fetch first", "failed to update ref", "cannot lock ref"} {
		if strings.Contains(m, s) {
			return true
		}
	}
	return false
}

// gitErr classifies a go-git error; go-git's messages carry no secret (the
// URL is passed redacted and credentials travel in AuthMethod).
func gitErr(ctx context.Context, repo, op string, err error) error {
	if ctx.Err() != nil {
		return errorf(ErrTimeout, "%s %s: git did not finish in time", op, repo)
	}
	if errors.Is(err, transport.ErrAuthenticationRequired) || errors.Is(err, transport.ErrAuthorizationFailed) {
		return errorf(ErrCredentials, "%s %s: %v", op, repo, err)
	}
	return errorf(ErrGit, "%s %s: %v", op, repo, err)
}

// redactErr removes from err's message the raw repository URL and every
// secret (passwords, tokens, the URL's own password), keeping its class.
func redactErr(err error, rawURL, redacted string, secrets ...string) error {
	if err == nil {
		return nil
	}
	msg := strings.ReplaceAll(err.Error(), rawURL, redacted)
	for _, s := range secrets {
		if len(s) >= 3 {
			msg = strings.ReplaceAll(msg, s, "[redacted]")
		}
	}
	if msg == err.Error() {
		return err
	}
	return &redactedError{msg: msg, cause: err}
}

// redactedError keeps the cause for errors.Is while printing msg. Is
// answers for the classes only, so Unwrap does not expose the raw message.
type redactedError struct {
	msg   string
	cause error
}

// Error implements error.
func (r *redactedError) Error() string { return r.msg }

// Is matches the sentinel errors this error stands for.
func (r *redactedError) Is(target error) bool {
	for _, c := range []error{ErrAnnotation, ErrConstraint, ErrRegistry, ErrTimeout, ErrTooManyTags, ErrCredentials, ErrWriteBackTarget, ErrGit} {
		if target == c {
			return errors.Is(r.cause, c)
		}
	}
	return false
}
