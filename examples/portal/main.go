package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/appset"
	"github.com/kubegitops/gitops/state"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// errOperatorMode refuses --operator by name.
var errOperatorMode = errors.New("--operator is not supported: --namespace NS serves the Applications of an operator's namespace (run examples/operator to reconcile them)")

type flags struct {
	apps, kubeconfig, kubeContext, listen     string
	tokenFile, policyFile, auditLog, stateNS  string
	projects                                  string
	oidcIssuer, oidcClientID, oidcSecretFile  string
	oidcRedirect, oidcGroupsClaim, instanceID string
	rbacCM, tlsCert, tlsKey                   string
	rbacNamespace, clusterSecretsNS           string
	projectsNS                                string
	namespace                                 string
	trustedProxies                            []netip.Prefix
	logsFollowMax                             time.Duration
	operator                                  bool
}

func parseFlags(args []string, stderr io.Writer) (flags, error) {
	var f flags
	fs := flag.NewFlagSet("portal", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.apps, "apps", "", "folder of Application YAML/JSON files to serve (this or --namespace is required)")
	fs.StringVar(&f.namespace, "namespace", "", "serve the Applications of this namespace of the cluster (an operator's, e.g. argocd) instead of --apps: status as the operator writes it, edits written to the Application objects")
	fs.BoolVar(&f.operator, "operator", false, "read Applications from the cluster (refused: not supported by this portal)")
	fs.StringVar(&f.kubeconfig, "kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig of the destination cluster(s)")
	fs.StringVar(&f.kubeContext, "context", "", "kubeconfig context (default: every context)")
	fs.StringVar(&f.listen, "listen", "127.0.0.1:8080", "address to serve on")
	fs.StringVar(&f.tokenFile, "token-file", "", "bearer tokens, one \"TOKEN USER GROUP,GROUP\" a line")
	fs.StringVar(&f.policyFile, "policy", "", "roles by group and project (YAML: rules: [{group, role: readonly|admin, projects, secrets}]) (required)")
	fs.StringVar(&f.projects, "projects", "", "AppProject YAML file (without it only the default project exists, allowing everything)")
	fs.StringVar(&f.projectsNS, "projects-namespace", "", "read the AppProjects of this namespace of the cluster instead of --projects, and apply their changes live (roles, project tokens, rules)")
	fs.StringVar(&f.auditLog, "audit-log", "", "append audit records (JSON lines) to this file; default stderr")
	fs.StringVar(&f.stateNS, "state-namespace", "", "keep history and last operations in ConfigMaps of this namespace (default: in memory)")
	fs.StringVar(&f.instanceID, "instance-id", "", "tracking instance id of this engine (objects of other instances are never pruned)")
	fs.StringVar(&f.oidcIssuer, "oidc-issuer", "", "OpenID Connect issuer URL for single sign-on")
	fs.StringVar(&f.oidcClientID, "oidc-client-id", "", "OIDC client id")
	fs.StringVar(&f.oidcSecretFile, "oidc-client-secret-file", "", "file holding the OIDC client secret")
	fs.StringVar(&f.oidcRedirect, "oidc-redirect-url", "", "this portal's /oidc/callback URL as registered with the issuer")
	fs.StringVar(&f.oidcGroupsClaim, "oidc-groups-claim", "groups", "ID token claim holding the user's groups (without --rbac-cm)")
	fs.StringVar(&f.rbacCM, "rbac-cm", "", "argocd-rbac-cm ConfigMap manifest: authorise with Argo CD's RBAC instead of --policy")
	fs.StringVar(&f.rbacNamespace, "rbac-namespace", "", "read argocd-rbac-cm from this namespace of the cluster and reload it live when it changes (instead of --policy or --rbac-cm), with argocd-cm's fine-grained RBAC inheritance and argocd-secret's server.secretkey (project tokens)")
	fs.StringVar(&f.clusterSecretsNS, "cluster-secrets-namespace", "", "also read Argo CD cluster Secrets (argocd.argoproj.io/secret-type: cluster) of this namespace as destinations, shown by their names")
	fs.StringVar(&f.tlsCert, "tls-cert", "", "serve HTTPS with this certificate file (PEM), re-read when it changes")
	fs.StringVar(&f.tlsKey, "tls-key", "", "the key file (PEM) of --tls-cert")
	fs.DurationVar(&f.logsFollowMax, "logs-follow-max", defaultFollowMax, "how long one Pod logs request may stream (follow) at most")
	proxies := fs.String("trusted-proxies", "", "comma-separated CIDRs of proxies whose X-Forwarded-Proto, -For and -Host are believed")
	if err := fs.Parse(args); err != nil {
		return f, err
	}
	var err error
	if f.trustedProxies, err = parseTrustedProxies(*proxies); err != nil {
		return f, err
	}
	groupsClaimSet := false
	fs.Visit(func(fl *flag.Flag) { groupsClaimSet = groupsClaimSet || fl.Name == "oidc-groups-claim" })
	switch {
	case f.operator:
		return f, errOperatorMode
	case f.apps == "" && f.namespace == "":
		return f, errors.New("--apps DIR (or --namespace NS) is required")
	case f.namespace != "" && checkNamespaceFlags(f) != nil:
		return f, checkNamespaceFlags(f)
	case f.policyFile == "" && f.rbacCM == "" && f.rbacNamespace == "":
		return f, errors.New("--policy FILE (or --rbac-cm FILE, or --rbac-namespace NS) is required")
	case f.projects != "" && f.projectsNS != "":
		return f, errors.New("--projects and --projects-namespace exclude each other: the portal reads its AppProjects from one of them")
	case countSet(f.policyFile, f.rbacCM, f.rbacNamespace) > 1:
		return f, errors.New("--policy and --rbac-cm and --rbac-namespace exclude each other: the portal authorises with one of them")
	case (f.rbacCM != "" || f.rbacNamespace != "") && groupsClaimSet:
		return f, errors.New("--oidc-groups-claim with --rbac-cm: the groups' claims are argocd-rbac-cm's scopes")
	case (f.tlsCert == "") != (f.tlsKey == ""):
		return f, errors.New("--tls-cert and --tls-key go together")
	case f.tokenFile == "" && f.oidcIssuer == "":
		return f, errors.New("--token-file or --oidc-issuer is required: the portal does not serve anonymous users")
	case f.logsFollowMax <= 0:
		return f, fmt.Errorf("--logs-follow-max %s: want a duration above 0", f.logsFollowMax)
	case f.kubeconfig == "":
		return f, errors.New("--kubeconfig (or $KUBECONFIG) is required")
	}
	return f, nil
}

func main() {
	// controller-runtime (the namespace mode's client) complains on
	// stderr, with a stack, when its process-wide logger was never set.
	ctrllog.SetLogger(logr.Discard())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stderr))
}

func run(ctx context.Context, args []string, stderr io.Writer) int {
	f, err := parseFlags(args, stderr)
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stderr, "portal:", err)
		}
		return 2
	}
	if err := serve(ctx, f, stderr); err != nil {
		fmt.Fprintln(stderr, "portal:", err)
		return 1
	}
	return 0
}

// serve builds the engine and the portal and serves until ctx ends.
func serve(ctx context.Context, f flags, stderr io.Writer) error {
	var apps []*gitops.Application
	var sets []appset.ApplicationSet
	var err error
	if f.apps != "" {
		if apps, err = loadAppsDir(f.apps); err != nil {
			return err
		}
		if sets, err = loadAppSetsDir(f.apps); err != nil {
			return err
		}
	}
	tokens := tokenFile{}
	if f.tokenFile != "" {
		if tokens, err = loadTokenFile(f.tokenFile); err != nil {
			return err
		}
	}
	var ctxs []string
	if f.kubeContext != "" {
		ctxs = []string{f.kubeContext}
	}
	clusters, err := gitops.ClustersFromKubeconfig(f.kubeconfig, ctxs...)
	if err != nil {
		return fmt.Errorf("--kubeconfig %s: %w", f.kubeconfig, err)
	}
	if len(clusters) == 0 {
		return fmt.Errorf("--kubeconfig %s: no context", f.kubeconfig)
	}
	clusters = append(clusters, gitops.ClusterConfig{Name: v1alpha1.KubernetesInClusterName, Server: v1alpha1.KubernetesInternalAPIServerAddr, Config: clusters[0].Config})
	kube, err := kubernetes.NewForConfig(clusters[0].Config)
	if err != nil {
		return err
	}
	dyn, err := dynamic.NewForConfig(clusters[0].Config)
	if err != nil {
		return err
	}
	if f.clusterSecretsNS != "" {
		fromSecrets, err := loadClusterSecrets(ctx, kube, f.clusterSecretsNS, clusters[0].Config)
		if err != nil {
			return err
		}
		clusters = mergeClusters(clusters, fromSecrets)
	}
	opts := gitops.DefaultOptions()
	opts.Clusters = clusters
	if f.instanceID != "" {
		opts.Tracking.InstanceID = f.instanceID
	}
	if f.projects != "" {
		if opts.Projects, err = loadProjectsFile(f.projects); err != nil {
			return err
		}
	}
	var live *liveProjects
	var refusedProjects map[string]error
	if f.projectsNS != "" {
		live = &liveProjects{ns: f.projectsNS, dyn: dyn}
		if opts.Projects, refusedProjects, err = live.load(ctx); err != nil {
			return err
		}
	}
	var nsb *nsBackend
	if f.namespace != "" {
		if nsb, apps, refusedProjects, err = openNamespaceOptions(ctx, f.namespace, clusters, kube, &opts, stderr); err != nil {
			return err
		}
		defer nsb.close()
	}
	if f.stateNS != "" {
		opts.State = state.NewConfigMapStore(kube, f.stateNS)
	}
	var audit io.Writer = stderr
	if f.auditLog != "" {
		af, err := os.OpenFile(f.auditLog, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			return fmt.Errorf("--audit-log: %w", err)
		}
		defer af.Close()
		audit = af
	}
	pol, authz, scopes, err := loadAuthz(ctx, f, kube, opts.Projects)
	if err != nil {
		return err
	}
	var oidcL *oidcLogin
	if f.oidcIssuer != "" {
		secret := ""
		if f.oidcSecretFile != "" {
			b, err := os.ReadFile(f.oidcSecretFile)
			if err != nil {
				return fmt.Errorf("--oidc-client-secret-file: %w", err)
			}
			secret = strings.TrimSpace(string(b))
		}
		oidcL, err = newOIDCLogin(ctx, oidcOptions{Issuer: f.oidcIssuer, ClientID: f.oidcClientID, ClientSecret: secret,
			RedirectURL: f.oidcRedirect, GroupsClaim: f.oidcGroupsClaim, Scopes: scopes})
		if err != nil {
			return err
		}
	}
	p, err := startPortal(ctx, portalConfig{Engine: opts, Apps: apps, AppsDir: f.apps, AppSets: sets, Kube: kube, KubeConfig: clusters[0].Config, KubeDynamic: dyn, Tokens: tokens, OIDC: oidcL, Policy: pol,
		Authz: authz, RBACNamespace: f.rbacNamespace, LiveProjects: live, RefusedProjects: refusedProjects, Namespace: nsb,
		TrustedProxies: f.trustedProxies, Audit: audit, LogsFollowMax: f.logsFollowMax, Log: stderr})
	if err != nil {
		return err
	}
	defer p.close()
	ln, err := net.Listen("tcp", f.listen)
	if err != nil {
		return err
	}
	scheme := "http"
	if f.tlsCert != "" {
		if ln, err = tlsListener(ln, f.tlsCert, f.tlsKey); err != nil {
			return err
		}
		scheme = "https"
	}
	fmt.Fprintf(stderr, "portal: serving %d applications on %s://%s\n", len(apps), scheme, ln.Addr())
	hs := &http.Server{Handler: p.srv, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = hs.Shutdown(sctx)
	}()
	if err := hs.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// portalConfig is what startPortal wires together (tests build it too).
type portalConfig struct {
	Engine gitops.Options
	Apps   []*gitops.Application
	Kube   kubernetes.Interface
	// KubeConfig is Kube's configuration (the Pod terminal's exec).
	KubeConfig *rest.Config
	// KubeDynamic is Kube's cluster for any kind (resource deletion).
	KubeDynamic dynamic.Interface
	Tokens      tokenFile
	OIDC        *oidcLogin
	Policy      policy
	// Authz replaces Policy when set (argocd-rbac-cm).
	Authz authorizer
	// RBACNamespace, with an Authz read from there (loadRBACNamespace),
	// is watched: argocd-rbac-cm's, argocd-cm's and argocd-secret's
	// changes apply live.
	RBACNamespace string
	// LiveProjects, when set, are the AppProjects of a namespace
	// (Engine.Projects holds what was read at start), watched: their
	// changes go to the engine and to Authz live.
	LiveProjects *liveProjects
	// RefusedProjects are the projects of LiveProjects that did not load
	// at start, by name (gitops.Engine.Settings().SetProjects).
	RefusedProjects map[string]error
	// AppsDir is the --apps folder Apps were read from, written by the
	// portal's edits (serverOptions.AppsDir); "" in namespace mode.
	AppsDir string
	// AppSets are the ApplicationSets of the AppsDir folder
	// (loadAppSetsDir), run by the portal (appsetfolder.go).
	AppSets []appset.ApplicationSet
	// Namespace, when set, is the operator's namespace the apps come
	// from (--namespace; Apps are its Applications as read at start):
	// the engine only reads, edits go to the Application objects.
	Namespace *nsBackend
	// Log receives what the portal reports outside requests (a policy
	// that failed to reload). Default: discarded.
	Log            io.Writer
	TrustedProxies []netip.Prefix
	Audit          io.Writer
	// LogsFollowMax bounds one logs request (default 30 minutes).
	LogsFollowMax time.Duration
}

// portal is a running engine and its web server.
type portal struct {
	engine *gitops.Engine
	srv    *server
	stop   context.CancelFunc
	done   chan error
}

// startPortal builds the engine with the portal's hooks, starts its run
// loop over the apps, and returns the handler.
func startPortal(ctx context.Context, cfg portalConfig) (*portal, error) {
	hooks := newEngineHooks()
	opts := cfg.Engine
	hooks.install(&opts)
	e, err := gitops.New(opts)
	if err != nil {
		return nil, err
	}
	execSt := &execState{}
	srv, err := newServer(serverOptions{Engine: e, Hooks: hooks, Apps: cfg.Apps, AppsDir: cfg.AppsDir, Kube: cfg.Kube, KubeConfig: cfg.KubeConfig, Exec: execSt, KubeDynamic: cfg.KubeDynamic,
		Tokens: cfg.Tokens, OIDC: cfg.OIDC, Policy: cfg.Policy, Authz: cfg.Authz, TrustedProxies: cfg.TrustedProxies, Audit: cfg.Audit,
		LogsFollowMax: cfg.LogsFollowMax, ClusterNames: clusterNames(opts.Clusters)})
	if err != nil {
		e.Close()
		return nil, err
	}
	runCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	p := &portal{engine: e, srv: srv, stop: stop, done: make(chan error, 1)}
	list := make([]gitops.Application, len(cfg.Apps))
	for i, a := range cfg.Apps {
		list[i] = *a
	}
	if len(cfg.RefusedProjects) > 0 {
		e.Settings().SetProjects(opts.Projects, cfg.RefusedProjects)
	}
	logw := cfg.Log
	if logw == nil {
		logw = io.Discard
	}
	az, _ := cfg.Authz.(*argoRBAC)
	if az != nil && cfg.RBACNamespace != "" {
		srv.wg.Add(1)
		go func() {
			defer srv.wg.Done()
			watchRBACNamespace(srv.bg, cfg.Kube, cfg.RBACNamespace, az, logw)
		}()
	}
	if cfg.RBACNamespace != "" && cfg.Kube != nil {
		srv.wg.Add(1)
		go func() {
			defer srv.wg.Done()
			watchExecSettings(srv.bg, cfg.Kube, cfg.RBACNamespace, execSt, logw)
		}()
	}
	if cfg.LiveProjects != nil {
		srv.wg.Add(1)
		go func() {
			defer srv.wg.Done()
			cfg.LiveProjects.watch(srv.bg, e, az, logw)
		}()
	}
	if cfg.Namespace != nil {
		if err := cfg.Namespace.attach(srv.bg, srv, e, az); err != nil {
			srv.close()
			e.Close()
			stop()
			return nil, err
		}
		list = nil // the operator runs them; the engine only reads
	}
	if cfg.AppsDir != "" {
		fsets, err := newFolderSets(e, cfg.AppSets)
		if err != nil {
			srv.close()
			e.Close()
			stop()
			return nil, err
		}
		srv.folderSets = fsets
		srv.wg.Add(1)
		go func() {
			defer srv.wg.Done()
			fsets.run(srv.bg, srv, e, func(msg string) { fmt.Fprintln(logw, msg) })
		}()
	}
	go func() { p.done <- e.Run(runCtx, list) }()
	return p, nil
}

// close stops operations, the run loop and the engine.
func (p *portal) close() {
	p.srv.close()
	p.stop()
	<-p.done
	p.engine.Close()
}

// loadAppsDir reads every .yaml, .yml and .json file of dir (not
// recursively) but the files of ApplicationSets (loadAppSetsDir reads
// those); any file that does not load fails it, its error naming the file
// (and the line and field of a decoding error).
func loadAppsDir(dir string) ([]*gitops.Application, error) {
	hidden, err := setFiles(dir)
	if err != nil {
		return nil, fmt.Errorf("--apps %s: %w", dir, err)
	}
	all, _ := v1alpha1.ManifestFiles(os.DirFS(dir), ".")
	if len(hidden) > 0 && len(hidden) == len(all) {
		return nil, nil // ApplicationSets only
	}
	apps, err := v1alpha1.LoadApplicationsFS(hideFiles{FS: os.DirFS(dir), hidden: hidden}, ".")
	if err != nil {
		return nil, fmt.Errorf("--apps %s: %w", dir, err)
	}
	out := make([]*gitops.Application, len(apps))
	for i := range apps {
		out[i] = &apps[i]
	}
	return out, nil
}

// loadAuthz reads the role file (--policy), or argocd-rbac-cm (--rbac-cm)
// with the projects' roles; then the OIDC groups come from its scopes.
func loadAuthz(ctx context.Context, f flags, kube kubernetes.Interface, projects []gitops.Project) (policy, authorizer, []string, error) {
	if f.rbacNamespace != "" {
		az, cfg, err := loadRBACNamespace(ctx, kube, f.rbacNamespace, projects)
		if err != nil {
			return policy{}, nil, nil, err
		}
		return policy{}, az, cfg.Scopes, nil
	}
	if f.rbacCM == "" {
		pol, err := loadPolicy(f.policyFile)
		return pol, nil, nil, err
	}
	cfg, err := loadRBACConfigMap(f.rbacCM)
	if err != nil {
		return policy{}, nil, nil, err
	}
	az, err := newArgoRBAC(cfg, projects)
	if err != nil {
		return policy{}, nil, nil, fmt.Errorf("--rbac-cm %s: %w", f.rbacCM, err)
	}
	return policy{}, az, cfg.Scopes, nil
}

// countSet counts the non-empty values.
func countSet(values ...string) int {
	n := 0
	for _, v := range values {
		if v != "" {
			n++
		}
	}
	return n
}

// loadProjectsFile reads the AppProjects of one file.
func loadProjectsFile(file string) ([]gitops.Project, error) {
	fh, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("--projects: %w", err)
	}
	defer fh.Close()
	p, err := gitops.LoadProjects(fh)
	if err != nil {
		return nil, fmt.Errorf("--projects %s: %w", file, err)
	}
	return p, nil
}
