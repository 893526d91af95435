package main

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/internal/argodocs"
	"github.com/kubegitops/gitops/internal/chartserver"
	"github.com/kubegitops/gitops/internal/cloudfake"
	"github.com/kubegitops/gitops/internal/gitserver"
	"github.com/kubegitops/gitops/internal/lfsserver"
	"github.com/kubegitops/gitops/resource"
	"github.com/kubegitops/gitops/source/repocreds"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// tlsFront serves target over HTTPS (a certificate of httptest's CA,
// returned as PEM) through a reverse proxy; check, when set, answers a
// request itself (returning false) or lets it through, rewriting it.
func tlsFront(t *testing.T, target string, check func(w http.ResponseWriter, r *http.Request) bool) (host string, caPEM []byte) {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if check != nil && !check(w, r) {
			return
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "https://"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
}

// replaceNth replaces the n-th (from 1) occurrence of old in s.
func replaceNth(s, old, new string, n int) string {
	i := -1
	for range n {
		j := strings.Index(s[i+1:], old)
		if j < 0 {
			return s
		}
		i += j + 1
	}
	return s[:i] + new + s[i+len(old):]
}

// TestArgoCDRepositoryDocsLoadWholeAndSync: Argo CD's own
// argocd-repositories.yaml and argocd-repo-creds.yaml (docs/operator-manual
// of the v3.6.1 release), with only their URLs changed to local servers
// (and their namespace to the operator's), load whole, offline and in the
// operator, and the apps that use them sync through the operator:
//
//   - my-private-https-repo (password, bearer token, project,
//     insecure, forceHttpBasicAuth, enableLfs): a Git server over HTTPS
//     with a certificate no CA vouches for, that answers 404 without a
//     challenge unless it gets my-username/my-password, and serves a
//     manifest through Git LFS (git-lfs's own test server behind it);
//   - istio-helm-repo and private-helm-repo (chart repositories, the
//     second with basic auth);
//   - private-repo (no credentials of its own: argocd-repo-creds.yaml's
//     argoproj-https-creds template gives them);
//   - aci-private-repo (useAzureWorkloadIdentity, a scheme-less OCI URL):
//     the operator's workload identity at a fake Entra ID, exchanged at a
//     fake Azure Container Registry (a real registry behind ACR's flow);
//   - private-oci-repo (type oci, basic auth, project myproject) and the
//     template of the same name (both files name a Secret
//     private-oci-repo: applied in order, the template replaces the
//     repository, and its prefix still serves the repository's app).
//
// The Secrets whose keys are the docs' placeholders ("...") load too, and
// an app of the SSH one is refused naming the unreadable key.
func TestArgoCDRepositoryDocsLoadWholeAndSync(t *testing.T) {
	ctx := context.Background()
	rel := argodocs.ForTest(t)
	reposDoc := string(rel.MustReadFile(t, "docs/operator-manual/argocd-repositories.yaml"))
	credsDoc := string(rel.MustReadFile(t, "docs/operator-manual/argocd-repo-creds.yaml"))
	ns, dest := cluster.TestNamespace(t), cluster.TestNamespace(t)
	const user, pass = "my-username", "my-password"

	// my-private-https-repo: git-lfs's test server (Git and LFS) behind
	// an HTTPS front that wants the doc's basic credentials, first time.
	lfs := lfsserver.Start(t)
	lfsManifest := []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: from-lfs}\ndata: {stored: in-git-lfs}\n")
	lfs.CreateRepository(t, "argocd-example-apps", map[string][]byte{"app/cm.yaml": []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: example}\ndata: {a: b}\n")},
		map[string][]byte{"app/lfs.yaml": lfsManifest})
	httpsHost, _ := tlsFront(t, lfs.URL, func(w http.ResponseWriter, r *http.Request) bool {
		u, p, ok := r.BasicAuth()
		if !ok || subtle.ConstantTimeCompare([]byte(u+":"+p), []byte(user+":"+pass)) != 1 {
			http.Error(w, "Repository not found", http.StatusNotFound)
			return false
		}
		r.SetBasicAuth("user", "pass") // git-lfs's test server's own
		return true
	})
	// private-repo, read with the argoproj-https-creds template.
	gopts := gitserver.DefaultOptions()
	gopts.ReadUsername, gopts.ReadPassword, gopts.NoChallenge = user, pass, true
	gs, err := gitserver.Start(ctx, gopts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = gs.Close() })
	if _, err := gs.CreateRepository(ctx, "private-repo", fstest.MapFS{"app/cm.yaml": {Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: private}\ndata: {a: b}\n")}}); err != nil {
		t.Fatal(err)
	}
	istio := chartserver.New(t, chartserver.Options{})
	istio.Add(chartserver.WebChart(t, "web", "1.0.0"))
	private := chartserver.New(t, chartserver.Options{Username: user, Password: pass})
	private.Add(chartserver.WebChart(t, "web", "1.0.0"))
	// aci-private-repo.
	federated := filepath.Join(t.TempDir(), "azure-identity-token")
	if err := os.WriteFile(federated, []byte("federated-token"), 0o600); err != nil {
		t.Fatal(err)
	}
	entra := cloudfake.NewEntra(t, "tenant", "client", "federated-token", "")
	acr := cloudfake.NewACR(t, entra)
	acr.PushChart("charts", chartserver.WebChart(t, "web", "1.0.0"))
	for k, v := range map[string]string{"AZURE_CLIENT_ID": "client", "AZURE_TENANT_ID": "tenant", "AZURE_FEDERATED_TOKEN_FILE": federated, "AZURE_AUTHORITY_HOST": entra.URL} {
		t.Setenv(k, v)
	}
	// private-oci-repo: a registry with basic auth behind HTTPS.
	reg := chartserver.NewRegistry(t, user, pass)
	reg.Push("namespace/service", chartserver.WebChart(t, "web", "1.0.0"))
	reg.Push("namespace/other", chartserver.WebChart(t, "web", "1.0.0"))
	regHost, regCA := tlsFront(t, "http://"+reg.Host, nil)

	for old, new := range map[string]string{
		"https://github.com/argoproj/argocd-example-apps":                                        "https://" + httpsHost + "/argocd-example-apps.git",
		"ssh://git@github.com/argoproj/argocd-example-apps":                                      "ssh://git@127.0.0.1:1/argocd-example-apps",
		"https://storage.googleapis.com/istio-prerelease/daily-build/master-latest-daily/charts": istio.URL,
		"https://my-private-chart-repo.internal":                                                 private.URL,
		"https://github.com/argoproj/private-repo":                                               gs.RepoURL("private-repo"),
		"contoso.azurecr.io/charts":                                                              acr.Host + "/charts",
		"oci://my.registry.com/namespace/service":                                                "oci://" + regHost + "/namespace/service",
	} {
		if !strings.Contains(reposDoc, old) {
			t.Fatalf("argocd-repositories.yaml no longer names %s", old)
		}
		reposDoc = strings.ReplaceAll(reposDoc, old, new)
	}
	credsDoc = replaceNth(credsDoc, "url: https://github.com/argoproj\n", "url: "+gs.URL()+"\n", 1)
	credsDoc = replaceNth(credsDoc, "url: https://github.com/argoproj\n", "url: https://github.invalid/argoproj\n", 1)
	credsDoc = replaceNth(credsDoc, "url: https://github.com/argoproj\n", "url: https://ghe.invalid/argoproj\n", 1)
	credsDoc = strings.ReplaceAll(credsDoc, "git@github.com:argoproj-labs", "git@127.0.0.1:argoproj-labs")
	credsDoc = strings.ReplaceAll(credsDoc, "oci://my.registry.com/namespace", "oci://"+regHost+"/namespace")
	reposDoc = strings.ReplaceAll(reposDoc, "namespace: argocd\n", "namespace: "+ns+"\n")
	credsDoc = strings.ReplaceAll(credsDoc, "namespace: argocd\n", "namespace: "+ns+"\n")
	tlsCM := fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: argocd-tls-certs-cm, namespace: %s}\ndata:\n  127.0.0.1: |\n%s", ns,
		indent(string(acr.CAPEM)+string(regCA), "    "))

	// Offline: each file loads whole; only the repo-creds file's YAML
	// numbers (githubAppID: 1) are named, since the API server refuses
	// them.
	for name, doc := range map[string]string{"argocd-repositories.yaml": reposDoc, "argocd-repo-creds.yaml": credsDoc} {
		st, err := repocreds.Load(name, []byte(doc))
		if err != nil {
			t.Fatalf("%s does not load whole: %v", name, err)
		}
		repos, templates := st.Repositories()
		for _, w := range st.Warnings() {
			if !strings.Contains(w.Message, "API server refuses such a Secret") {
				t.Errorf("%s: unexpected warning %s", name, w)
			}
		}
		t.Logf("%s: %d repositories, %d templates, %d warnings", name, len(repos), len(templates), len(st.Warnings()))
		if name == "argocd-repositories.yaml" && len(repos) != 7 || name == "argocd-repo-creds.yaml" && len(templates) != 5 {
			t.Errorf("%s: %d repositories, %d templates", name, len(repos), len(templates))
		}
	}

	c := newArgoClient(t, cluster.Config())
	apply := func(doc string) {
		t.Helper()
		objs, err := resource.Decode("doc.yaml", []byte(doc), resource.DecodeOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range objs {
			err := c.Create(ctx, o.DeepCopy())
			if err != nil && strings.Contains(err.Error(), "already exists") {
				cur := &unstructured.Unstructured{}
				cur.SetGroupVersionKind(o.GroupVersionKind())
				if err = c.Get(ctx, client.ObjectKeyFromObject(o), cur); err == nil {
					o.SetResourceVersion(cur.GetResourceVersion())
					err = c.Update(ctx, o)
				}
			}
			if err != nil && strings.Contains(err.Error(), "stringData") {
				// Argo CD's example writes githubAppID: 1, a number the API
				// server refuses in stringData (kubectl apply fails the
				// same way): the only other change, the numbers quoted.
				t.Logf("the API server refuses %s as written (%v): applied with its numbers quoted", o.GetName(), err)
				sd, _ := o.Object["stringData"].(map[string]any)
				for k, v := range sd {
					sd[k] = fmt.Sprint(v)
				}
				err = c.Create(ctx, o)
			}
			if err != nil {
				t.Fatalf("apply %s/%s: %v", o.GetKind(), o.GetName(), err)
			}
		}
	}
	apply(tlsCM)
	apply(reposDoc)
	apply(credsDoc)
	startOperatorArgs(t, ns, "-interval", "5s", "-notifications=false")
	for _, p := range []string{"my-project", "myproject"} {
		proj := &v1alpha1.AppProject{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: p}, Spec: v1alpha1.AppProjectSpec{
			SourceRepos: []string{"*"}, Destinations: []v1alpha1.ApplicationDestination{{Server: "*", Namespace: "*"}}}}
		// The operator installs the CRDs: create once they are served.
		waitUntil(t, func() string { return "create AppProject " + p }, func(ctx context.Context) bool { return c.Create(ctx, proj.DeepCopy()) == nil })
	}

	apps := map[string]v1alpha1.ApplicationSource{
		"https-lfs":    {RepoURL: "https://" + httpsHost + "/argocd-example-apps.git", Path: "app", TargetRevision: "main"},
		"istio":        {RepoURL: istio.URL, Chart: "web", TargetRevision: "1.0.0"},
		"private-helm": {RepoURL: private.URL, Chart: "web", TargetRevision: "1.0.0"},
		"private-repo": {RepoURL: gs.RepoURL("private-repo"), Path: "app", TargetRevision: "main"},
		"aci":          {RepoURL: acr.Host + "/charts", Chart: "web", TargetRevision: "1.0.0"},
		"oci-service":  {RepoURL: "oci://" + regHost + "/namespace/service", Chart: "web", TargetRevision: "1.0.0"},
		"oci-other":    {RepoURL: "oci://" + regHost + "/namespace/other", Chart: "web", TargetRevision: "1.0.0"},
		"ssh":          {RepoURL: "ssh://git@127.0.0.1:1/argocd-example-apps", Path: "app", TargetRevision: "main"},
	}
	projects := map[string]string{"https-lfs": "my-project", "istio": "my-project", "oci-service": "myproject", "oci-other": "myproject", "ssh": "my-project"}
	for name, src := range apps {
		proj := projects[name]
		if proj == "" {
			proj = "default"
		}
		app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: v1alpha1.ApplicationSpec{
			Project: proj, Source: &src, Destination: v1alpha1.ApplicationDestination{Name: "in-cluster", Namespace: dest},
			SyncPolicy: &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{}}}}
		waitUntil(t, func() string { return "create Application " + name }, func(ctx context.Context) bool { return c.Create(ctx, app) == nil })
	}
	for name := range apps {
		got := &v1alpha1.Application{}
		if name == "ssh" {
			waitUntil(t, func() string { return fmt.Sprintf("ssh app refused naming its key: %+v", got.Status.Conditions) }, func(ctx context.Context) bool {
				if c.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, got) != nil {
					return false
				}
				for _, cond := range got.Status.Conditions {
					if strings.Contains(cond.Message, "unreadable SSH private key") {
						return true
					}
				}
				return false
			})
			continue
		}
		waitUntil(t, func() string { return fmt.Sprintf("app %s Synced: %+v", name, got.Status) }, func(ctx context.Context) bool {
			return c.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, got) == nil && got.Status.Sync.Status == "Synced" && len(got.Status.Conditions) == 0
		})
	}
	cm := &corev1.ConfigMap{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: dest, Name: "from-lfs"}, cm); err != nil || cm.Data["stored"] != "in-git-lfs" {
		t.Errorf("the LFS manifest deployed: %v %v", cm.Data, err)
	}
	// No Secret was left out: no InvalidRepositorySecret Event.
	var evs corev1.EventList
	if err := c.List(ctx, &evs, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs.Items {
		if ev.Reason == ReasonInvalidRepositorySecret {
			t.Errorf("a Secret was left out: %s %s", ev.InvolvedObject.Name, ev.Message)
		}
		if bytes.Contains([]byte(ev.Message), []byte(pass)) {
			t.Errorf("an Event holds a password: %s", ev.Message)
		}
	}
}

func indent(s, pad string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return pad + strings.Join(lines, "\n"+pad) + "\n"
}
