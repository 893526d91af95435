package desired

import (
	"os"
	"sort"
	"strings"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/render"
	"github.com/kubegitops/gitops/source"
)

// buildEnv returns Argo CD's build environment of one source: the
// application's name, destination namespace and project, the source's
// resolved revision (and its 7- and 8-character short forms), path, repo
// URL and target revision, and the target cluster's version and API
// versions (comma separated).
func buildEnv(app *v1alpha1.Application, src v1alpha1.ApplicationSource, rev source.Revision, in render.Input) map[string]string {
	project := ProjectName(app)
	short := func(n int) string {
		if len(rev.Commit) > n {
			return rev.Commit[:n]
		}
		return rev.Commit
	}
	apis := append([]string{}, in.APIVersions...)
	sort.Strings(apis)
	return map[string]string{
		"ARGOCD_APP_NAME":                   app.Name,
		"ARGOCD_APP_NAMESPACE":              app.Spec.Destination.Namespace,
		"ARGOCD_APP_PROJECT_NAME":           project,
		"ARGOCD_APP_REVISION":               rev.Commit,
		"ARGOCD_APP_REVISION_SHORT":         short(7),
		"ARGOCD_APP_REVISION_SHORT_8":       short(8),
		"ARGOCD_APP_SOURCE_PATH":            src.Path,
		"ARGOCD_APP_SOURCE_REPO_URL":        source.RedactURL(src.RepoURL),
		"ARGOCD_APP_SOURCE_TARGET_REVISION": src.TargetRevision,
		"KUBE_VERSION":                      in.KubeVersion,
		"KUBE_API_VERSIONS":                 strings.Join(apis, ","),
	}
}

// envsubst replaces $NAME and ${NAME} in s with the build environment's
// values, as Argo CD's Env.Envsubst does: a name the environment does not
// define becomes "", and "$$" is a literal "$".
func envsubst(s string, env map[string]string) string {
	if !strings.Contains(s, "$") {
		return s
	}
	return os.Expand(s, func(name string) string {
		if name == "$" {
			return "$"
		}
		return env[name]
	})
}

// substituteBuildEnv applies the build environment where Argo CD applies
// it: Helm parameter values (value file paths are substituted by
// withRefs, which must see "$ref/" prefixes first), Jsonnet external
// variables and top-level arguments, Kustomize name prefix and suffix,
// images and common labels (and common annotations with
// commonAnnotationsEnvsubst), the environment of a named kustomize
// binary, and plugin environment entries (the plugin
// also receives the whole environment). Values are substituted before the
// render cache key is taken, so a revision changes the key of only the
// renders that use it.
func substituteBuildEnv(in *render.Input, env map[string]string) {
	if h := in.Helm; h != nil {
		c := *h
		c.Parameters = make([]render.HelmParameter, len(h.Parameters))
		for i, p := range h.Parameters {
			p.Value = envsubst(p.Value, env)
			c.Parameters[i] = p
		}
		in.Helm = &c
	}
	if j := in.Jsonnet; j != nil {
		c := *j
		c.ExtVars, c.TLAs = substVars(j.ExtVars, env), substVars(j.TLAs, env)
		in.Jsonnet = &c
	}
	if k := in.Kustomize; k != nil {
		c := *k
		c.NamePrefix, c.NameSuffix = envsubst(k.NamePrefix, env), envsubst(k.NameSuffix, env)
		c.Images = mapStrings(k.Images, env)
		if k.CommonLabels != nil {
			c.CommonLabels = make(map[string]string, len(k.CommonLabels))
			for name, v := range k.CommonLabels {
				c.CommonLabels[name] = envsubst(v, env)
			}
		}
		if k.CommonAnnotations != nil && k.CommonAnnotationsEnvsubst {
			c.CommonAnnotations = make(map[string]string, len(k.CommonAnnotations))
			for name, v := range k.CommonAnnotations {
				c.CommonAnnotations[name] = envsubst(v, env)
			}
		}
		if k.Version != "" {
			// A named kustomize binary runs with the build environment,
			// as Argo CD runs it; the in-process build does not read it.
			c.BuildEnv = env
		}
		in.Kustomize = &c
	}
	if p := in.Plugin; p != nil {
		c := *p
		c.Env = make(map[string]string, len(p.Env))
		for name, v := range p.Env {
			c.Env[name] = envsubst(v, env)
		}
		c.BuildEnv = env
		in.Plugin = &c
	}
}

func mapStrings(in []string, env map[string]string) []string {
	if in == nil {
		return nil
	}
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = envsubst(s, env)
	}
	return out
}

func substVars(vs []render.JsonnetVar, env map[string]string) []render.JsonnetVar {
	if vs == nil {
		return nil
	}
	out := make([]render.JsonnetVar, len(vs))
	for i, v := range vs {
		v.Value = envsubst(v.Value, env)
		out[i] = v
	}
	return out
}
