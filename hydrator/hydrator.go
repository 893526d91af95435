package hydrator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"text/template"
	"time"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/engine"
	"github.com/kubegitops/gitops/project"
	"github.com/kubegitops/gitops/source"
	gitsrc "github.com/kubegitops/gitops/source/git"
)

// Engine is what the hydrator needs of an engine (*engine.Engine, and
// the root's *gitops.Engine, have it): renders of the dry source, the dry
// commit's metadata and, through its Settings, the app's project.
type Engine interface {
	RenderManifests(ctx context.Context, app *v1alpha1.Application, revision string) (engine.RenderedManifests, error)
	RevisionMetadata(ctx context.Context, app *v1alpha1.Application, src v1alpha1.ApplicationSource, commit string) (source.RevisionMetadata, error)
	Settings() engine.Settings
}

// Options configure a Hydrator. Start from DefaultOptions.
type Options struct {
	// Git pushes the hydrated commits (its URL policy, transports and
	// timeout apply). Required by Hydrate; HydrateInClone pushes nothing.
	Git *gitsrc.Source
	// WriteCredentials returns the credentials that push to repoURL for
	// an app of project (repocreds' WriteForProject: repository-write and
	// repo-write-creds Secrets only); nil pushes anonymously, as Argo CD
	// tries without credentials. project is empty when a commit holds apps
	// of several projects.
	WriteCredentials func(project, repoURL string) *source.Credentials
	// AuthorName and AuthorEmail sign the hydrated commits (argocd-cm
	// commit.author.name and commit.author.email).
	AuthorName, AuthorEmail string
	// CommitMessageTemplate is argocd-cm's
	// sourceHydrator.commitMessageTemplate.
	CommitMessageTemplate string
	// ReadmeTemplate is argocd-cm's sourceHydrator.readmeMessageTemplate.
	ReadmeTemplate string
	// MaxAttempts bounds the commits tried when someone else moves the
	// branch in between. Default 3.
	MaxAttempts int
	// Now is the clock of status times. Default time.Now.
	Now func() time.Time
	// Hydrating, when set, is called with a group's apps once their dry
	// commit is rendered and is to be written (it was not hydrated
	// before), before the commit is made: the host persists phase
	// Hydrating there (Begin), as Argo CD's controller does while a
	// hydration runs. It runs on the goroutine of Hydrate.
	Hydrating func(ctx context.Context, apps []*v1alpha1.Application)
}

// DefaultOptions returns Argo CD's author and templates and 3 attempts.
func DefaultOptions() Options {
	return Options{AuthorName: DefaultAuthorName, AuthorEmail: DefaultAuthorEmail,
		CommitMessageTemplate: DefaultCommitMessageTemplate, ReadmeTemplate: DefaultReadmeTemplate,
		MaxAttempts: 3, Now: time.Now}
}

// Hydrator renders dry sources with an engine and commits the result. It
// is safe for concurrent use, but two hydrations of one branch at once
// race (the loser retries, see Options.MaxAttempts).
type Hydrator struct {
	eng     Engine
	opts    Options
	message *template.Template
	readme  *template.Template
}

// New returns a Hydrator over eng. Empty options take DefaultOptions'
// values; a template that does not parse is a *TemplateError.
func New(eng Engine, opts Options) (*Hydrator, error) {
	def := DefaultOptions()
	if opts.AuthorName == "" {
		opts.AuthorName = def.AuthorName
	}
	if opts.AuthorEmail == "" {
		opts.AuthorEmail = def.AuthorEmail
	}
	if opts.CommitMessageTemplate == "" {
		opts.CommitMessageTemplate = def.CommitMessageTemplate
	}
	if opts.ReadmeTemplate == "" {
		opts.ReadmeTemplate = def.ReadmeTemplate
	}
	if opts.MaxAttempts <= 0 {
		opts.MaxAttempts = def.MaxAttempts
	}
	if opts.Now == nil {
		opts.Now = def.Now
	}
	msg, err := parseTemplate("sourceHydrator.commitMessageTemplate", opts.CommitMessageTemplate)
	if err != nil {
		return nil, err
	}
	rd, err := parseTemplate("sourceHydrator.readmeMessageTemplate", opts.ReadmeTemplate)
	if err != nil {
		return nil, err
	}
	return &Hydrator{eng: eng, opts: opts, message: msg, readme: rd}, nil
}

// Outcome is what one hydration of a group of apps did.
type Outcome struct {
	// DrySHA is the dry commit rendered; empty when no render resolved it.
	DrySHA string
	// HydratedSHA is the commit holding the hydrated manifests: the one
	// made, or the branch's tip when nothing rendered changed or the dry
	// commit was hydrated already.
	HydratedSHA string
	// Committed reports that a new commit was pushed.
	Committed bool
	// AlreadyHydrated reports that the branch's tip was the hydration of
	// DrySHA already (its note said so): nothing was written.
	AlreadyHydrated bool
	// Renders counts the apps rendered.
	Renders int
	// Err is why the hydration failed, for every app of the group;
	// nil when it succeeded.
	Err error
	// AppErrors are the apps that made it fail, each with its own reason
	// (the others get Err).
	AppErrors map[v1alpha1.AppKey]error
}

// ErrorFor returns why the hydration failed for app, nil when it
// succeeded.
func (o Outcome) ErrorFor(key v1alpha1.AppKey) error {
	if err, ok := o.AppErrors[key]; ok {
		return err
	}
	return o.Err
}

// committer makes the commit of req: pushed to repo (Hydrate), or in a
// local clone (HydrateInClone).
type committer func(ctx context.Context, req gitsrc.CommitRequest) (gitsrc.CommitResult, error)

// Hydrate hydrates one group of apps (see Groups: same dry repository and
// revision, same repository and branch hydrated to) in one commit, pushed
// with Options.WriteCredentials. Apps without a source hydrator are an
// error of their own.
func (h *Hydrator) Hydrate(ctx context.Context, apps []*v1alpha1.Application) Outcome {
	if h.opts.Git == nil {
		return Outcome{Err: errors.New("hydrator: Options.Git is not set: nothing to push with")}
	}
	if len(apps) == 0 || apps[0].Spec.SourceHydrator == nil {
		return h.hydrate(ctx, apps, nil)
	}
	dest := apps[0].Spec.SourceHydrator.GetHydrateToSource()
	projects := map[string]bool{}
	for _, a := range apps {
		projects[a.Spec.Project] = true
	}
	proj := ""
	if len(projects) == 1 {
		proj = apps[0].Spec.Project
	}
	var creds *source.Credentials
	if h.opts.WriteCredentials != nil {
		creds = h.opts.WriteCredentials(proj, dest.RepoURL)
	}
	repo := source.Repository{URL: dest.RepoURL, Credentials: creds}
	return h.hydrate(ctx, apps, func(ctx context.Context, req gitsrc.CommitRequest) (gitsrc.CommitResult, error) {
		res, err := h.opts.Git.Commit(ctx, repo, req)
		if err != nil && creds == nil && !errors.Is(err, gitsrc.ErrBranchMoved) {
			err = &NoWriteCredentialsError{RepoURL: source.RedactURL(dest.RepoURL), Err: err}
		}
		return res, err
	})
}

// HydrateInClone hydrates one group of apps into the local clone at dir,
// on the branch it has checked out (which must be the branch hydrated
// to), and pushes nothing: for a CI pipeline.
func (h *Hydrator) HydrateInClone(ctx context.Context, dir string, apps []*v1alpha1.Application) Outcome {
	return h.hydrate(ctx, apps, func(ctx context.Context, req gitsrc.CommitRequest) (gitsrc.CommitResult, error) {
		return gitsrc.CommitInClone(ctx, dir, req)
	})
}

// NoWriteCredentialsError is a push that failed without write
// credentials: no repository-write or repo-write-creds Secret matches
// the repository (repository Secrets never serve a push).
type NoWriteCredentialsError struct {
	// RepoURL is the repository, redacted.
	RepoURL string
	// Err is the push's own error.
	Err error
}

// Error names the repository and says which Secret would have served
// the push.
func (e *NoWriteCredentialsError) Error() string {
	return fmt.Sprintf("no repository-write or repo-write-creds Secret for %s (repository Secrets only read), and the push without credentials failed: %v", e.RepoURL, e.Err)
}

// Unwrap returns the push's own error.
func (e *NoWriteCredentialsError) Unwrap() error { return e.Err }

func (h *Hydrator) hydrate(ctx context.Context, apps []*v1alpha1.Application, commit committer) Outcome {
	out := Outcome{AppErrors: map[v1alpha1.AppKey]error{}}
	if len(apps) == 0 {
		out.Err = errors.New("hydrator: no application to hydrate")
		return out
	}
	h.validate(apps, out.AppErrors)
	if out.fail() {
		return out
	}
	paths, dryApp, err := h.render(ctx, apps, &out)
	if err != nil || out.fail() {
		if out.Err == nil {
			out.Err = err
		}
		return out
	}
	first := apps[0]
	if sha, ok := hydratedBefore(apps, out.DrySHA); ok {
		out.HydratedSHA, out.AlreadyHydrated = sha, true
		return out
	}
	req, err := h.request(ctx, first, dryApp, out.DrySHA, paths)
	if err != nil {
		out.Err = err
		return out
	}
	if h.opts.Hydrating != nil {
		h.opts.Hydrating(ctx, apps)
	}
	var res gitsrc.CommitResult
	for attempt := 1; ; attempt++ {
		res, err = commit(ctx, req)
		if err == nil || !errors.Is(err, gitsrc.ErrBranchMoved) || attempt >= h.opts.MaxAttempts {
			break
		}
	}
	if err != nil {
		out.Err = fmt.Errorf("commit hydrated manifests to %s branch %s: %w", source.RedactURL(first.Spec.SourceHydrator.GetHydrateToSource().RepoURL), req.Target, err)
		return out
	}
	out.Committed = res.Commit != ""
	out.AlreadyHydrated = res.Skipped
	out.HydratedSHA = res.Commit
	if out.HydratedSHA == "" {
		out.HydratedSHA = res.Base
	}
	return out
}

// hydratedBefore returns the hydrated commit of drySHA when every app's
// last successful hydration was of drySHA with its current spec: nothing
// is to be written (Argo CD skips on the first app's status alone).
func hydratedBefore(apps []*v1alpha1.Application, drySHA string) (string, bool) {
	sha := ""
	for _, a := range apps {
		last := a.Status.SourceHydrator.LastSuccessfulOperation
		if last == nil || last.DrySHA != drySHA || last.HydratedSHA == "" || !reflect.DeepEqual(last.SourceHydrator, *a.Spec.SourceHydrator) {
			return "", false
		}
		if sha == "" {
			sha = last.HydratedSHA
		}
	}
	return sha, sha != ""
}

// sameRepo is a repository URL as two spellings of it compare: lower
// case, without a trailing slash or .git.
func sameRepo(u string) string {
	return strings.TrimSuffix(strings.TrimSuffix(strings.ToLower(u), "/"), ".git")
}

// fail turns the apps' own errors into the group's: Argo CD hydrates a
// group only when every app of it can be.
func (o *Outcome) fail() bool {
	if len(o.AppErrors) == 0 {
		return false
	}
	keys := make([]v1alpha1.AppKey, 0, len(o.AppErrors))
	for k := range o.AppErrors {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, v1alpha1.AppKey.Compare)
	rest := "has an error"
	if len(keys) > 1 {
		rest = fmt.Sprintf("and %d more have errors", len(keys)-1)
	}
	o.Err = fmt.Errorf("cannot hydrate because application %s %s", keys[0], rest)
	return true
}

// validate checks each app as Argo CD does before it hydrates: a source
// hydrator, a project allowing the dry and the hydrated repository, a
// path other than the root, and no two apps on one path.
func (h *Hydrator) validate(apps []*v1alpha1.Application, errs map[v1alpha1.AppKey]error) {
	type dest struct{ repo, path string }
	seen := map[dest]v1alpha1.AppKey{}
	for _, app := range apps {
		key := v1alpha1.KeyOf(app)
		sh := app.Spec.SourceHydrator
		if sh == nil {
			errs[key] = fmt.Errorf("application %s has no spec.sourceHydrator", key)
			continue
		}
		proj, err := h.eng.Settings().Project(app.Spec.Project)
		if err != nil {
			errs[key] = fmt.Errorf("failed to get project %q: %w", app.Spec.Project, err)
			continue
		}
		if err := project.CheckSource(proj, sh.DrySource.RepoURL); err != nil {
			errs[key] = fmt.Errorf("dry source: %w", err)
			continue
		}
		to := sh.GetHydrateToSource()
		if IsRootPath(to.Path) {
			errs[key] = fmt.Errorf("app is configured to hydrate to the repository root (branch %q, path %q) which is not allowed", to.TargetRevision, to.Path)
			continue
		}
		if err := project.CheckSource(proj, to.RepoURL); err != nil {
			errs[key] = fmt.Errorf("hydrated repository: %w", err)
			continue
		}
		d := dest{sameRepo(to.RepoURL), cleanPath(to.Path)}
		if other, ok := seen[d]; ok {
			errs[key] = fmt.Errorf("app %s hydrator uses the same destination: repo=%s, path=%s", other, source.RedactURL(to.RepoURL), d.path)
			errs[other] = fmt.Errorf("app %s hydrator uses the same destination: repo=%s, path=%s", key, source.RedactURL(to.RepoURL), d.path)
			continue
		}
		seen[d] = key
	}
}

// DryApp returns app as the engine renders its dry source: spec.source
// is the dry source, and no source hydrator.
func DryApp(app *v1alpha1.Application) *v1alpha1.Application {
	dry := app.DeepCopy()
	src := app.Spec.SourceHydrator.GetDrySource()
	dry.Spec.SourceHydrator = nil
	dry.Spec.Source = &src
	dry.Spec.Sources = nil
	return dry
}

// render renders the first app at its dry revision, which resolves the
// dry commit, and the others at that commit.
func (h *Hydrator) render(ctx context.Context, apps []*v1alpha1.Application, out *Outcome) ([]PathManifests, *v1alpha1.Application, error) {
	var paths []PathManifests
	var firstDry *v1alpha1.Application
	for i, app := range apps {
		dry := DryApp(app)
		if i == 0 {
			firstDry = dry
		}
		r, err := h.eng.RenderManifests(ctx, dry, out.DrySHA)
		out.Renders++
		if err != nil {
			out.AppErrors[v1alpha1.KeyOf(app)] = fmt.Errorf("failed to get manifests: %w", err)
			if i == 0 {
				return nil, nil, nil
			}
			continue
		}
		if i == 0 {
			out.DrySHA = r.Revision
		}
		paths = append(paths, PathManifests{Path: app.Spec.SourceHydrator.SyncSource.Path, Objects: r.Objects})
	}
	return paths, firstDry, nil
}

// commitNote is the note's content: Argo CD's CommitNote.
type commitNote struct {
	DrySHA string `json:"drySha"`
}

// request is the commit of a group's hydration.
func (h *Hydrator) request(ctx context.Context, first, dryApp *v1alpha1.Application, drySHA string, paths []PathManifests) (gitsrc.CommitRequest, error) {
	sh := first.Spec.SourceHydrator
	md, err := h.eng.RevisionMetadata(ctx, dryApp, sh.GetDrySource(), drySHA)
	if err != nil {
		return gitsrc.CommitRequest{}, fmt.Errorf("failed to get revision metadata for %q: %w", drySHA, err)
	}
	root := RootMetadata(sh.DrySource.RepoURL, drySHA, md)
	msg, err := commitMessage(h.message, root)
	if err != nil {
		return gitsrc.CommitRequest{}, err
	}
	note, err := json.Marshal(commitNote{DrySHA: drySHA})
	if err != nil {
		return gitsrc.CommitRequest{}, err
	}
	target := sh.GetHydrateToSource().TargetRevision
	return gitsrc.CommitRequest{
		Base:           sh.SyncSource.TargetBranch,
		Target:         target,
		ContinueTarget: true,
		OrphanBase:     true,
		Message:        msg,
		Author:         object.Signature{Name: h.opts.AuthorName, Email: h.opts.AuthorEmail, When: h.opts.Now()},
		Edit: func(_ context.Context, fs billy.Filesystem) ([]string, error) {
			return writeTree(fs, root, paths, h.readme)
		},
		Note: &gitsrc.Note{Namespace: NoteNamespace, Content: note, Skip: func(existing []byte) bool {
			var n commitNote
			return existing != nil && json.Unmarshal(existing, &n) == nil && n.DrySHA == drySHA
		}},
	}, nil
}
