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

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-billy/v5/util"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/kubegitops/gitops/source"
	gitsrc "github.com/kubegitops/gitops/source/git"
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

	// Source is the Git source the write-back fetches and pushes through:
	// its URL policy, transports (SSH with known_hosts enforced, HTTP(S))
	// and timeout apply. Nil: the updater makes one of its own at first
	// use (package source/git's defaults, Timeout above).
	Source *gitsrc.Source

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

// gitCredentials returns the credentials of the write-back: the Secret
// named by git:secret:ns/name (username and password, or sshPrivateKey,
// as Argo CD Image Updater reads it; an SSH key is checked against the
// repository's known_hosts), else the app's repository credentials
// (git and git:repocreds).
func (u *Updater) gitCredentials(ctx context.Context, app App, cfg Config) (*source.Credentials, error) {
	if cfg.GitSecret == "" {
		return app.Credentials, nil
	}
	data, err := u.secret(ctx, cfg.GitSecret)
	if err != nil {
		return nil, err
	}
	if key := data["sshPrivateKey"]; len(key) > 0 {
		c := &source.Credentials{SSHPrivateKey: key}
		if app.Credentials != nil {
			c.KnownHosts = app.Credentials.KnownHosts
		}
		return c, nil
	}
	return &source.Credentials{Username: string(data["username"]), Password: string(data["password"])}, nil
}

// gitSource is the Git source the write-back fetches and pushes through.
func (u *Updater) gitSource() (*gitsrc.Source, error) {
	if u.opts.Git.Source != nil {
		return u.opts.Git.Source, nil
	}
	u.gitOnce.Do(func() {
		o := gitsrc.DefaultOptions()
		o.Timeout = u.opts.Git.Timeout
		o.Logger = u.opts.Logger
		u.ownGit, u.ownGitErr = gitsrc.New(o)
	})
	if u.ownGitErr != nil {
		return nil, errorf(ErrGit, "git source: %v", u.ownGitErr)
	}
	return u.ownGit, nil
}

// writeGit records the changes in the app's repository with one in-process
// commit (package source/git's Commit: the base branch's tip fetched at
// depth 1, edited, committed and pushed over SSH or HTTP(S), through the
// source's URL policy). When the push loses a race because the branch
// moved, it starts over on the new head (edits recomputed there), so both
// commits survive; at most GitOptions.MaxAttempts times. With DryRun it
// stops before committing and fills res.Files.
func (u *Updater) writeGit(ctx context.Context, app App, cfg Config, images []Image, res *Result) error {
	creds, err := u.gitCredentials(ctx, app, cfg)
	if err != nil {
		return err
	}
	src, err := u.gitSource()
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
	target := ""
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
	if creds != nil {
		secrets = append(secrets, creds.Password, creds.BearerToken)
	}
	repo := source.Repository{URL: app.RepoURL, Credentials: creds}
	for attempt := 1; attempt <= u.opts.Git.MaxAttempts; attempt++ {
		res.Attempts = attempt
		err := u.tryCommit(ctx, src, repo, app, cfg, images, res, base, target, msg, attempt)
		if !errors.Is(err, gitsrc.ErrBranchMoved) {
			return redactErr(err, app.RepoURL, source.RedactURL(app.RepoURL), secrets...)
		}
		u.opts.Logger.V(1).Info("push rejected, the branch moved; retrying on its new head", "app", app.Name, "attempt", attempt)
	}
	return errorf(ErrGit, "%s: the branch kept moving; gave up after %d attempts", source.RedactURL(app.RepoURL), u.opts.Git.MaxAttempts)
}

// tryCommit makes one attempt; a lost race is gitsrc.ErrBranchMoved.
func (u *Updater) tryCommit(ctx context.Context, src *gitsrc.Source, repo source.Repository, app App, cfg Config, images []Image, res *Result, base, target, msg string, attempt int) error {
	cctx, cancel := context.WithTimeout(ctx, u.opts.Git.Timeout)
	defer cancel()
	var editErr error
	edit := func(ectx context.Context, fsys billy.Filesystem) ([]string, error) {
		edits, err := planEdits(fsys, app, cfg, images, res.Changes)
		if err != nil {
			editErr = err
			return nil, err
		}
		res.Files = edits
		if len(edits) == 0 || u.opts.DryRun {
			return nil, nil
		}
		var paths []string
		for _, e := range edits {
			if err := util.WriteFile(fsys, e.Path, e.After, 0o644); err != nil {
				return nil, errorf(ErrGit, "write %s: %v", e.Path, err)
			}
			paths = append(paths, e.Path)
		}
		if hook := u.opts.Git.beforePush; hook != nil {
			if err := hook(ectx, attempt); err != nil {
				return nil, err
			}
		}
		return paths, nil
	}
	sig := object.Signature{Name: u.opts.Git.AuthorName, Email: u.opts.Git.AuthorEmail, When: time.Now()}
	out, err := src.Commit(cctx, repo, gitsrc.CommitRequest{Base: base, Target: target, Edit: edit, Message: msg, Author: sig})
	if editErr != nil {
		return editErr
	}
	if err != nil {
		return gitErr(cctx, err)
	}
	if out.Commit != "" {
		res.Commit, res.Branch = out.Commit, out.Branch
	}
	return nil
}

// gitErr maps the Git source's errors onto this package's classes; its
// messages are already redacted (no URL password, no credentials). A lost
// race passes through.
func gitErr(ctx context.Context, err error) error {
	switch {
	case errors.Is(err, gitsrc.ErrBranchMoved):
		return err
	case errors.Is(err, source.ErrTimeout), ctx.Err() != nil:
		return errorf(ErrTimeout, "%v", err)
	case errors.Is(err, source.ErrAuthentication):
		return errorf(ErrCredentials, "%v", err)
	}
	return errorf(ErrGit, "%v", err)
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
