package imageupdate

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/go-containerregistry/pkg/name"

	"github.com/kubegitops/gitops/source"
	gitsrc "github.com/kubegitops/gitops/source/git"
)

// SourceType is how an application renders: it decides what is written.
type SourceType string

// The source types the image updater writes for.
const (
	SourceKustomize SourceType = "Kustomize"
	SourceHelm      SourceType = "Helm"
)

// App is what the updater needs of an Argo CD Application, as plain
// values (the updater does not depend on the engine's types).
type App struct {
	// Name of the Application: names the override file and the templates'
	// .AppName.
	Name string
	// Annotations of the Application (the argocd-image-updater.argoproj.io/
	// ones are read).
	Annotations map[string]string
	// RepoURL, Path and TargetRevision of the application's source.
	RepoURL, Path, TargetRevision string
	// SourceType: Kustomize or Helm.
	SourceType SourceType
	// Images the application runs now ("repo:tag", "repo@sha256:..." or
	// "repo:tag@sha256:..."), from its status. An image-list entry that is
	// not among them is skipped unless force-update is set.
	Images []string
	// Credentials of the repository, used to clone and push for the git
	// write-back (unless git:secret:ns/name names others).
	Credentials *source.Credentials
	// SpecOverride are the kustomize images and Helm parameters the
	// Application's spec already sets. Argo merges .argocd-source-<app>.yaml
	// over the spec with lists replaced, so the file written lists them
	// too.
	SpecOverride Override
}

// Options configure an Updater. Start from DefaultOptions.
type Options struct {
	// Registry configures registry access (timeouts, cache interval, rate
	// limits).
	Registry RegistryOptions
	// DockerConfig is a Docker config JSON used for registries no
	// pull-secret annotation covers.
	DockerConfig []byte
	// Secrets reads Secrets named by pull-secret and git:secret:.
	Secrets SecretGetter
	// CommandTimeout bounds an ext: credential command. Default 30 s.
	CommandTimeout time.Duration
	// Git configures the git write-back.
	Git GitOptions
	// DryRun computes changes, file edits and overrides without
	// committing or pushing; results say DryRun so that nobody applies
	// their override.
	DryRun bool
	// Logger receives progress at V(1); never credentials.
	Logger logr.Logger
}

// DefaultOptions returns default registry options, a 30 s command bound,
// default Git options and a discarding logger.
func DefaultOptions() Options {
	return Options{Registry: DefaultRegistryOptions(), CommandTimeout: 30 * time.Second, Git: DefaultGitOptions(), Logger: logr.Discard()}
}

// Change is one image moved to a new tag (or digest).
type Change struct {
	// Alias and Repository of the image-list entry.
	Alias, Repository string
	// OldTag is the tag the app runs ("" when unknown); NewTag the chosen
	// one.
	OldTag, NewTag string
	// NewDigest is set by the digest strategy.
	NewDigest string
}

// Skip is an image left alone, with why.
type Skip struct {
	// Image is the image as the application's annotations name it.
	Image string
	// Reason says why it was left alone.
	Reason string
}

// Result is what one update of one application did (or, with DryRun,
// would do).
type Result struct {
	// App is the application updated.
	App string
	// Method is how the change was written back: to the Application, or to
	// Git.
	Method WriteBackMethod
	// Changes are the images that changed.
	Changes []Change
	// Skipped are the images left alone, with why.
	Skipped []Skip
	// Override is the parameter override to hold for the app
	// (write-back-method argocd); nil when nothing changed.
	Override *Override
	// DryRun is set when the update ran with Options.DryRun: nothing was
	// committed, and Override is to be shown, not applied.
	DryRun bool
	// Files are the edits of the git write-back, in path order.
	Files []FileEdit
	// Commit is the commit pushed, Branch where; empty when nothing was
	// pushed.
	Commit, Branch string
	// Attempts is the number of pushes tried (more than one after a push
	// race).
	Attempts int
}

// Updater scans registries and writes back new images. It is safe for
// concurrent use; its registry cache is shared by every app it serves.
type Updater struct {
	opts     Options
	registry *Registry

	// ownGit is the Git source made at first use when GitOptions.Source
	// is nil.
	gitOnce   sync.Once
	ownGit    *gitsrc.Source
	ownGitErr error
}

// New returns an Updater; zero fields of opts take their defaults.
func New(opts Options) *Updater {
	def := DefaultOptions()
	if opts.CommandTimeout <= 0 {
		opts.CommandTimeout = def.CommandTimeout
	}
	if opts.Logger.GetSink() == nil {
		opts.Logger = def.Logger
	}
	opts.Git = opts.Git.withDefaults()
	return &Updater{opts: opts, registry: NewRegistry(opts.Registry)}
}

// Registry returns the updater's registry client (for its Stats).
func (u *Updater) Registry() *Registry { return u.registry }

// Update checks one application: parses its annotations, scans the
// registry for each image, chooses tags, and writes back the changes by
// the app's method. An app without an image-list returns a zero Result
// and no error. On any error nothing is committed and no override is
// returned. Errors are *Error values naming the app.
func (u *Updater) Update(ctx context.Context, app App) (Result, error) {
	wrap := func(subject string, err error) error {
		var e *Error
		if errors.As(err, &e) {
			return err
		}
		return &Error{App: app.Name, Subject: subject, Err: err}
	}
	cfg, ok, err := ParseAnnotations(app.Annotations)
	if err != nil || !ok {
		if err != nil {
			return Result{}, wrap("", err)
		}
		return Result{}, nil
	}
	res := Result{App: app.Name, Method: cfg.Method, DryRun: u.opts.DryRun}
	var images []Image
	for _, img := range cfg.Images {
		ch, skip, err := u.check(ctx, app, img)
		if err != nil {
			return Result{}, wrap(img.Name(), err)
		}
		if skip != "" {
			res.Skipped = append(res.Skipped, Skip{Image: img.Name(), Reason: skip})
			continue
		}
		res.Changes = append(res.Changes, ch)
		images = append(images, img)
	}
	if len(res.Changes) == 0 {
		return res, nil
	}
	switch cfg.Method {
	case WriteBackArgoCD:
		ov, err := overrideFor(app.SourceType, images, res.Changes)
		if err != nil {
			return Result{}, wrap("", err)
		}
		res.Override = &ov
	case WriteBackGit:
		if err := u.writeGit(ctx, app, cfg, images, &res); err != nil {
			return Result{}, wrap("", err)
		}
	}
	return res, nil
}

// current finds the tag and digest the app runs for img.
func current(app App, img Image) (tag, digest string, found bool) {
	want := map[string]bool{}
	for _, n := range []string{img.Repository, img.KustomizeImageName} {
		if r, err := name.NewRepository(n); err == nil {
			want[r.Name()] = true
		}
	}
	for _, s := range app.Images {
		ref, dig, _ := cutDigest(s)
		t := ""
		if i := lastColon(ref); i >= 0 {
			ref, t = ref[:i], ref[i+1:]
		}
		r, err := name.NewRepository(ref)
		if err != nil || !want[r.Name()] {
			continue
		}
		return t, dig, true
	}
	return "", "", false
}

func cutDigest(s string) (string, string, bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == '@' {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

// lastColon returns the index of the tag separator of ref, or -1.
func lastColon(ref string) int {
	slash := -1
	for i := len(ref) - 1; i >= 0; i-- {
		switch ref[i] {
		case '/':
			if slash < 0 {
				slash = i
			}
		case ':':
			if slash < 0 {
				return i
			}
		}
	}
	return -1
}

// check scans the registry for img and returns the change to make, or why
// none is made.
func (u *Updater) check(ctx context.Context, app App, img Image) (Change, string, error) {
	oldTag, oldDigest, running := current(app, img)
	if !running && !img.ForceUpdate {
		return Change{}, "the application does not run this image (set force-update to write it anyway)", nil
	}
	creds, err := u.credentialsFor(ctx, img)
	if err != nil {
		return Change{}, "", err
	}
	var candidates []Tag
	if img.Strategy == StrategyDigest {
		t, err := u.registry.Describe(ctx, img.Repository, img.Constraint, creds, img.Platforms, false)
		if err != nil {
			return Change{}, "", err
		}
		if len(img.Platforms) == 0 || anyPlatform(img.Platforms, t.Platforms) {
			candidates = append(candidates, t)
		}
	} else {
		tags, err := u.registry.Tags(ctx, img.Repository, creds)
		if err != nil {
			return Change{}, "", err
		}
		for _, name := range tags {
			if !img.eligible(name) {
				continue
			}
			t := Tag{Name: name}
			if img.needsMetadata() {
				if t, err = u.registry.Describe(ctx, img.Repository, name, creds, img.Platforms, img.Strategy == StrategyNewestBuild); err != nil {
					return Change{}, "", err
				}
				if len(img.Platforms) > 0 && !anyPlatform(img.Platforms, t.Platforms) {
					continue
				}
			}
			candidates = append(candidates, t)
		}
	}
	best, ok := img.Choose(candidates)
	if !ok {
		return Change{}, ErrNoCandidate.Error(), nil
	}
	ch := Change{Alias: img.Alias, Repository: img.Repository, OldTag: oldTag, NewTag: best.Name}
	if img.Strategy == StrategyDigest {
		ch.NewDigest = best.Digest
		if running && oldDigest == best.Digest {
			return Change{}, "already runs " + best.Digest, nil
		}
		return ch, "", nil
	}
	if running && oldTag == best.Name && oldDigest == "" {
		return Change{}, "already runs " + best.Name, nil
	}
	return ch, "", nil
}

func anyPlatform(want, have []string) bool {
	for _, h := range have {
		if matchPlatform(want, h) {
			return true
		}
	}
	return false
}
