package hydrator_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/appstatus"
	"github.com/kubegitops/gitops/hydrator"
	"github.com/kubegitops/gitops/internal/gitserver"
	"github.com/kubegitops/gitops/internal/reftools"
	"github.com/kubegitops/gitops/internal/testfiles"
	"github.com/kubegitops/gitops/internal/testfiles/testengine"
	"github.com/kubegitops/gitops/resource"
	"github.com/kubegitops/gitops/source"
	gitsrc "github.com/kubegitops/gitops/source/git"
)

// The dry source: a Helm chart whose values carry a comment.
var chartFiles = map[string]string{
	"chart/Chart.yaml":  "apiVersion: v2\nname: greeter\nversion: 0.1.0\n",
	"chart/values.yaml": "# the greeting\ngreeting: hello\nreplicas: 1\n",
	"chart/templates/configmap.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-greeting
  labels:
    chart: {{ .Chart.Name }}-{{ .Chart.Version }}
data:
  greeting: {{ .Values.greeting | quote }}
`,
	"chart/templates/secretless.yaml": `apiVersion: v1
kind: ServiceAccount
metadata:
  name: {{ .Release.Name }}
`,
}

const pushUser, pushPassword = "hydrator", "write-secret"

type fixture struct {
	gs   *gitserver.Server
	url  string
	eng  *gitops.Engine
	src  *gitsrc.Source
	ns   string
	kube kubernetes.Interface
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	opts := gitserver.DefaultOptions()
	opts.PushUsername, opts.PushPassword = pushUser, pushPassword
	gs := testfiles.GitServer(t, opts)
	files := fstest.MapFS{}
	for name, data := range chartFiles {
		files[name] = &fstest.MapFile{Data: []byte(data)}
	}
	ctx := context.Background()
	if _, err := gs.CreateRepository(ctx, "deploy", files); err != nil {
		t.Fatal(err)
	}
	eng := testengine.New(t, cluster.Config(), nil)
	src, err := eng.Sources().Source(gs.RepoURL("deploy"))
	if err != nil {
		t.Fatal(err)
	}
	kube, err := kubernetes.NewForConfig(cluster.Config())
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{gs: gs, url: gs.RepoURL("deploy"), eng: eng, src: src.(*gitsrc.Source), ns: cluster.TestNamespace(t), kube: kube}
}

// app hydrates the chart to path on branch env/dev.
func (f *fixture) app(name, path string) *v1alpha1.Application {
	a := &v1alpha1.Application{Spec: v1alpha1.ApplicationSpec{
		SourceHydrator: &v1alpha1.SourceHydrator{
			DrySource:  v1alpha1.DrySource{RepoURL: f.url, TargetRevision: "HEAD", Path: "chart"},
			SyncSource: v1alpha1.SyncSource{TargetBranch: "env/dev", Path: path},
		},
		Destination: v1alpha1.ApplicationDestination{Server: v1alpha1.KubernetesInternalAPIServerAddr, Namespace: f.ns},
	}}
	a.Name, a.Namespace = name, "argocd"
	return a
}

func (f *fixture) hydrator(t *testing.T, creds bool) *hydrator.Hydrator {
	t.Helper()
	opts := hydrator.DefaultOptions()
	opts.Git = f.src
	opts.WriteCredentials = func(project, repoURL string) *source.Credentials {
		if !creds {
			return nil
		}
		return &source.Credentials{Username: pushUser, Password: pushPassword}
	}
	h, err := hydrator.New(f.eng, opts)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func (f *fixture) git(t *testing.T, args ...string) string {
	t.Helper()
	out, err := f.gs.Git(context.Background(), "deploy", args...)
	if err != nil {
		t.Fatalf("git %v: %v", args, err)
	}
	return out
}

// hydrate runs one hydration of app as a host does: Begin, Hydrate,
// Finish.
func hydrate(t *testing.T, h *hydrator.Hydrator, apps ...*v1alpha1.Application) hydrator.Outcome {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, a := range apps {
		hydrator.Begin(a, time.Now())
		if a.Status.SourceHydrator.CurrentOperation.Phase != v1alpha1.HydrateOperationPhaseHydrating {
			t.Fatalf("Begin: phase %s", a.Status.SourceHydrator.CurrentOperation.Phase)
		}
	}
	groups := hydrator.Groups(apps)
	if len(groups) != 1 {
		t.Fatalf("%d groups, want 1", len(groups))
	}
	o := h.Hydrate(ctx, groups[0])
	for _, a := range apps {
		hydrator.Finish(a, o, time.Now())
	}
	return o
}

// helmTemplate runs the reference helm on the chart as the dry commit has
// it.
func helmTemplate(t *testing.T, release, ns string, files map[string]string) []*unstructured.Unstructured {
	t.Helper()
	dir := t.TempDir()
	for name, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bin := reftools.ForTest(t, reftools.Helm)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // running helm, not building it
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "template", release, filepath.Join(dir, "chart"), "--namespace", ns)
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+t.TempDir(), "HELM_CONFIG_HOME="+t.TempDir(), "HELM_DATA_HOME="+t.TempDir())
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("helm template: %v", err)
	}
	objs, err := resource.Decode("helm template", out, resource.DecodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// A dry commit to a Helm chart makes one hydrated commit on the sync
// branch with Argo CD's layout, whose manifest.yaml is helm template's
// output; the app syncs from it; a dry commit changing only a comment
// makes no commit (the note moves to the new dry commit); a change of a
// value makes the next commit on top.
func TestHelmChartHydratesSyncsAndSkipsCommentCommits(t *testing.T) {
	f := newFixture(t)
	h := f.hydrator(t, true)
	app := f.app("greeter", "envs/dev")
	dry1, err := f.gs.Head(context.Background(), "deploy")
	if err != nil {
		t.Fatal(err)
	}

	o := hydrate(t, h, app)
	if o.Err != nil || !o.Committed || o.DrySHA != dry1 || o.HydratedSHA == "" {
		t.Fatalf("first hydration: %+v", o)
	}
	if tip := f.git(t, "rev-parse", "refs/heads/env/dev"); tip != o.HydratedSHA {
		t.Fatalf("env/dev at %s, want the hydrated commit %s", tip, o.HydratedSHA)
	}
	// One commit on the branch Argo CD creates for it (an empty first one).
	if n := f.git(t, "rev-list", "--count", "env/dev"); n != "2" {
		t.Errorf("env/dev has %s commits, want the initial one and the hydrated one", n)
	}
	files := strings.Fields(f.git(t, "ls-tree", "-r", "--name-only", "env/dev"))
	wantFiles := []string{".gitattributes", "envs/dev/README.md", "envs/dev/hydrator.metadata", "envs/dev/manifest.yaml", "hydrator.metadata"}
	if strings.Join(files, " ") != strings.Join(wantFiles, " ") {
		t.Errorf("hydrated tree %v, want %v", files, wantFiles)
	}

	manifest := f.git(t, "show", "env/dev:envs/dev/manifest.yaml")
	got, err := resource.Decode("manifest.yaml", []byte(manifest), resource.DecodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := helmTemplate(t, "greeter", f.ns, chartFiles)
	if len(got) != len(want) {
		t.Fatalf("manifest.yaml holds %d objects, helm template printed %d:\n%s", len(got), len(want), manifest)
	}
	for i := range want {
		if !equality.Semantic.DeepEqual(want[i].Object, got[i].Object) {
			t.Errorf("object %d: manifest.yaml %v, helm template %v", i, got[i].Object, want[i].Object)
		}
	}
	if !strings.Contains(manifest, "\n---\n") || !strings.HasPrefix(manifest, "apiVersion: ") {
		t.Errorf("manifest.yaml is not YAML documents separated by ---:\n%s", manifest)
	}

	var pathMeta, rootMeta map[string]any
	if err := json.Unmarshal([]byte(f.git(t, "show", "env/dev:envs/dev/hydrator.metadata")), &pathMeta); err != nil {
		t.Fatal(err)
	}
	if pathMeta["repoURL"] != f.url || pathMeta["drySha"] != dry1 || len(pathMeta) != 2 {
		t.Errorf("envs/dev/hydrator.metadata %v", pathMeta)
	}
	if err := json.Unmarshal([]byte(f.git(t, "show", "env/dev:hydrator.metadata")), &rootMeta); err != nil {
		t.Fatal(err)
	}
	if rootMeta["drySha"] != dry1 || rootMeta["subject"] != "initial commit" || rootMeta["author"] != "gitops demo <demo@gitops.invalid>" || rootMeta["date"] == nil {
		t.Errorf("root hydrator.metadata %v", rootMeta)
	}
	if readme := f.git(t, "show", "env/dev:envs/dev/README.md"); !strings.Contains(readme, "git clone "+f.url) || !strings.Contains(readme, "git checkout "+dry1) {
		t.Errorf("README.md:\n%s", readme)
	}
	if msg := f.git(t, "log", "-1", "--format=%an <%ae>%n%B", "env/dev"); !strings.HasPrefix(msg, "Argo CD <argo-cd@example.com>\n"+dry1[:7]+": initial commit\n") ||
		!strings.Contains(msg, "Co-authored-by: gitops demo <demo@gitops.invalid>") {
		t.Errorf("hydrated commit:\n%s", msg)
	}
	if note := f.git(t, "notes", "--ref", "hydrator.metadata", "show", o.HydratedSHA); note != `{"drySha":"`+dry1+`"}` {
		t.Errorf("note %q", note)
	}

	// status.sourceHydrator as Argo CD has it.
	st := app.Status.SourceHydrator
	if cur := st.CurrentOperation; cur.Phase != v1alpha1.HydrateOperationPhaseHydrated || cur.DrySHA != dry1 || cur.HydratedSHA != o.HydratedSHA ||
		cur.FinishedAt == nil || cur.Message != "" || st.LastSuccessfulOperation == nil || st.LastSuccessfulOperation.HydratedSHA != o.HydratedSHA ||
		st.LastComparedDryRevision != dry1 {
		t.Errorf("status.sourceHydrator %+v", st)
	}

	// The app syncs from the hydrated branch.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	f.eng.Apps().Invalidate(f.url)
	if _, err := f.eng.Sync(ctx, app, gitops.SyncRequest{}); err != nil {
		t.Fatal(err)
	}
	cm, err := f.kube.CoreV1().ConfigMaps(f.ns).Get(ctx, "greeter-greeting", metav1.GetOptions{})
	if err != nil || cm.Data["greeting"] != "hello" {
		t.Fatalf("synced ConfigMap %v, %v", cm, err)
	}
	testengine.RefreshUntil(t, f.eng, app, "synced at the hydrated commit", func(s appstatus.Status) bool {
		return s.Sync == appstatus.Synced && s.Revision == o.HydratedSHA
	})

	// A comment-only dry commit: rendered output is byte-equal, no commit.
	dry2, err := f.gs.Commit(ctx, "deploy", "reword a comment", map[string][]byte{"chart/values.yaml": []byte("# the greeting, reworded\ngreeting: hello\nreplicas: 1\n")})
	if err != nil {
		t.Fatal(err)
	}
	f.eng.Apps().Invalidate(f.url)
	o2 := hydrate(t, h, app)
	if o2.Err != nil || o2.Committed || o2.DrySHA != dry2 || o2.HydratedSHA != o.HydratedSHA {
		t.Fatalf("comment-only hydration: %+v, want no commit and %s", o2, o.HydratedSHA)
	}
	if tip := f.git(t, "rev-parse", "refs/heads/env/dev"); tip != o.HydratedSHA {
		t.Fatalf("env/dev moved to %s on a comment-only dry commit", tip)
	}
	if note := f.git(t, "notes", "--ref", "hydrator.metadata", "show", o.HydratedSHA); note != `{"drySha":"`+dry2+`"}` {
		t.Errorf("note after the comment-only commit %q, want the new dry commit", note)
	}
	// Asked again for the same dry commit: nothing rendered changes and
	// nothing is pushed.
	o3 := hydrate(t, h, app)
	if o3.Err != nil || o3.Committed || !o3.AlreadyHydrated || o3.HydratedSHA != o.HydratedSHA {
		t.Fatalf("repeated hydration: %+v", o3)
	}

	// A value changes: the next hydrated commit, on top of the first.
	dry3, err := f.gs.Commit(ctx, "deploy", "say hi\n\nA friendlier greeting.", map[string][]byte{"chart/values.yaml": []byte("greeting: hi\nreplicas: 1\n")})
	if err != nil {
		t.Fatal(err)
	}
	f.eng.Apps().Invalidate(f.url)
	o4 := hydrate(t, h, app)
	if o4.Err != nil || !o4.Committed || o4.DrySHA != dry3 {
		t.Fatalf("value change: %+v", o4)
	}
	if parent := f.git(t, "rev-parse", o4.HydratedSHA+"^"); parent != o.HydratedSHA {
		t.Errorf("hydrated commit's parent %s, want %s", parent, o.HydratedSHA)
	}
	if msg := f.git(t, "log", "-1", "--format=%B", o4.HydratedSHA); !strings.HasPrefix(msg, dry3[:7]+": say hi\n\nA friendlier greeting.\n") {
		t.Errorf("message %q", msg)
	}
	f.eng.Apps().Invalidate(f.url)
	if _, err := f.eng.Sync(ctx, app, gitops.SyncRequest{}); err != nil {
		t.Fatal(err)
	}
	if cm, err := f.kube.CoreV1().ConfigMaps(f.ns).Get(ctx, "greeter-greeting", metav1.GetOptions{}); err != nil || cm.Data["greeting"] != "hi" {
		t.Fatalf("synced ConfigMap after the change %v, %v", cm, err)
	}
}

// Without a repository-write Secret the push fails, and the status says
// so: repository (read) Secrets never push.
func TestPushWithoutWriteCredentialsFails(t *testing.T) {
	f := newFixture(t)
	app := f.app("nowrite", "envs/dev")
	o := hydrate(t, f.hydrator(t, false), app)
	var nw *hydrator.NoWriteCredentialsError
	if !errors.As(o.Err, &nw) {
		t.Fatalf("outcome %+v, want a NoWriteCredentialsError", o)
	}
	cur := app.Status.SourceHydrator.CurrentOperation
	if cur.Phase != v1alpha1.HydrateOperationPhaseFailed || !strings.HasPrefix(cur.Message, "Failed to hydrate: ") ||
		!strings.Contains(cur.Message, "repository-write") || strings.Contains(cur.Message, pushPassword) {
		t.Errorf("status %+v", cur)
	}
	if app.Status.SourceHydrator.LastSuccessfulOperation != nil {
		t.Errorf("a failed hydration recorded as successful")
	}
	if _, err := f.gs.Git(context.Background(), "deploy", "rev-parse", "--verify", "refs/heads/env/dev"); err == nil {
		t.Errorf("env/dev exists after a refused push")
	}
}

// Two apps of one dry commit and one branch are hydrated in one commit;
// two apps on one path, or one on the root, are refused by name.
func TestGroupOneCommitAndRefusals(t *testing.T) {
	f := newFixture(t)
	h := f.hydrator(t, true)
	dev, prod := f.app("dev", "envs/dev"), f.app("prod", "envs/prod")
	o := hydrate(t, h, dev, prod)
	if o.Err != nil || !o.Committed || o.Renders != 2 {
		t.Fatalf("outcome %+v", o)
	}
	files := f.git(t, "ls-tree", "-r", "--name-only", "env/dev")
	if !strings.Contains(files, "envs/dev/manifest.yaml") || !strings.Contains(files, "envs/prod/manifest.yaml") {
		t.Errorf("one commit should hold both apps: %s", files)
	}
	if n := f.git(t, "rev-list", "--count", "env/dev"); n != "2" {
		t.Errorf("env/dev has %s commits, want 2", n)
	}

	a, b, root := f.app("a", "envs/same"), f.app("b", "envs/same/"), f.app("root", ".")
	o = hydrate(t, h, a, b)
	if o.Err == nil || !strings.Contains(o.ErrorFor(v1alpha1.KeyOf(a)).Error(), "same destination") || a.Status.SourceHydrator.CurrentOperation.Phase != v1alpha1.HydrateOperationPhaseFailed {
		t.Errorf("two apps on one path: %+v", o)
	}
	o = hydrate(t, h, root)
	if o.Err == nil || !strings.Contains(o.ErrorFor(v1alpha1.KeyOf(root)).Error(), "repository root") {
		t.Errorf("root path: %+v", o)
	}
}
