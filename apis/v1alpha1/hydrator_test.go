package v1alpha1

import (
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/kubegitops/gitops/internal/argodocs"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// yamlBlock is a fenced YAML block of a Markdown page.
var yamlBlock = regexp.MustCompile("(?s)```yaml\n(.*?)```")

// TestSourceHydratorDocsExamplesLoad loads every Application of Argo CD's
// source hydrator page (docs/user-guide/source-hydrator.md of the current
// release) as it is: each loads, keeps its sourceHydrator, validates, and
// syncs from its syncSource.
func TestSourceHydratorDocsExamplesLoad(t *testing.T) {
	page := argodocs.ForTest(t).MustReadFile(t, "docs/user-guide/source-hydrator.md")
	var apps int
	for _, m := range yamlBlock.FindAllSubmatch(page, -1) {
		doc := string(m[1])
		if !strings.Contains(doc, "kind: Application\n") {
			continue
		}
		if !strings.Contains(doc, "destination:") {
			// Most of the page's examples leave out the destination, which
			// the loader requires.
			doc = strings.Replace(doc, "\nspec:\n", "\nspec:\n  destination:\n    server: "+KubernetesInternalAPIServerAddr+"\n", 1)
		}
		loaded, err := LoadApplications(strings.NewReader(doc))
		if err != nil {
			t.Errorf("%v\n%s", err, doc)
			continue
		}
		for _, app := range loaded {
			apps++
			h := app.Spec.SourceHydrator
			if h == nil {
				t.Errorf("%s: sourceHydrator dropped", app.Name)
				continue
			}
			if err := app.Validate(); err != nil {
				t.Errorf("%s: %v", app.Name, err)
			}
			srcs := app.Spec.AllSources()
			want := h.GetSyncSource()
			if len(srcs) != 1 || srcs[0].RepoURL != want.RepoURL || srcs[0].Path != h.SyncSource.Path || srcs[0].TargetRevision != h.SyncSource.TargetBranch {
				t.Errorf("%s: syncs from %+v, want the sync source %+v", app.Name, srcs, want)
			}
			if h.SyncSource.RepoURL == "" && want.RepoURL != h.DrySource.RepoURL {
				t.Errorf("%s: sync repository %q, want the dry source's", app.Name, want.RepoURL)
			}
		}
	}
	if apps < 6 {
		t.Fatalf("only %d Applications on the page", apps)
	}
}

// TestSourceHydratorValidation refuses what Argo CD refuses: no sync
// branch, a sync path at the repository's root, hydrateTo without a
// branch, a source hydrator beside a source, and a dry source's refused
// fields, each named.
func TestSourceHydratorValidation(t *testing.T) {
	base := func() Application {
		return Application{
			ObjectMeta: metav1.ObjectMeta{Name: "hydrated"},
			Spec: ApplicationSpec{
				Destination: ApplicationDestination{Server: KubernetesInternalAPIServerAddr, Namespace: "apps"},
				SourceHydrator: &SourceHydrator{
					DrySource:  DrySource{RepoURL: "https://git.example.com/dry.git", TargetRevision: "HEAD", Path: "chart"},
					SyncSource: SyncSource{TargetBranch: "environments/dev", Path: "chart"},
				},
			},
		}
	}
	ok := base()
	if err := ok.Validate(); err != nil {
		t.Fatalf("valid app refused: %v", err)
	}
	for name, tc := range map[string]struct {
		edit func(*Application)
		want string
	}{
		"root path":          {func(a *Application) { a.Spec.SourceHydrator.SyncSource.Path = "." }, "spec.sourceHydrator.syncSource.path"},
		"empty path":         {func(a *Application) { a.Spec.SourceHydrator.SyncSource.Path = "" }, "spec.sourceHydrator.syncSource.path"},
		"climbing path":      {func(a *Application) { a.Spec.SourceHydrator.SyncSource.Path = "../x" }, "spec.sourceHydrator.syncSource.path"},
		"no branch":          {func(a *Application) { a.Spec.SourceHydrator.SyncSource.TargetBranch = "" }, "spec.sourceHydrator.syncSource.targetBranch"},
		"hydrateTo nameless": {func(a *Application) { a.Spec.SourceHydrator.HydrateTo = &HydrateTo{} }, "spec.sourceHydrator.hydrateTo.targetBranch"},
		"no dry repo":        {func(a *Application) { a.Spec.SourceHydrator.DrySource.RepoURL = "" }, "spec.sourceHydrator.drySource.repoURL"},
		"beside a source": {func(a *Application) {
			a.Spec.Source = &ApplicationSource{RepoURL: "https://git.example.com/other.git"}
		}, "spec.sourceHydrator"},
		"dry passCredentials": {func(a *Application) {
			a.Spec.SourceHydrator.DrySource.Helm = &ApplicationSourceHelm{PassCredentials: true}
		}, "spec.sourceHydrator.drySource.helm.passCredentials"},
	} {
		t.Run(name, func(t *testing.T) {
			app := base()
			tc.edit(&app)
			err := app.Validate()
			var ve *ValidationError
			if !errors.As(err, &ve) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("want a ValidationError naming %s, got %v", tc.want, err)
			}
		})
	}
}

// TestHydrateToSource: hydrateTo changes only the branch committed to;
// the app still syncs from syncSource's branch.
func TestHydrateToSource(t *testing.T) {
	h := SourceHydrator{
		DrySource:  DrySource{RepoURL: "https://git.example.com/dry.git", TargetRevision: "main", Path: "chart"},
		SyncSource: SyncSource{TargetBranch: "environments/dev", Path: "out", RepoURL: "https://git.example.com/deploy.git"},
		HydrateTo:  &HydrateTo{TargetBranch: "environments/dev-next"},
	}
	to := h.GetHydrateToSource()
	if to.RepoURL != "https://git.example.com/deploy.git" || to.Path != "out" || to.TargetRevision != "environments/dev-next" {
		t.Fatalf("hydrateTo source %+v", to)
	}
	sync := h.GetSyncSource()
	if sync.TargetRevision != "environments/dev" || sync.RepoURL != to.RepoURL {
		t.Fatalf("sync source %+v", sync)
	}
	h.HydrateTo = nil
	if got := h.GetHydrateToSource(); got != h.GetSyncSource() {
		t.Fatalf("without hydrateTo the commits go to the sync source, got %+v", got)
	}
}
