package imageupdate

import (
	"regexp"
	"sort"
	"strings"

	"github.com/Masterminds/semver/v3"
	"github.com/google/go-containerregistry/pkg/name"
)

// Prefix is the annotation prefix of Argo CD Image Updater.
const Prefix = "argocd-image-updater.argoproj.io/"

// Strategy is how the tag to run is chosen among a repository's tags.
type Strategy string

// The update strategies, named as Argo CD Image Updater names them.
// "latest" is read as StrategyNewestBuild and "name" as
// StrategyAlphabetical, their older names.
const (
	StrategySemver       Strategy = "semver"
	StrategyNewestBuild  Strategy = "newest-build"
	StrategyDigest       Strategy = "digest"
	StrategyAlphabetical Strategy = "alphabetical"
)

// WriteBackMethod is where a chosen image is recorded.
type WriteBackMethod string

// The write-back methods.
const (
	// WriteBackArgoCD records a parameter override on the Application,
	// held by the engine.
	WriteBackArgoCD WriteBackMethod = "argocd"
	// WriteBackGit commits the change to the application's repository.
	WriteBackGit WriteBackMethod = "git"
)

// Image is one entry of the image-list annotation with its options.
type Image struct {
	// Alias names the image in per-image annotations; empty when the entry
	// has none.
	Alias string
	// Repository is the image without tag or digest, as written
	// ("registry.example.com/team/app").
	Repository string
	// Constraint is what followed the last ':' of the entry: a semver
	// constraint, or for the digest strategy the tag to follow.
	Constraint string
	// Strategy chooses the tag. Default semver.
	Strategy Strategy
	// Allow, when set, must match a tag for it to be considered
	// ("regexp:<re>"; "any" leaves it nil).
	Allow *regexp.Regexp
	// Ignore are glob patterns (path.Match) of tags never considered.
	Ignore []string
	// Platforms ("linux/amd64", "linux/arm/v7"), when set, keep only tags
	// whose manifest (or index) offers one of them.
	Platforms []string
	// HelmImageName, HelmImageTag and HelmImageSpec are the Helm value
	// paths written ("image.repository", "image.tag", "image.spec").
	HelmImageName, HelmImageTag, HelmImageSpec string
	// KustomizeImageName is the image name the kustomization's images:
	// entry is keyed by. Default: Repository.
	KustomizeImageName string
	// ForceUpdate updates the image even when the application does not run
	// it yet.
	ForceUpdate bool
	// PullSecret is the annotation's credential reference:
	// "pullsecret:ns/name", "secret:ns/name#field", "env:NAME" or
	// "ext:/path/to/command".
	PullSecret string

	semver *semver.Constraints
}

// Name is what errors and results call the image: its alias, or its
// repository.
func (i Image) Name() string {
	if i.Alias != "" {
		return i.Alias
	}
	return i.Repository
}

// Config is an Application's image updater configuration.
type Config struct {
	// Images from image-list, in order.
	Images []Image
	// Method is the write-back method. Default argocd.
	Method WriteBackMethod
	// GitSecret is "ns/name" of the Secret holding Git credentials
	// (write-back-method git:secret:ns/name); empty: the repository's own.
	GitSecret string
	// BaseBranch is the branch checked out; empty: the application's
	// targetRevision. TargetBranch, when set, is a text/template of the
	// branch pushed to (git-branch base:target).
	BaseBranch, TargetBranch string
	// Target is the write-back target: "" (Argo's
	// .argocd-source-<app>.yaml), "kustomization" or "helmvalues".
	Target string
	// TargetPath is the path after "kustomization:" or "helmvalues:";
	// relative to the application's path unless it starts with "/".
	TargetPath string
}

var appKeys = map[string]bool{"image-list": true, "write-back-method": true, "git-branch": true, "write-back-target": true}

var imageKeys = map[string]bool{
	"update-strategy": true, "allow-tags": true, "ignore-tags": true, "platforms": true,
	"helm.image-name": true, "helm.image-tag": true, "helm.image-spec": true,
	"kustomize.image-name": true, "force-update": true, "pull-secret": true,
}

// ParseAnnotations reads the image updater annotations of an Application.
// It returns (Config{}, false, nil) when the app has no image-list.
//
// Rules, as Argo CD Image Updater defines them:
//   - image-list is a comma-separated list of [alias=]image[:constraint].
//   - <alias>.<option> sets an option for one image; <option> alone (for
//     update-strategy, allow-tags, ignore-tags, platforms, force-update,
//     pull-secret) is the default for every image.
//   - update-strategy: semver (default), newest-build (or latest), digest,
//     alphabetical (or name).
//   - allow-tags: "regexp:<re>" or "any"; ignore-tags: comma-separated globs.
//   - write-back-method: argocd (default), git (the repository's own
//     credentials; git:repocreds says so explicitly), git:secret:ns/name.
//   - git-branch: branch, or base:target where target is a template.
//   - write-back-target: kustomization[:path] or helmvalues[:path]; only
//     with git.
//
// Any other key under the prefix, an unknown value, a regexp or constraint
// that does not parse is an error wrapping ErrAnnotation or ErrConstraint.
func ParseAnnotations(ann map[string]string) (Config, bool, error) {
	list, ok := ann[Prefix+"image-list"]
	if !ok {
		return Config{}, false, nil
	}
	var cfg Config
	aliases := map[string]bool{}
	for _, entry := range strings.Split(list, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		img, err := parseImageEntry(entry)
		if err != nil {
			return Config{}, true, err
		}
		if img.Alias != "" {
			if aliases[img.Alias] {
				return Config{}, true, errorf(ErrAnnotation, "image-list: alias %q used twice", img.Alias)
			}
			aliases[img.Alias] = true
		}
		cfg.Images = append(cfg.Images, img)
	}
	if len(cfg.Images) == 0 {
		return Config{}, true, errorf(ErrAnnotation, "image-list is empty")
	}
	// Refuse keys nobody reads.
	var unknown []string
	for k := range ann {
		opt, ok := strings.CutPrefix(k, Prefix)
		if !ok || appKeys[opt] || imageKeys[opt] {
			continue
		}
		alias, o, found := strings.Cut(opt, ".")
		if found && aliases[alias] && imageKeys[o] {
			continue
		}
		unknown = append(unknown, k)
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return Config{}, true, errorf(ErrAnnotation, "unknown or unsupported annotation %s (per-image options need an alias from image-list)", strings.Join(unknown, ", "))
	}
	for i := range cfg.Images {
		if err := applyImageOptions(&cfg.Images[i], ann); err != nil {
			return Config{}, true, err
		}
	}
	if err := parseWriteBack(&cfg, ann); err != nil {
		return Config{}, true, err
	}
	return cfg, true, nil
}

// aliasPattern is what an image alias may be.
var aliasPattern = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// parseImageEntry reads "[alias=]image[:constraint]".
func parseImageEntry(entry string) (Image, error) {
	var img Image
	if a, rest, ok := strings.Cut(entry, "="); ok {
		img.Alias, entry = strings.TrimSpace(a), strings.TrimSpace(rest)
		if !aliasPattern.MatchString(img.Alias) {
			return Image{}, errorf(ErrAnnotation, "image-list: alias %q has characters other than letters, digits, '-' and '_'", img.Alias)
		}
	}
	if strings.Contains(entry, "@") {
		return Image{}, errorf(ErrAnnotation, "image-list: %q: write a tag constraint, not a digest", entry)
	}
	img.Repository = entry
	if i := strings.LastIndex(entry, ":"); i > strings.LastIndex(entry, "/") {
		img.Repository, img.Constraint = entry[:i], entry[i+1:]
	}
	if _, err := name.NewRepository(img.Repository); err != nil {
		return Image{}, errorf(ErrAnnotation, "image-list: %q is not an image name", img.Repository)
	}
	return img, nil
}

// option returns <alias>.<key>, else the app-wide <key>.
func option(ann map[string]string, img *Image, key string) (string, bool) {
	if img.Alias != "" {
		if v, ok := ann[Prefix+img.Alias+"."+key]; ok {
			return strings.TrimSpace(v), true
		}
	}
	v, ok := ann[Prefix+key]
	return strings.TrimSpace(v), ok
}

func applyImageOptions(img *Image, ann map[string]string) error {
	img.Strategy = StrategySemver
	if v, ok := option(ann, img, "update-strategy"); ok {
		switch v {
		case "semver", "":
		case "latest", "newest-build":
			img.Strategy = StrategyNewestBuild
		case "digest":
			img.Strategy = StrategyDigest
		case "name", "alphabetical":
			img.Strategy = StrategyAlphabetical
		default:
			return errorf(ErrAnnotation, "%s: update-strategy %q is not semver, newest-build, latest, digest, alphabetical or name", img.Name(), v)
		}
	}
	if v, ok := option(ann, img, "allow-tags"); ok && v != "any" {
		re, found := strings.CutPrefix(v, "regexp:")
		if !found {
			return errorf(ErrAnnotation, "%s: allow-tags %q is neither \"any\" nor \"regexp:<expression>\"", img.Name(), v)
		}
		rx, err := regexp.Compile(re)
		if err != nil {
			return errorf(ErrConstraint, "%s: allow-tags: %v", img.Name(), err)
		}
		img.Allow = rx
	}
	if v, ok := option(ann, img, "ignore-tags"); ok {
		img.Ignore = splitList(v)
	}
	if v, ok := option(ann, img, "platforms"); ok {
		for _, p := range splitList(v) {
			parts := strings.Split(p, "/")
			if len(parts) < 2 || len(parts) > 3 || parts[0] == "" || parts[1] == "" {
				return errorf(ErrAnnotation, "%s: platform %q is not os/arch[/variant]", img.Name(), p)
			}
			img.Platforms = append(img.Platforms, p)
		}
	}
	if v, ok := option(ann, img, "force-update"); ok {
		switch v {
		case "true":
			img.ForceUpdate = true
		case "false", "":
		default:
			return errorf(ErrAnnotation, "%s: force-update %q is not true or false", img.Name(), v)
		}
	}
	if v, ok := option(ann, img, "pull-secret"); ok && v != "" {
		if !strings.HasPrefix(v, "pullsecret:") && !strings.HasPrefix(v, "secret:") && !strings.HasPrefix(v, "env:") && !strings.HasPrefix(v, "ext:") {
			return errorf(ErrAnnotation, "%s: pull-secret must start with pullsecret:, secret:, env: or ext:", img.Name())
		}
		img.PullSecret = v
	}
	if img.Alias != "" {
		img.HelmImageName = ann[Prefix+img.Alias+".helm.image-name"]
		img.HelmImageTag = ann[Prefix+img.Alias+".helm.image-tag"]
		img.HelmImageSpec = ann[Prefix+img.Alias+".helm.image-spec"]
		img.KustomizeImageName = ann[Prefix+img.Alias+".kustomize.image-name"]
	}
	if img.KustomizeImageName == "" {
		img.KustomizeImageName = img.Repository
	}
	switch img.Strategy {
	case StrategySemver:
		if img.Constraint != "" && img.Constraint != "latest" {
			c, err := semver.NewConstraint(img.Constraint)
			if err != nil {
				return errorf(ErrConstraint, "%s: %q: %v", img.Name(), img.Constraint, err)
			}
			img.semver = c
		}
	case StrategyDigest:
		if img.Constraint == "" {
			return errorf(ErrConstraint, "%s: the digest strategy needs the tag to follow (image:tag)", img.Name())
		}
	}
	return nil
}

func parseWriteBack(cfg *Config, ann map[string]string) error {
	cfg.Method = WriteBackArgoCD
	switch m := strings.TrimSpace(ann[Prefix+"write-back-method"]); {
	case m == "" || m == "argocd":
	case m == "git", m == "git:repocreds":
		// git:repocreds names the default: the repository's own
		// credentials (Argo CD's repository Secrets).
		cfg.Method = WriteBackGit
	case strings.HasPrefix(m, "git:secret:"):
		cfg.Method = WriteBackGit
		cfg.GitSecret = strings.TrimPrefix(m, "git:secret:")
		if ns, n, ok := strings.Cut(cfg.GitSecret, "/"); !ok || ns == "" || n == "" {
			return errorf(ErrAnnotation, "write-back-method %q: want git:secret:<namespace>/<name>", m)
		}
	default:
		return errorf(ErrAnnotation, "write-back-method %q is not argocd, git, git:repocreds or git:secret:<namespace>/<name>", m)
	}
	if b, ok := ann[Prefix+"git-branch"]; ok {
		base, target, _ := strings.Cut(strings.TrimSpace(b), ":")
		cfg.BaseBranch, cfg.TargetBranch = base, target
	}
	if t, ok := ann[Prefix+"write-back-target"]; ok {
		kind, p, _ := strings.Cut(strings.TrimSpace(t), ":")
		if kind != "kustomization" && kind != "helmvalues" {
			return errorf(ErrAnnotation, "write-back-target %q is not kustomization[:path] or helmvalues[:path]", t)
		}
		cfg.Target, cfg.TargetPath = kind, p
	}
	if cfg.Method != WriteBackGit && (cfg.Target != "" || cfg.TargetBranch != "" || cfg.BaseBranch != "") {
		return errorf(ErrAnnotation, "git-branch and write-back-target need write-back-method git")
	}
	return nil
}

func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}
