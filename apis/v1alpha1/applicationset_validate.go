package v1alpha1

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// MaxGeneratorNesting is how deep matrix and merge generators nest: a
// matrix or merge may hold a matrix or merge whose children are plain
// generators (Argo CD's two levels).
const MaxGeneratorNesting = 2

// Validate reports what this engine cannot run in the set, as
// LoadApplicationSets does: nil, or a *ValidationError listing every bad
// field.
func (s *ApplicationSet) Validate() error {
	return validationError("ApplicationSet", s.Namespace, s.Name, s.validate())
}

func (s *ApplicationSet) validate() field.ErrorList {
	var errs field.ErrorList
	add := func(path, format string, args ...any) {
		if format == "is required" {
			errs = append(errs, required(path, ""))
			return
		}
		errs = append(errs, fieldErrorf(path, format, args...))
	}
	if s.Name == "" {
		add("metadata.name", "is required")
	}
	if len(s.Spec.Generators) == 0 {
		add("spec.generators", "at least one generator is required")
	}
	for i := range s.Spec.Generators {
		validateGenerator(&s.Spec.Generators[i], fmt.Sprintf("spec.generators[%d]", i), 0, add)
	}
	for _, o := range s.Spec.GoTemplateOptions {
		switch o {
		case "missingkey=error", "missingkey=zero", "missingkey=default", "missingkey=invalid":
		default:
			add("spec.goTemplateOptions", "unsupported option %q (want missingkey=error|zero|default|invalid)", o)
		}
	}
	if s.Spec.TemplatePatch != nil && !s.Spec.GoTemplate {
		add("spec.templatePatch", "needs goTemplate: true")
	}
	if p := s.Spec.SyncPolicy; p != nil && p.ApplicationsSync != nil {
		switch *p.ApplicationsSync {
		case ApplicationsSyncCreateOnly, ApplicationsSyncCreateUpdate, ApplicationsSyncCreateDelete, ApplicationsSyncSync:
		default:
			add("spec.syncPolicy.applicationsSync", "unknown policy %q (want create-only, create-update, create-delete or sync)", *p.ApplicationsSync)
		}
	}
	if st := s.Spec.Strategy; st != nil {
		switch st.Type {
		case "", "AllAtOnce":
			if st.RollingSync != nil {
				add("spec.strategy.rollingSync", "needs type: RollingSync")
			}
		case "RollingSync":
			if st.RollingSync == nil || len(st.RollingSync.Steps) == 0 {
				add("spec.strategy.rollingSync.steps", "RollingSync needs at least one step")
			}
			if st.RollingSync != nil {
				for i, step := range st.RollingSync.Steps {
					for j, m := range step.MatchExpressions {
						if m.Operator != "In" && m.Operator != "NotIn" {
							add(fmt.Sprintf("spec.strategy.rollingSync.steps[%d].matchExpressions[%d].operator", i, j), "unsupported operator %q (want In or NotIn)", m.Operator)
						}
					}
				}
			}
		default:
			add("spec.strategy.type", "unknown strategy %q (want AllAtOnce or RollingSync)", st.Type)
		}
	}
	for i, r := range s.Spec.IgnoreApplicationDifferences {
		if len(r.JSONPointers)+len(r.JQPathExpressions) == 0 {
			add(fmt.Sprintf("spec.ignoreApplicationDifferences[%d]", i), "names no field (want jsonPointers or jqPathExpressions)")
		}
		for j, p := range r.JSONPointers {
			if !strings.HasPrefix(p, "/") || p == "/" {
				add(fmt.Sprintf("spec.ignoreApplicationDifferences[%d].jsonPointers[%d]", i, j), "%q is not a JSON pointer to a field", p)
			}
		}
	}
	return errs
}

func validateGenerator(g *ApplicationSetGenerator, path string, depth int, add func(path, format string, args ...any)) {
	kinds := g.kinds()
	if len(kinds) != 1 {
		add(path, "want exactly one generator kind, got %d (%s)", len(kinds), strings.Join(kinds, ", "))
		return
	}
	switch {
	case g.Git != nil:
		if g.Git.RepoURL == "" {
			add(path+".git.repoURL", "is required")
		}
		if (len(g.Git.Directories) == 0) == (len(g.Git.Files) == 0) {
			add(path+".git", "want exactly one of directories and files")
		}
	case g.Matrix != nil:
		if depth+1 > MaxGeneratorNesting {
			add(path+".matrix", "nested more than %d levels", MaxGeneratorNesting)
			return
		}
		if len(g.Matrix.Generators) != 2 {
			add(path+".matrix.generators", "a matrix combines exactly two generators, got %d", len(g.Matrix.Generators))
		}
		for i := range g.Matrix.Generators {
			validateGenerator(&g.Matrix.Generators[i], fmt.Sprintf("%s.matrix.generators[%d]", path, i), depth+1, add)
		}
	case g.Merge != nil:
		if depth+1 > MaxGeneratorNesting {
			add(path+".merge", "nested more than %d levels", MaxGeneratorNesting)
			return
		}
		if len(g.Merge.Generators) < 2 {
			add(path+".merge.generators", "a merge needs at least two generators, got %d", len(g.Merge.Generators))
		}
		if len(g.Merge.MergeKeys) == 0 {
			add(path+".merge.mergeKeys", "at least one merge key is required")
		}
		for i := range g.Merge.Generators {
			validateGenerator(&g.Merge.Generators[i], fmt.Sprintf("%s.merge.generators[%d]", path, i), depth+1, add)
		}
	case g.Plugin != nil:
		if g.Plugin.ConfigMapRef.Name == "" {
			add(path+".plugin.configMapRef.name", "is required")
		}
	case g.ClusterDecisionResource != nil:
		if g.ClusterDecisionResource.ConfigMapRef == "" {
			add(path+".clusterDecisionResource.configMapRef", "is required")
		}
	}
}

// kinds lists the generator kinds set on g.
func (g *ApplicationSetGenerator) kinds() []string {
	var k []string
	for _, c := range []struct {
		name string
		set  bool
	}{
		{"list", g.List != nil}, {"clusters", g.Clusters != nil}, {"git", g.Git != nil},
		{"matrix", g.Matrix != nil}, {"merge", g.Merge != nil}, {"scmProvider", g.SCMProvider != nil},
		{"pullRequest", g.PullRequest != nil}, {"clusterDecisionResource", g.ClusterDecisionResource != nil},
		{"plugin", g.Plugin != nil},
	} {
		if c.set {
			k = append(k, c.name)
		}
	}
	return k
}

// Kind is the generator's kind ("git", "matrix", ...); "" when none or
// several are set.
func (g *ApplicationSetGenerator) Kind() string {
	if k := g.kinds(); len(k) == 1 {
		return k[0]
	}
	return ""
}
