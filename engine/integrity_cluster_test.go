package engine

import (
	"context"
	"errors"
	"fmt"
	"github.com/kubegitops/gitops/appstatus"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/ProtonMail/go-crypto/openpgp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/internal/gitserver"
	"github.com/kubegitops/gitops/internal/testfiles"
	"github.com/kubegitops/gitops/sync"
)

func greeting(word string) []byte {
	return []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: greeting}\ndata: {word: " + word + "}\n")
}

// signedRepo is a repository on a real Git server that the test pushes
// signed and unsigned commits to, with a developer's go-git.
type signedRepo struct {
	url    string
	pusher *testfiles.GitPusher
}

func newSignedRepo(t *testing.T) *signedRepo {
	t.Helper()
	opts := gitserver.DefaultOptions()
	opts.PushUsername, opts.PushPassword = "dev", "push-secret"
	gs, _ := testfiles.GitRepo(t, opts, "signed", fstest.MapFS{"app/cm.yaml": {Data: greeting("initial")}})
	return &signedRepo{url: gs.RepoURL("signed"), pusher: testfiles.NewGitPusher(t, gs.RepoURL("signed"), "dev", "push-secret")}
}

func (r *signedRepo) push(word, author string, key *openpgp.Entity) string {
	return r.pusher.Commit(word, map[string][]byte{"app/cm.yaml": greeting(word)}, author, key)
}

func signingKeyID(e *openpgp.Entity) string {
	return e.Subkeys[len(e.Subkeys)-1].PublicKey.KeyIdString()
}

// integrityCondition is the app's ComparisonError about source integrity.
func integrityCondition(st appstatus.Status) string {
	for _, c := range st.Conditions {
		if c.Type == appstatus.ConditionComparisonError && strings.HasPrefix(c.Message, "GIT/GPG: ") {
			return c.Message
		}
	}
	return ""
}

// TestSourceIntegrityGatesSyncs: with a project whose sourceIntegrity
// trusts alice's and trent's keys (head mode), a commit signed by alice
// syncs; an unsigned one, one signed by mallory (in argocd-gpg-keys-cm,
// not in the project) and one signed by trent (in the project, not in
// argocd-gpg-keys-cm) each get Argo CD's ComparisonError at refresh and
// are refused by Sync, nothing written; once trent's key is added to the
// keys while the engine runs, his commit syncs, and so does a later one
// by alice. A sync pinned to the unsigned commit is refused: the check
// applies to the revision synced.
func TestSourceIntegrityGatesSyncs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := cluster.TestNamespace(t)
	repo := newSignedRepo(t)
	alice, mallory, trent := testfiles.GPGKey(t, "alice", "a@example.com"), testfiles.GPGKey(t, "mallory", "m@example.com"), testfiles.GPGKey(t, "trent", "t@example.com")
	keys := map[string]string{testfiles.GPGKeyID(alice): testfiles.GPGPublicKey(t, alice), testfiles.GPGKeyID(mallory): testfiles.GPGPublicKey(t, mallory)}
	proj := Project{ObjectMeta: metav1.ObjectMeta{Name: "signed"}, Spec: ProjectSpec{
		SourceRepos: []string{"*"}, Destinations: []ApplicationDestination{{Server: "*", Namespace: "*"}},
		SourceIntegrity: &v1alpha1.SourceIntegrity{Git: &v1alpha1.SourceIntegrityGit{Policies: []v1alpha1.SourceIntegrityGitPolicy{{
			Repos: []v1alpha1.SourceIntegrityGitPolicyRepo{{URL: repo.url}},
			GPG:   &v1alpha1.SourceIntegrityGitPolicyGPG{Mode: v1alpha1.SourceIntegrityGitPolicyGPGModeHead, Keys: []string{testfiles.GPGKeyID(alice), testfiles.GPGKeyID(trent)}},
		}}}},
	}}
	e := newEngine(t, func(o *Options) { o.Projects = []Project{proj}; o.GnuPGKeys = keys })
	app := gitApp("signed", repo.url, "main", ns)
	app.Spec.Project = "signed"
	live := func() string {
		cm, err := configMap(ns, "greeting")
		if err != nil {
			return ""
		}
		return cm.Data["word"]
	}
	syncs := func(word string) {
		t.Helper()
		if st, err := e.HardRefresh(ctx, app); err != nil || integrityCondition(st) != "" {
			t.Fatalf("%s: refresh %v, condition %q", word, err, integrityCondition(st))
		}
		if res, err := e.Sync(ctx, app, SyncRequest{}); err != nil || res.Phase != sync.Succeeded || live() != word {
			t.Fatalf("%s: sync %s %v, live %q", word, res.Phase, err, live())
		}
	}
	refused := func(word, want string, req SyncRequest) {
		t.Helper()
		st, err := e.HardRefresh(ctx, app)
		if err != nil || integrityCondition(st) != want || st.Sync != appstatus.OutOfSync {
			t.Fatalf("%s: refresh %v, sync %s, condition\n %q\nwant\n %q", word, err, st.Sync, integrityCondition(st), want)
		}
		res, err := e.Sync(ctx, app, req)
		var sie *SourceIntegrityError
		if !errors.As(err, &sie) || res.Phase != sync.Error || res.Message != "ComparisonError: "+want {
			t.Fatalf("%s: sync %s %q %v, want refused with %q", word, res.Phase, res.Message, err, want)
		}
		if got := live(); got == word {
			t.Fatalf("%s: the refused revision was applied", word)
		}
	}

	repo.push("by-alice", "alice", alice)
	syncs("by-alice")
	unsigned := repo.push("unsigned", "bob", nil)
	refused("unsigned", fmt.Sprintf("GIT/GPG: Failed verifying revision %s by 'bob <bob@example.com>': unsigned (key_id=)", unsigned), SyncRequest{})
	byMallory := repo.push("by-mallory", "mallory", mallory)
	refused("by-mallory", fmt.Sprintf("GIT/GPG: Failed verifying revision %s by 'mallory <mallory@example.com>': signed with unallowed key (key_id=%s)", byMallory, signingKeyID(mallory)), SyncRequest{})
	byTrent := repo.push("by-trent", "trent", trent)
	refused("by-trent", fmt.Sprintf("GIT/GPG: Failed verifying revision %s by 'trent <trent@example.com>': signed with key not in keyring (key_id=%s)", byTrent, signingKeyID(trent)), SyncRequest{})

	keys[testfiles.GPGKeyID(trent)] = testfiles.GPGPublicKey(t, trent)
	if err := e.Settings().SetGnuPGKeys(keys); err != nil {
		t.Fatal(err)
	}
	if got := e.Settings().GnuPGKeyIDs(); len(got) != 3 {
		t.Fatalf("keys %v", got)
	}
	syncs("by-trent")
	repo.push("by-alice-again", "alice", alice)
	syncs("by-alice-again")

	res, err := e.Sync(ctx, app, SyncRequest{Revisions: []string{unsigned}})
	if !errors.As(err, new(*SourceIntegrityError)) || res.Phase != sync.Error || !strings.Contains(res.Message, unsigned) || live() != "by-alice-again" {
		t.Fatalf("a sync pinned to the unsigned commit: %s %q %v, live %q", res.Phase, res.Message, err, live())
	}
	if last, err := e.LastOperation(ctx, v1alpha1.KeyOf(app)); err != nil || last == nil || last.Revision != unsigned || last.Phase != sync.Error {
		t.Errorf("the refused operation is recorded as %+v (%v)", last, err)
	}
}

// TestSourceIntegrityTagsAndSources: a target revision that is an
// annotated tag is verified by the tag's own signature; each source of a
// multi-source app is verified, and a failing one is named in Argo CD's
// words; signatureKeys alone verify every repository (head mode).
func TestSourceIntegrityTagsAndSources(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := cluster.TestNamespace(t)
	repo := newSignedRepo(t)
	alice := testfiles.GPGKey(t, "alice", "a@example.com")
	signed := repo.push("signed", "alice", alice)
	repo.pusher.Tag("v1-signed", "alice", alice)
	repo.pusher.Tag("v1-plain", "bob", nil)
	proj := Project{ObjectMeta: metav1.ObjectMeta{Name: "legacy"}, Spec: ProjectSpec{
		SourceRepos: []string{"*"}, Destinations: []ApplicationDestination{{Server: "*", Namespace: "*"}},
		SignatureKeys: []v1alpha1.SignatureKey{{KeyID: testfiles.GPGKeyID(alice)}},
	}}
	e := newEngine(t, func(o *Options) {
		o.Projects = []Project{proj}
		o.GnuPGKeys = map[string]string{testfiles.GPGKeyID(alice): testfiles.GPGPublicKey(t, alice)}
	})
	app := gitApp("tagged", repo.url, "v1-plain", ns)
	app.Spec.Project = "legacy"
	st, err := e.Refresh(ctx, app)
	want := "GIT/GPG: Failed verifying revision v1-plain by 'bob \"<bob@example.com>\"': unsigned (key_id=)"
	if err != nil || integrityCondition(st) != want || st.Revision != signed {
		t.Fatalf("unsigned tag of a signed commit: %v %q at %s, want %q", err, integrityCondition(st), st.Revision, want)
	}
	app.Spec.Source.TargetRevision = "v1-signed"
	if st, err := e.Refresh(ctx, app); err != nil || integrityCondition(st) != "" {
		t.Fatalf("signed tag: %v %q", err, integrityCondition(st))
	}
	if res, err := e.Sync(ctx, app, SyncRequest{}); err != nil || res.Phase != sync.Succeeded {
		t.Fatalf("signed tag: sync %s %v", res.Phase, err)
	}
	if cm, err := configMap(ns, "greeting"); err != nil || cm.Data["word"] != "signed" {
		t.Fatalf("signed tag: ConfigMap %v %v", cm, err)
	}

	unsigned := repo.push("unsigned", "bob", nil)
	multi := gitApp("multi", repo.url, "", ns)
	multi.Spec.Project = "legacy"
	multi.Spec.Source = nil
	multi.Spec.Sources = []ApplicationSource{
		{RepoURL: repo.url, Path: "app", TargetRevision: signed},
		{RepoURL: repo.url, TargetRevision: unsigned, Ref: "values"},
	}
	st, err = e.Refresh(ctx, multi)
	want = fmt.Sprintf("GIT/GPG: source 2 of 2: Failed verifying revision %s by 'bob <bob@example.com>': unsigned (key_id=)", unsigned)
	if err != nil || integrityCondition(st) != want {
		t.Fatalf("multi-source: %v %q, want %q", err, integrityCondition(st), want)
	}
	if res, err := e.Sync(ctx, multi, SyncRequest{}); !errors.As(err, new(*SourceIntegrityError)) || res.Phase != sync.Error {
		t.Fatalf("multi-source sync: %s %v", res.Phase, err)
	}
}

// configMap reads a live ConfigMap.
func configMap(ns, name string) (*corev1.ConfigMap, error) {
	kube, err := kubernetes.NewForConfig(cluster.Config())
	if err != nil {
		return nil, err
	}
	return kube.CoreV1().ConfigMaps(ns).Get(context.Background(), name, metav1.GetOptions{})
}

// TestProjectScopedClusters: the clusters scoped to a project are its
// implicit destinations, and with permitOnlyProjectScopedClusters its apps
// may use those only, refused elsewhere with Argo CD's message.
func TestProjectScopedClusters(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := cluster.TestNamespace(t)
	dir := repoDir(t, map[string]string{"app/cm.yaml": string(greeting("scoped"))})
	strict := Project{ObjectMeta: metav1.ObjectMeta{Name: "strict"}, Spec: ProjectSpec{
		SourceRepos: []string{"*"}, Destinations: []ApplicationDestination{{Server: "*", Namespace: "*"}}, PermitOnlyProjectScopedClusters: true,
	}}
	implicit := Project{ObjectMeta: metav1.ObjectMeta{Name: "implicit"}, Spec: ProjectSpec{SourceRepos: []string{"*"}}}
	e := newEngine(t, func(o *Options) {
		o.Projects = []Project{strict, implicit}
		o.Clusters = append(o.Clusters,
			ClusterConfig{Name: "strict-cluster", Server: "https://strict.example", Config: cluster.Config(), Project: "strict"},
			ClusterConfig{Name: "team-cluster", Server: "https://team.example", Config: cluster.Config(), Project: "implicit", Namespaces: []string{ns}})
	})
	app := func(project, clusterName string) *Application {
		a := dirApp(project+"-"+clusterName, dir, ns)
		a.Spec.Project = project
		a.Spec.Destination = ApplicationDestination{Name: clusterName, Namespace: ns}
		return a
	}
	for _, c := range []struct {
		app  *Application
		want string // "" = synced
	}{
		{app("strict", "strict-cluster"), ""},
		{app("strict", "in-cluster"), "application destination server 'in-cluster' and namespace '" + ns + "' do not match any of the allowed destinations in project 'strict'"},
		{app("implicit", "team-cluster"), ""},
		{app("implicit", "in-cluster"), "application destination server 'in-cluster' and namespace '" + ns + "' do not match any of the allowed destinations in project 'implicit'"},
	} {
		st, err := e.Refresh(ctx, c.app)
		if c.want == "" {
			if err != nil {
				t.Fatalf("%s: %v", c.app.Name, err)
			}
			if res, err := e.Sync(ctx, c.app, SyncRequest{}); err != nil || res.Phase != sync.Succeeded {
				t.Fatalf("%s: sync %s %v", c.app.Name, res.Phase, err)
			}
			continue
		}
		var pe *PolicyError
		if !errors.As(err, &pe) || len(st.Conditions) != 1 || st.Conditions[0].Type != appstatus.ConditionInvalidSpec || st.Conditions[0].Message != c.want {
			t.Fatalf("%s: %v, conditions %+v, want InvalidSpecError %q", c.app.Name, err, st.Conditions, c.want)
		}
		if res, err := e.Sync(ctx, c.app, SyncRequest{}); !errors.As(err, &pe) || res.Phase != sync.Error {
			t.Fatalf("%s: sync %s %v, want refused", c.app.Name, res.Phase, err)
		}
	}
	// A destination is matched as the cluster it names: a project that
	// lists in-cluster by server admits an app that names it, and one
	// listing it by name an app that gives its server.
	byServer := Project{ObjectMeta: metav1.ObjectMeta{Name: "by-server"}, Spec: ProjectSpec{SourceRepos: []string{"*"},
		Destinations: []ApplicationDestination{{Server: v1alpha1.KubernetesInternalAPIServerAddr, Namespace: ns}}}}
	byName := Project{ObjectMeta: metav1.ObjectMeta{Name: "by-name"}, Spec: ProjectSpec{SourceRepos: []string{"*"},
		Destinations: []ApplicationDestination{{Name: v1alpha1.KubernetesInClusterName, Namespace: ns}}}}
	e.Settings().SetProjects([]Project{strict, implicit, byServer, byName}, nil)
	named := app("by-server", "in-cluster")
	served := app("by-name", "in-cluster")
	served.Spec.Destination = ApplicationDestination{Server: v1alpha1.KubernetesInternalAPIServerAddr, Namespace: ns}
	for _, a := range []*Application{named, served} {
		if _, err := e.Refresh(ctx, a); err != nil {
			t.Errorf("%s: %v", a.Name, err)
		}
		if res, err := e.Sync(ctx, a, SyncRequest{}); err != nil || res.Phase != sync.Succeeded {
			t.Errorf("%s: sync %s %v", a.Name, res.Phase, err)
		}
	}
	// Another namespace of the cluster scoped to "implicit" is not among
	// its namespaces.
	other := app("implicit", "team-cluster")
	other.Spec.Destination.Namespace = "elsewhere"
	if _, err := e.Refresh(ctx, other); !errors.As(err, new(*PolicyError)) {
		t.Fatalf("a namespace the scoped cluster does not list: %v", err)
	}
}
