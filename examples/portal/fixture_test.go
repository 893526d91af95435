package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	gosync "sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/appstatus"
	"github.com/kubegitops/gitops/engine"
	"github.com/kubegitops/gitops/health"
	"github.com/kubegitops/gitops/internal/argodocs"
	"github.com/kubegitops/gitops/internal/gitserver"
	"github.com/kubegitops/gitops/internal/testfiles"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"
)

// The tokens of the fixture's users and what the policy gives them.
const (
	tokAdmin       = "admin-token-0123456789"   // admin everywhere, no secrets
	tokReaderA     = "reader-a-token-012345678" // readonly in team-a
	tokAdminA      = "admin-a-token-012345678"  // admin in team-a
	tokSecretAdmin = "secret-admin-token-0123"  // admin everywhere, reads secrets
	tokTwoGroups   = "two-groups-token-0123456" // erin: platform and freeze-a (argocd-rbac-cm tests)
	secretValue    = "hunter2-db-password"
)

const fixturePolicy = `rules:
  - group: platform
    role: admin
  - group: readers-a
    role: readonly
    projects: [team-a]
  - group: admins-a
    role: admin
    projects: [team-a]
  - group: secret-admins
    role: admin
    secrets: true
`

const fixtureTokens = `# token user groups
admin-token-0123456789 alice platform
reader-a-token-012345678 bob readers-a
admin-a-token-012345678 carol admins-a
secret-admin-token-0123 dave secret-admins
two-groups-token-0123456 erin platform,freeze-a
`

// fixtureProjects are the two projects of the fixture's apps.
const fixtureProjects = `apiVersion: argoproj.io/v1alpha1
kind: AppProject
metadata: {name: team-a}
spec:
  sourceRepos: ["*"]
  destinations: [{server: "*", namespace: "*"}]
---
apiVersion: argoproj.io/v1alpha1
kind: AppProject
metadata: {name: team-b}
spec:
  sourceRepos: ["*"]
  destinations: [{server: "*", namespace: "*"}]
`

// guestbookFiles is the Git repository of the fixture: a plain folder app
// with waves, a Secret, and a PreSync hook kept after it ran.
func guestbookFiles(message string) map[string][]byte {
	return map[string][]byte{
		"guestbook/configmap.yaml": []byte(`apiVersion: v1
kind: ConfigMap
metadata:
  name: guestbook-config
  annotations:
    argocd.argoproj.io/sync-wave: "0"
data:
  message: "` + message + `"
`),
		"guestbook/secret.yaml": []byte(`apiVersion: v1
kind: Secret
metadata:
  name: guestbook-db
  annotations:
    argocd.argoproj.io/sync-wave: "0"
stringData:
  password: ` + secretValue + `
`),
		"guestbook/deployment.yaml": []byte(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: guestbook
  annotations:
    argocd.argoproj.io/sync-wave: "1"
spec:
  replicas: 1
  selector:
    matchLabels: {app: guestbook}
  template:
    metadata:
      labels: {app: guestbook}
    spec:
      containers:
        - name: web
          image: registry.k8s.io/guestbook:v3
          envFrom:
            - configMapRef: {name: guestbook-config}
`),
		"guestbook/presync.yaml": []byte(`apiVersion: batch/v1
kind: Job
metadata:
  name: migrate
  annotations:
    argocd.argoproj.io/hook: PreSync
    argocd.argoproj.io/hook-delete-policy: BeforeHookCreation
spec:
  backoffLimit: 1
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: migrate
          image: busybox:1.36
          command: ["true"]
`),
		"other/configmap.yaml": []byte(`apiVersion: v1
kind: ConfigMap
metadata:
  name: other-config
data:
  team: b
`),
	}
}

// fixture is a portal over a real engine, cluster and Git server.
type fixture struct {
	t      *testing.T
	ns     string
	git    *gitserver.Server
	repo   string
	first  string // the first commit
	portal *portal
	http   *httptest.Server
	kube   kubernetes.Interface
	audit  *syncBuffer
	// log is what the portal reports outside requests.
	log *syncBuffer
	// appDir is the --apps folder; cfg what the portal was started with
	// (restart starts it again from both).
	appDir string
	cfg    portalConfig
}

// syncBuffer is an io.Writer safe for the audit log's writer and a test's
// reader.
type syncBuffer struct {
	mu gosync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// fixtureOptions change the fixture's authorisation.
type fixtureOptions struct {
	// RBACConfigMap, when set, is an argocd-rbac-cm manifest the portal
	// authorises with (as --rbac-cm) instead of the role file.
	RBACConfigMap string
	// RBACNamespace: RBACConfigMap is created in the test's namespace and
	// read from there, live (as --rbac-namespace).
	RBACNamespace bool
	// ClusterSecret: an Argo CD cluster Secret in the test's namespace
	// names the in-cluster address dev-east (as --cluster-secrets-namespace).
	ClusterSecret bool
	// Projects replaces fixtureProjects when set.
	Projects string
	// LiveProjects: Projects are created as AppProjects (Argo CD's CRD)
	// in the test's namespace and read from there, live (as
	// --projects-namespace).
	LiveProjects bool
	// SecretKey, when set with RBACNamespace, is argocd-secret's
	// server.secretkey in the test's namespace.
	SecretKey []byte
	// LogsFollowMax bounds a logs request (default: the portal's).
	LogsFollowMax time.Duration
	// GitAuthorEmail, when set, signs the Git server's commits.
	GitAuthorEmail string
	// AppDirFiles are more files of the --apps folder, by name; REPO and
	// NS in them are the Git repository's URL and the test's namespace.
	AppDirFiles map[string]string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	return newFixtureWith(t, fixtureOptions{})
}

func newFixtureWith(t *testing.T, fo fixtureOptions) *fixture {
	t.Helper()
	f := &fixture{t: t, ns: cluster.TestNamespace(t), audit: &syncBuffer{}, log: &syncBuffer{}}
	files := fstest.MapFS{}
	for p, b := range guestbookFiles("hello v1") {
		files[p] = &fstest.MapFile{Data: b}
	}
	gopts := gitserver.DefaultOptions()
	if fo.GitAuthorEmail != "" {
		gopts.AuthorEmail = fo.GitAuthorEmail
	}
	git, first := testfiles.GitRepo(t, gopts, "apps", files)
	f.git, f.first = git, first
	f.repo = git.RepoURL("apps")
	dir := t.TempDir()
	apps := fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: guestbook
  labels: {team: a}
spec:
  project: team-a
  source: {repoURL: %[1]s, targetRevision: main, path: guestbook}
  destination: {server: %[2]s, namespace: %[3]s}
---
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: other
  labels: {team: b}
spec:
  project: team-b
  source: {repoURL: %[1]s, targetRevision: main, path: other}
  destination: {server: %[2]s, namespace: %[3]s}
`, f.repo, v1alpha1.KubernetesInternalAPIServerAddr, f.ns)
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	appDir := filepath.Join(dir, "apps")
	if err := os.Mkdir(appDir, 0o700); err != nil {
		t.Fatal(err)
	}
	write("apps/apps.yaml", apps)
	for name, text := range fo.AppDirFiles {
		write(filepath.Join("apps", name), strings.NewReplacer("REPO", f.repo, "NS", f.ns).Replace(text))
	}
	loaded, err := loadAppsDir(appDir)
	if err != nil {
		t.Fatal(err)
	}
	loadedSets, err := loadAppSetsDir(appDir)
	if err != nil {
		t.Fatal(err)
	}
	pol, err := loadPolicy(write("policy.yaml", fixturePolicy))
	if err != nil {
		t.Fatal(err)
	}
	tokens, err := loadTokenFile(write("tokens.txt", fixtureTokens))
	if err != nil {
		t.Fatal(err)
	}
	f.kube, err = kubernetes.NewForConfig(cluster.Config())
	if err != nil {
		t.Fatal(err)
	}
	opts := gitops.DefaultOptions()
	opts.Clusters = []gitops.ClusterConfig{{Name: v1alpha1.KubernetesInClusterName, Server: v1alpha1.KubernetesInternalAPIServerAddr, Config: cluster.Config()}}
	opts.Tracking.InstanceID = "portal-" + f.ns
	if fo.Projects == "" {
		fo.Projects = fixtureProjects
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dyn, err := dynamic.NewForConfig(cluster.Config())
	if err != nil {
		t.Fatal(err)
	}
	var live *liveProjects
	var refusedProjects map[string]error
	if fo.LiveProjects {
		live = &liveProjects{ns: f.ns, dyn: dyn}
		f.createProjects(ctx, dyn, fo.Projects)
		if opts.Projects, refusedProjects, err = live.load(ctx); err != nil {
			t.Fatal(err)
		}
	} else if opts.Projects, err = gitops.LoadProjects(strings.NewReader(fo.Projects)); err != nil {
		t.Fatal(err)
	}
	if fo.ClusterSecret {
		sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "cluster-dev-east", Labels: map[string]string{engine.ClusterSecretTypeLabel: "cluster"}},
			StringData: map[string]string{"name": "dev-east", "server": v1alpha1.KubernetesInternalAPIServerAddr, "config": "{}"}}
		if _, err := f.kube.CoreV1().Secrets(f.ns).Create(ctx, sec, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		fromSecrets, err := loadClusterSecrets(ctx, f.kube, f.ns, cluster.Config())
		if err != nil {
			t.Fatal(err)
		}
		opts.Clusters = mergeClusters(opts.Clusters, fromSecrets)
	}
	var authz authorizer
	rbacNS := ""
	if fo.RBACNamespace {
		var cm corev1.ConfigMap
		if err := yaml.Unmarshal([]byte(fo.RBACConfigMap), &cm); err != nil {
			t.Fatal(err)
		}
		if _, err := f.kube.CoreV1().ConfigMaps(f.ns).Create(ctx, &cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if fo.SecretKey != nil {
			sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: argoCDSecretName}, Data: map[string][]byte{serverSecretKey: fo.SecretKey}}
			if _, err := f.kube.CoreV1().Secrets(f.ns).Create(ctx, sec, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		if authz, _, err = loadRBACNamespace(ctx, f.kube, f.ns, opts.Projects); err != nil {
			t.Fatal(err)
		}
		rbacNS = f.ns
	} else if fo.RBACConfigMap != "" {
		cfg, err := loadRBACConfigMap(write("argocd-rbac-cm.yaml", fo.RBACConfigMap))
		if err != nil {
			t.Fatal(err)
		}
		if authz, err = newArgoRBAC(cfg, opts.Projects); err != nil {
			t.Fatal(err)
		}
	}
	opts.Sync.PollInterval = 200 * time.Millisecond
	f.appDir = appDir
	f.cfg = portalConfig{Engine: opts, Apps: loaded, AppSets: loadedSets, AppsDir: appDir, Kube: f.kube, KubeConfig: cluster.Config(), KubeDynamic: dyn,
		Tokens: tokens, Policy: pol, Authz: authz, RBACNamespace: rbacNS, LiveProjects: live, RefusedProjects: refusedProjects,
		Audit: f.audit, LogsFollowMax: fo.LogsFollowMax, Log: f.log}
	f.portal, err = startPortal(context.Background(), f.cfg)
	if err != nil {
		t.Fatal(err)
	}
	f.http = httptest.NewServer(f.portal.srv)
	t.Cleanup(func() {
		f.http.CloseClientConnections() // event streams of a browser that did not close
		f.http.Close()
		f.portal.close()
	})
	f.waitStatus("guestbook", func(st appstatus.Status) bool { return st.Sync == appstatus.OutOfSync })
	return f
}

// appProjectCRD is Argo CD's AppProject CustomResourceDefinition, from its
// release (manifests/crds), as a cluster running Argo CD serves it.
func appProjectCRD(t *testing.T) string {
	t.Helper()
	return string(argodocs.ForTest(t).MustReadFile(t, "manifests/crds/appproject-crd.yaml"))
}

// createProjects installs Argo CD's AppProject CRD (kept for the other
// tests of the package) and creates the AppProjects of manifests (YAML
// documents) in the test's namespace.
func (f *fixture) createProjects(ctx context.Context, dyn dynamic.Interface, manifests string) {
	f.t.Helper()
	testfiles.EnsureCRD(f.t, cluster.Config(), appProjectCRD(f.t))
	for _, doc := range strings.Split(manifests, "\n---\n") {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			f.t.Fatal(err)
		}
		u.SetNamespace(f.ns)
		if _, err := dyn.Resource(appProjectsResource).Namespace(f.ns).Create(ctx, u, metav1.CreateOptions{}); err != nil {
			f.t.Fatalf("create AppProject %s: %v", u.GetName(), err)
		}
	}
}

// waitFor polls cond every 100 ms until it holds or the deadline passes;
// the failure says what was last seen.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	last := ""
	for {
		ok, seen := cond()
		if ok {
			return
		}
		last = seen
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s; last seen: %s", what, timeout, last)
		}
		<-tick.C
	}
}

func (f *fixture) waitStatus(app string, cond func(appstatus.Status) bool) appstatus.Status {
	f.t.Helper()
	var st appstatus.Status
	waitFor(f.t, 90*time.Second, "status of "+app, func() (bool, string) {
		var ok bool
		st, ok = f.portal.engine.Apps().AppStatus(v1alpha1.AppKey{Name: app})
		return ok && cond(st), fmt.Sprintf("%s %s %s %v", st.Sync, st.Health.Code, shortRev(st.Revision), st.Conditions)
	})
	return st
}

func syncedHealthy(st appstatus.Status) bool {
	return st.Sync == appstatus.Synced && st.Health.Code == health.Healthy
}

// call sends a request as token (none when empty) with the CSRF token
// (none when empty) and decodes a JSON answer.
func (f *fixture) call(method, path, token, csrf string, body any) (int, map[string]any, string) {
	f.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, f.http.URL+path, rd)
	if err != nil {
		f.t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if csrf != "" {
		req.Header.Set(csrfHeader, csrf)
	}
	resp, err := f.http.Client().Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return resp.StatusCode, out, string(raw)
}

// csrfOf asks the session endpoint for a bearer client's CSRF token.
func (f *fixture) csrfOf(token string) string {
	f.t.Helper()
	code, out, raw := f.call("GET", "/api/v1/session", token, "", nil)
	if code != http.StatusOK {
		f.t.Fatalf("session: %d %s", code, raw)
	}
	return out["csrfToken"].(string)
}

// syncAndWait syncs app through the API as token and waits for the
// operation to end and the app to be Synced and Healthy.
func (f *fixture) syncAndWait(app, token string) {
	f.t.Helper()
	code, _, raw := f.call("POST", "/api/v1/apps/"+app+"/sync", token, f.csrfOf(token), map[string]any{"prune": true})
	if code != http.StatusAccepted {
		f.t.Fatalf("sync %s: %d %s", app, code, raw)
	}
	f.waitOperation(app)
	f.waitStatus(app, syncedHealthy)
}

// waitOperation waits until no operation the portal started runs for app.
func (f *fixture) waitOperation(app string) {
	f.t.Helper()
	waitFor(f.t, 90*time.Second, "operation of "+app+" to end", func() (bool, string) {
		f.portal.srv.opsMu.Lock()
		_, busy := f.portal.srv.ops[app]
		f.portal.srv.opsMu.Unlock()
		return !busy, "running"
	})
}

// contains reports whether s holds sub, for readable assertions.
func contains(s, sub string) bool { return strings.Contains(s, sub) }

func jsonDecode(resp *http.Response, v any) error { return json.NewDecoder(resp.Body).Decode(v) }
