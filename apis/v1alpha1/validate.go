package v1alpha1

import (
	"fmt"
	gopath "path"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/kubegitops/gitops/resource"
	"github.com/robfig/cron/v3"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// knownSyncOptions are the sync options this engine understands; anything
// else in syncOptions is a typo that would silently change nothing.
var knownSyncOptions = map[string]bool{
	resource.OptionPrune: true, resource.OptionDelete: true, resource.OptionPruneLast: true,
	resource.OptionReplace: true, resource.OptionForce: true, resource.OptionServerSideApply: true,
	resource.OptionApplyOutOfSyncOnly: true, resource.OptionValidate: true,
	resource.OptionSkipDryRunOnMissingResource: true, resource.OptionClientSideApplyMigration: true,
	resource.OptionCreateNamespace: true, resource.OptionPrunePropagationPolicy: true,
	resource.OptionRespectIgnoreDifferences: true, resource.OptionFailOnSharedResource: true,
}

// Validate reports what is wrong with the application, as the loader
// does: nil, or a *ValidationError listing every bad field.
func (a *Application) Validate() error {
	return validationError("Application", a.Namespace, a.Name, a.validate())
}

func (a *Application) validate() field.ErrorList {
	var errs field.ErrorList
	if a.Name == "" {
		errs = append(errs, required("metadata.name", ""))
	} else if msgs := validation.IsDNS1123Subdomain(a.Name); len(msgs) > 0 {
		errs = append(errs, fieldErrorf("metadata.name", "%s", strings.Join(msgs, "; ")))
	}
	s := a.Spec
	switch {
	case s.SourceHydrator != nil && (s.Source != nil || len(s.Sources) > 0):
		errs = append(errs, fieldErrorf("spec.sourceHydrator", "set source, sources or sourceHydrator, not more than one (an app with a source hydrator syncs from its syncSource)"))
	case s.Source != nil && len(s.Sources) > 0:
		errs = append(errs, fieldErrorf("spec.sources", "set source or sources, not both"))
	case s.Source == nil && len(s.Sources) == 0 && s.SourceHydrator == nil:
		errs = append(errs, required("spec.source", "or sources, or sourceHydrator"))
	}
	if h := s.SourceHydrator; h != nil {
		errs = append(errs, h.validate("spec.sourceHydrator")...)
	}
	if s.Source != nil {
		errs = append(errs, s.Source.validate("spec.source")...)
	}
	for i := range s.Sources {
		errs = append(errs, s.Sources[i].validate(fmt.Sprintf("spec.sources[%d]", i))...)
	}
	d := s.Destination
	switch {
	case d.Server != "" && d.Name != "":
		errs = append(errs, fieldErrorf("spec.destination", "set server or name, not both"))
	case d.Server == "" && d.Name == "":
		errs = append(errs, fieldErrorf("spec.destination", "server or name is required"))
	}
	if d.Namespace != "" {
		if msgs := validation.IsDNS1123Label(d.Namespace); len(msgs) > 0 {
			errs = append(errs, fieldErrorf("spec.destination.namespace", "%s", strings.Join(msgs, "; ")))
		}
	}
	if p := s.SyncPolicy; p != nil {
		for i, opt := range p.SyncOptions {
			path := fmt.Sprintf("spec.syncPolicy.syncOptions[%d]", i)
			parsed, err := resource.ParseOptions(opt)
			if err != nil || parsed.Len() != 1 {
				errs = append(errs, fieldErrorf(path, "want one Key=Value option, got %q", opt))
				continue
			}
			key, _, _ := strings.Cut(strings.TrimSpace(opt), "=")
			if !knownSyncOptions[strings.TrimSpace(key)] {
				errs = append(errs, fieldErrorf(path, "unknown sync option %q", key))
			}
		}
		if r := p.Retry; r != nil && r.Backoff != nil {
			for field, v := range map[string]string{"duration": r.Backoff.Duration, "maxDuration": r.Backoff.MaxDuration} {
				if _, err := ParseBackoffDuration(v); err != nil {
					errs = append(errs, fieldErrorf("spec.syncPolicy.retry.backoff."+field, "%v", err))
				}
			}
			if f := r.Backoff.Factor; f != nil && *f < 1 {
				errs = append(errs, fieldErrorf("spec.syncPolicy.retry.backoff.factor", "must be at least 1"))
			}
		}
	}
	for i, ig := range s.IgnoreDifferences {
		path := fmt.Sprintf("spec.ignoreDifferences[%d]", i)
		if ig.Kind == "" {
			errs = append(errs, required(path+".kind", ""))
		}
		for j, p := range ig.JSONPointers {
			if !strings.HasPrefix(p, "/") {
				errs = append(errs, fieldErrorf(fmt.Sprintf("%s.jsonPointers[%d]", path, j), "a JSON pointer starts with /, got %q", p))
			}
		}
	}
	if l := s.RevisionHistoryLimit; l != nil && *l < 0 {
		errs = append(errs, fieldErrorf("spec.revisionHistoryLimit", "must not be negative"))
	}
	return errs
}

func (src *ApplicationSource) validate(path string) field.ErrorList {
	var errs field.ErrorList
	if src.RepoURL == "" {
		errs = append(errs, required(path+".repoURL", ""))
	}
	tools := 0
	for _, set := range []bool{src.Helm != nil, src.Kustomize != nil, src.Directory != nil, src.Plugin != nil} {
		if set {
			tools++
		}
	}
	if tools > 1 {
		errs = append(errs, fieldErrorf(path, "set at most one of helm, kustomize, directory and plugin"))
	}
	if IsAbsolutePath(src.Path) {
		errs = append(errs, fieldErrorf(path+".path", "must be relative to the repository root, got the absolute path %q", src.Path))
	}
	if h := src.Helm; h != nil {
		switch h.Version {
		case "", "v3", "v4":
			// Argo CD 3.6 runs Helm v4, which renders v3 charts as v3
			// does; charts are rendered here by Helm v3, in process.
		default:
			errs = append(errs, fieldErrorf(path+".helm.version", "helm version '%s' is not supported", h.Version))
		}
	}
	if k := src.Kustomize; k != nil {
		for i, p := range k.Patches {
			for opt := range p.Options {
				if opt != "allowNameChange" && opt != "allowKindChange" {
					errs = append(errs, fieldErrorf(fmt.Sprintf("%s.kustomize.patches[%d].options.%s", path, i, opt), "unknown patch option (want allowNameChange or allowKindChange)"))
				}
			}
		}
	}
	if src.Chart != "" && src.Path != "" {
		errs = append(errs, fieldErrorf(path+".chart", "set chart or path, not both"))
	}
	if src.Chart != "" && (src.Kustomize != nil || src.Directory != nil || src.Plugin != nil) {
		errs = append(errs, fieldErrorf(path+".chart", "a chart renders with Helm: kustomize, directory and plugin do not apply"))
	}
	if src.Helm != nil && src.Helm.PassCredentials {
		errs = append(errs, fieldErrorf(path+".helm.passCredentials", "%w: a repository's credentials are only sent to its own host (give the archive host credentials of its own)", ErrUnsupported))
	}
	return errs
}

// IsAbsolutePath reports an app path that names a place from the root of
// a file system (/x, or a Windows drive or UNC path) instead of one inside
// the repository.
func IsAbsolutePath(p string) bool {
	return strings.HasPrefix(p, "/") || strings.HasPrefix(p, `\\`) ||
		(len(p) >= 3 && p[1] == ':' && (p[2] == '/' || p[2] == '\\'))
}

// ParseBackoffDuration reads a retry backoff duration as Argo CD does: a Go
// duration ("30s", "2m") or a bare number of seconds ("5"). Empty is 0.
func ParseBackoffDuration(s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	if n, err := strconv.Atoi(s); err == nil {
		if n < 0 {
			return 0, fmt.Errorf("negative duration %q", s)
		}
		return time.Duration(n) * time.Second, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("invalid duration %q (want e.g. 5s, 3m or a number of seconds)", s)
	}
	return d, nil
}

// SlashRegexp returns the regular expression of a pattern written between
// slashes ("/^team-.*$/"), and whether it is one: Argo CD's way of telling
// a regular expression from a glob in a list of patterns such as an
// AppProject's sourceNamespaces.
func SlashRegexp(pattern string) (string, bool) {
	if len(pattern) < 2 || !strings.HasPrefix(pattern, "/") || !strings.HasSuffix(pattern, "/") {
		return "", false
	}
	return pattern[1 : len(pattern)-1], true
}

// Validate reports what is wrong with the project, as the loader does:
// nil, or a *ValidationError listing every bad field.
func (p *AppProject) Validate() error {
	return validationError("AppProject", p.Namespace, p.Name, p.validate())
}

func (p *AppProject) validate() field.ErrorList {
	var errs field.ErrorList
	if p.Name == "" {
		errs = append(errs, required("metadata.name", ""))
	}
	for i, d := range p.Spec.Destinations {
		if d.Server == "" && d.Name == "" {
			errs = append(errs, fieldErrorf(fmt.Sprintf("spec.destinations[%d]", i), "server or name is required (use \"*\" for any)"))
		}
	}
	for i, ns := range p.Spec.SourceNamespaces {
		if expr, ok := SlashRegexp(ns); ok {
			if _, err := regexp.Compile(expr); err != nil {
				errs = append(errs, fieldErrorf(fmt.Sprintf("spec.sourceNamespaces[%d]", i),
					"%q is not a regular expression Go's RE2 syntax accepts (no lookarounds or backreferences): %v", ns, err))
			}
		}
	}
	for i, w := range p.Spec.SyncWindows {
		path := fmt.Sprintf("spec.syncWindows[%d]", i)
		if w.Kind != "allow" && w.Kind != "deny" {
			errs = append(errs, fieldErrorf(path+".kind", "want allow or deny, got %q", w.Kind))
		}
		if _, err := cron.ParseStandard(w.Schedule); err != nil {
			errs = append(errs, fieldErrorf(path+".schedule", "invalid cron schedule %q: %v", w.Schedule, err))
		}
		if d, err := time.ParseDuration(w.Duration); err != nil || d <= 0 {
			errs = append(errs, fieldErrorf(path+".duration", "want a positive duration such as 1h, got %q", w.Duration))
		}
		if w.TimeZone != "" {
			if _, err := time.LoadLocation(w.TimeZone); err != nil {
				errs = append(errs, fieldErrorf(path+".timeZone", "unknown time zone %q", w.TimeZone))
			}
		}
	}
	errs = append(errs, validateRestrictionNames("spec.clusterResourceWhitelist", p.Spec.ClusterResourceWhitelist)...)
	errs = append(errs, validateRestrictionNames("spec.clusterResourceBlacklist", p.Spec.ClusterResourceBlacklist)...)
	errs = append(errs, validateSourceIntegrity(p.Spec.SourceIntegrity)...)
	return append(errs, validateRoles(p.Spec.Roles)...)
}

// validateRestrictionNames checks the name globs of a cluster resource
// list: one path.Match cannot read would match nothing, silently letting
// through what a deny list meant to stop.
func validateRestrictionNames(path string, items []ClusterResourceRestrictionItem) field.ErrorList {
	var errs field.ErrorList
	for i, it := range items {
		if _, err := gopath.Match(it.Name, ""); err != nil {
			errs = append(errs, fieldErrorf(fmt.Sprintf("%s[%d].name", path, i), "%q is not a glob of Go's path.Match syntax: %v", it.Name, err))
		}
	}
	return errs
}

// validateSourceIntegrity checks what Argo CD's CRD requires of
// sourceIntegrity: git, and each policy's gpg. A policy's mode and keys
// are judged where they apply (package source/integrity), as Argo CD does.
func validateSourceIntegrity(si *SourceIntegrity) field.ErrorList {
	if si == nil {
		return nil
	}
	if si.Git == nil {
		return field.ErrorList{required("spec.sourceIntegrity.git", "")}
	}
	var errs field.ErrorList
	for i, pol := range si.Git.Policies {
		if pol.GPG == nil {
			errs = append(errs, required(fmt.Sprintf("spec.sourceIntegrity.git.policies[%d].gpg", i), ""))
		}
	}
	return errs
}

// roleName is Argo CD's rule for a project role's name.
var roleName = regexp.MustCompile(`^[a-zA-Z0-9]([-_a-zA-Z0-9]*[a-zA-Z0-9])?$`)

// validateRoles checks the roles' names (Argo CD's pattern, unique) and
// groups (non-empty, unique within a role). Their policy lines are checked
// by package rbac, which parses them.
func validateRoles(roles []ProjectRole) field.ErrorList {
	var errs field.ErrorList
	seen := map[string]bool{}
	for i, r := range roles {
		path := fmt.Sprintf("spec.roles[%d]", i)
		switch {
		case !roleName.MatchString(r.Name):
			errs = append(errs, fieldErrorf(path+".name", "want letters, digits, '-' and '_', starting and ending with a letter or digit, got %q", r.Name))
		case seen[r.Name]:
			errs = append(errs, fieldErrorf(path+".name", "role %q is defined twice", r.Name))
		}
		seen[r.Name] = true
		groups := map[string]bool{}
		for j, g := range r.Groups {
			gp := fmt.Sprintf("%s.groups[%d]", path, j)
			switch {
			case strings.TrimSpace(g) == "":
				errs = append(errs, fieldErrorf(gp, "is empty"))
			case groups[g]:
				errs = append(errs, fieldErrorf(gp, "group %q is listed twice", g))
			}
			groups[g] = true
		}
	}
	return errs
}
