package repocreds_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/kubegitops/gitops/internal/chartserver"
	"github.com/kubegitops/gitops/internal/cloudfake"
	"github.com/kubegitops/gitops/internal/gitserver"
	"github.com/kubegitops/gitops/source"
	"github.com/kubegitops/gitops/source/git"
	"github.com/kubegitops/gitops/source/helmrepo"
	"github.com/kubegitops/gitops/source/repocreds"
)

// startGit starts a real Git server with opts and one repository "app".
func startGit(t *testing.T, opts gitserver.Options) *gitserver.Server {
	t.Helper()
	ctx := context.Background()
	gs, err := gitserver.Start(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = gs.Close() })
	if _, err := gs.CreateRepository(ctx, "app", fstest.MapFS{"cm.yaml": {Data: []byte("kind: ConfigMap\n")}}); err != nil {
		t.Fatal(err)
	}
	return gs
}

// readGit resolves main and reads cm.yaml with creds through a new Git
// source.
func readGit(t *testing.T, url string, creds *source.Credentials) error {
	t.Helper()
	opts := git.DefaultOptions()
	opts.CacheDir = t.TempDir()
	src, err := git.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	repo := source.Repository{URL: url, Credentials: creds}
	rev, err := src.Resolve(context.Background(), repo, "main")
	if err != nil {
		return err
	}
	snap, err := src.Snapshot(context.Background(), repo, rev)
	if err != nil {
		return err
	}
	if _, err := snap.(interface{ ReadFile(string) ([]byte, error) }).ReadFile("cm.yaml"); err != nil {
		return err
	}
	return nil
}

func repoSecret(name, typ string, fields map[string]string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: v1\nkind: Secret\nmetadata:\n  name: %s\n  namespace: argocd\n  labels: {argocd.argoproj.io/secret-type: %s}\nstringData:\n", name, typ)
	for k, v := range fields {
		fmt.Fprintf(&b, "  %s: %q\n", k, v)
	}
	return b.String()
}

func load(t *testing.T, opts repocreds.Options, docs ...string) *repocreds.Store {
	t.Helper()
	s, err := repocreds.LoadWith("repos.yaml", []byte(strings.Join(docs, "---\n")), opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// forceHttpBasicAuth: a Git server that answers anonymous (and
// wrongly-authenticated) requests with 404 and no challenge, as GitHub
// does for private repositories, is read with the Secret's user and
// password although it also holds a bearer token (which Argo CD would
// otherwise send), and the very first request carries them.
func TestForceHTTPBasicAuthWithoutChallenge(t *testing.T) {
	gs := startGit(t, gitserver.Options{ReadUsername: "my-username", ReadPassword: "my-password", NoChallenge: true})
	fields := map[string]string{"url": gs.RepoURL("app"), "username": "my-username", "password": "my-password", "bearerToken": "my-token"}
	plain := load(t, repocreds.DefaultOptions(), repoSecret("basic", "repository", fields)).For(gs.RepoURL("app"))
	if err := readGit(t, gs.RepoURL("app"), plain); !errors.Is(err, source.ErrRepositoryNotFound) {
		t.Fatalf("without forceHttpBasicAuth the bearer token goes and the server answers 404: %v", err)
	}
	fields["forceHttpBasicAuth"] = "true"
	store := load(t, repocreds.DefaultOptions(), repoSecret("basic", "repository", fields))
	if len(store.Warnings()) != 0 {
		t.Errorf("warnings: %v", store.Warnings())
	}
	before := gs.AnonymousRequests()
	if err := readGit(t, gs.RepoURL("app"), store.For(gs.RepoURL("app"))); err != nil {
		t.Fatalf("forceHttpBasicAuth: %v", err)
	}
	if n := gs.AnonymousRequests() - before; n != 0 {
		t.Errorf("%d requests went without credentials, want every one to carry them", n)
	}
}

// insecure: "true" reads a Git server whose certificate no CA vouches
// for; without it the handshake is refused.
func TestInsecureSkipsTLSVerification(t *testing.T) {
	gs := startGit(t, gitserver.Options{TLS: true, ReadUsername: "u", ReadPassword: "p"})
	fields := map[string]string{"url": gs.RepoURL("app"), "username": "u", "password": "p"}
	if err := readGit(t, gs.RepoURL("app"), load(t, repocreds.DefaultOptions(), repoSecret("r", "repository", fields)).For(gs.RepoURL("app"))); err == nil ||
		!strings.Contains(err.Error(), "certificate") {
		t.Fatalf("an unverified certificate was accepted without insecure: %v", err)
	}
	fields["insecure"] = "true"
	if err := readGit(t, gs.RepoURL("app"), load(t, repocreds.DefaultOptions(), repoSecret("r", "repository", fields)).For(gs.RepoURL("app"))); err != nil {
		t.Fatalf("insecure: %v", err)
	}
}

// proxy and noProxy of a repo-creds template: the Git source goes through
// the template's forward proxy (a real one that counts what it forwards),
// and not when noProxy lists the host.
func TestTemplateProxyAndNoProxy(t *testing.T) {
	gs := startGit(t, gitserver.Options{ReadUsername: "u", ReadPassword: "p"})
	proxy := chartserver.NewProxy(t)
	tmpl := map[string]string{"url": gs.URL(), "username": "u", "password": "p", "proxy": proxy.URL}
	via := load(t, repocreds.DefaultOptions(), repoSecret("t", "repo-creds", tmpl)).For(gs.RepoURL("app"))
	if err := readGit(t, gs.RepoURL("app"), via); err != nil || proxy.Forwards() < 2 {
		t.Fatalf("through the template's proxy: %v, %d forwarded", err, proxy.Forwards())
	}
	n := proxy.Forwards()
	tmpl["noProxy"] = "127.0.0.1"
	direct := load(t, repocreds.DefaultOptions(), repoSecret("t", "repo-creds", tmpl)).For(gs.RepoURL("app"))
	if err := readGit(t, gs.RepoURL("app"), direct); err != nil || proxy.Forwards() != n {
		t.Fatalf("noProxy: %v, the proxy forwarded %d more", err, proxy.Forwards()-n)
	}
}

// azureIdentity writes a federated token file and returns the Options of
// a process with that workload identity at entra.
func azureIdentity(t *testing.T, entra *cloudfake.Entra, federated string) repocreds.Options {
	t.Helper()
	file := filepath.Join(t.TempDir(), "azure-identity-token")
	if err := os.WriteFile(file, []byte(federated), 0o600); err != nil {
		t.Fatal(err)
	}
	opts := repocreds.DefaultOptions()
	opts.Azure = repocreds.AzureWorkloadIdentity{ClientID: "client-1", TenantID: "tenant-1", TokenFile: file, AuthorityHost: entra.URL}
	return opts
}

// useAzureWorkloadIdentity on a Git repository: the process's federated
// token is exchanged at Entra ID for a token of Azure DevOps, sent as the
// bearer token; it is reused while valid, refreshed when it would expire
// within 5 minutes, never printed, and a rotated federated token is read
// again.
func TestAzureWorkloadIdentityGit(t *testing.T) {
	entra := cloudfake.NewEntra(t, "tenant-1", "client-1", "federated-SECRET-1", "")
	gs := startGit(t, gitserver.Options{ReadCheck: func(r *http.Request) bool {
		return entra.BearerScope(r) == "499b84ac-1321-427f-aa17-267ca6975798/.default"
	}})
	opts := azureIdentity(t, entra, "federated-SECRET-1")
	store := load(t, opts, repoSecret("ado", "repository", map[string]string{"url": gs.RepoURL("app"), "useAzureWorkloadIdentity": "true"}))
	for range 3 {
		c := store.For(gs.RepoURL("app"))
		if err := readGit(t, gs.RepoURL("app"), c); err != nil {
			t.Fatalf("with the workload identity's token: %v (lookup error %v)", err, store.LastError())
		}
		if s := fmt.Sprintf("%v %+v %#v", c, c, c); strings.Contains(s, "entra-token") {
			t.Fatalf("credentials print the token: %s", s)
		}
	}
	if n := entra.Issued(); n != 1 {
		t.Errorf("%d tokens issued for three lookups within its life, want 1", n)
	}
	entra.ExpiresIn.Store(240) // 4 minutes: refreshed at every lookup
	opts.Tokens = repocreds.NewTokenCache()
	short := load(t, opts, repoSecret("ado", "repository", map[string]string{"url": gs.RepoURL("app"), "useAzureWorkloadIdentity": "true"}))
	short.For(gs.RepoURL("app"))
	entra.SetAssertion("federated-SECRET-2") // the kubelet rotated the file
	if err := os.WriteFile(opts.Azure.TokenFile, []byte("federated-SECRET-2"), 0o600); err != nil {
		t.Fatal(err)
	}
	before := entra.Issued()
	if err := readGit(t, gs.RepoURL("app"), short.For(gs.RepoURL("app"))); err != nil || entra.Issued() != before+1 {
		t.Fatalf("a token expiring within 5 minutes is replaced with the rotated federated token: %v, issued %d", err, entra.Issued()-before)
	}
	// No identity configured: the repository is refused by name.
	none := load(t, repocreds.Options{}, repoSecret("ado", "repository", map[string]string{"url": gs.RepoURL("app"), "useAzureWorkloadIdentity": "true"}))
	c := none.For(gs.RepoURL("app"))
	if err := readGit(t, gs.RepoURL("app"), c); err == nil || !strings.Contains(err.Error(), "argocd/ado") || !strings.Contains(err.Error(), "AZURE_CLIENT_ID") {
		t.Fatalf("no workload identity: %v", err)
	}
}

// An Azure service principal (repo-creds spelling of the ids): a client
// secret for a token of Azure DevOps at the Secret's
// azureActiveDirectoryEndpoint.
func TestAzureServicePrincipalGit(t *testing.T) {
	entra := cloudfake.NewEntra(t, "tenant-2", "sp-client", "", "sp-SECRET")
	gs := startGit(t, gitserver.Options{ReadCheck: func(r *http.Request) bool {
		return entra.BearerScope(r) == "499b84ac-1321-427f-aa17-267ca6975798/.default"
	}})
	store := load(t, repocreds.DefaultOptions(), repoSecret("sp", "repo-creds", map[string]string{"url": gs.URL(),
		"azureServicePrincipalClientID": "sp-client", "azureServicePrincipalTenantID": "tenant-2",
		"azureServicePrincipalClientSecret": "sp-SECRET", "azureActiveDirectoryEndpoint": entra.URL}))
	if err := readGit(t, gs.RepoURL("app"), store.For(gs.RepoURL("app"))); err != nil {
		t.Fatalf("service principal: %v", err)
	}
}

// gcpServiceAccountKey: a JWT signed with the key is traded at the key's
// token_uri for an access token, the password of the key's client_email.
func TestGCPServiceAccountKeyGit(t *testing.T) {
	g := cloudfake.NewGoogle(t, "argocd@demo.iam.gserviceaccount.com")
	gs := startGit(t, gitserver.Options{ReadUsername: g.Email, ReadPassword: g.Token(1)})
	store := load(t, repocreds.DefaultOptions(), repoSecret("gcp", "repository", map[string]string{"url": gs.RepoURL("app"), "gcpServiceAccountKey": g.KeyJSON}))
	for range 2 {
		c := store.For(gs.RepoURL("app"))
		if err := readGit(t, gs.RepoURL("app"), c); err != nil {
			t.Fatalf("Google service account: %v (%v)", err, store.LastError())
		}
	}
	if g.Issued() != 1 {
		t.Errorf("%d tokens issued, want 1 reused", g.Issued())
	}
}

// useAzureWorkloadIdentity on an OCI Helm repository (Argo CD's
// aci-private-repo example, scheme-less URL): the registry's challenge
// names its exchange, where the Entra ID token of Azure Resource Manager
// becomes a refresh token, the password of user
// 00000000-0000-0000-0000-000000000000 with which the chart is pulled.
func TestAzureWorkloadIdentityContainerRegistry(t *testing.T) {
	entra := cloudfake.NewEntra(t, "tenant-1", "client-1", "federated-SECRET", "")
	acr := cloudfake.NewACR(t, entra)
	acr.PushChart("charts", chartserver.WebChart(t, "web", "1.2.0"))
	opts := azureIdentity(t, entra, "federated-SECRET")
	url := acr.Host + "/charts"
	store := load(t, opts, repoSecret("aci-private-repo", "repository", map[string]string{"type": "helm", "url": url, "name": "contosocharts",
		"enableOCI": "true", "useAzureWorkloadIdentity": "true"}),
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: argocd-tls-certs-cm, namespace: argocd}\ndata:\n  127.0.0.1: |\n"+indentLines(string(acr.CAPEM), "    "))
	hopts := helmrepo.DefaultOptions()
	hopts.CacheDir = t.TempDir()
	charts, err := helmrepo.New(hopts)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{url, "oci://" + url} {
		c := store.For(u)
		if c == nil || c.Err != nil {
			t.Fatalf("%s: credentials %v (%v)", u, c, store.LastError())
		}
		rev, err := charts.Resolve(context.Background(), source.Repository{URL: u, Chart: "web", Credentials: c}, "1.x")
		if err != nil || rev.Commit != "1.2.0" {
			t.Fatalf("%s: resolve through the registry's exchange: %v %v", u, rev, err)
		}
	}
	if acr.Exchanges() != 1 {
		t.Errorf("%d exchanges for two lookups within the refresh token's life, want 1", acr.Exchanges())
	}
}

func indentLines(s, pad string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return pad + strings.Join(lines, "\n"+pad) + "\n"
}
