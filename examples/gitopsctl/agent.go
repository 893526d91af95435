package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	gosync "sync"
	"time"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/appstatus"
	"github.com/kubegitops/gitops/source/webhook"
)

// runAgent runs the engine on every Application of --apps until Ctrl-C:
// periodic refreshes, self-heal on cluster changes, automated sync, and,
// with --webhook-addr, a push webhook that hints the engine.
func runAgent(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	stdout, stderr = newLockedWriter(stdout), newLockedWriter(stderr)
	fs := flag.NewFlagSet("agent", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cf clusterFlags
	cf.register(fs)
	cf.engine.durableState = true // the host: status and diff read what it keeps
	var so scaleOutFlags
	so.register(fs)
	appsPath := fs.String("apps", "", "file or folder of Applications to manage")
	interval := fs.Duration("interval", 3*time.Minute, "how often each app is refreshed without other reason (negative: never, only on webhooks and cluster changes)")
	hookAddr := fs.String("webhook-addr", "", "serve the push webhook at this address (path /api/webhook); off when empty")
	secretFile := fs.String("webhook-secret-file", "", "file holding the webhook secret (default: $GITOPS_WEBHOOK_SECRET)")
	hydrate := fs.Bool("hydrate", false, "run the source hydrator for apps with spec.sourceHydrator (as argocd-cmd-params-cm hydrator.enabled does in the operator): their dry source rendered and committed with --repositories' repository-write Secrets, argocd-cm's author and templates")
	hydrateInterval := fs.Duration("hydrator-interval", 3*time.Minute, "with --hydrate, how often apps with spec.sourceHydrator are hydrated")
	if !parseFlags(fs, args) {
		return 2
	}
	if *appsPath == "" {
		return fail(stderr, "agent", errors.New("--apps FILE|DIR is required"))
	}
	apps, bad, err := loadAppsTolerant(*appsPath)
	if err != nil {
		return fail(stderr, "agent", err)
	}
	// One broken file does not stop the others being managed, as Argo CD
	// marks one Application and manages the rest; it is reported here.
	for _, b := range bad {
		fmt.Fprintf(stderr, "gitopsctl agent: not managed: %v\n", b)
	}
	if len(apps) == 0 {
		return fail(stderr, "agent", fmt.Errorf("%s: no Application could be loaded", *appsPath))
	}
	cfg, err := cf.restConfig()
	if err != nil {
		return fail(stderr, "agent", err)
	}
	notes := &notifier{w: stdout}
	opts, err := cf.engineOptions(ctx, cfg, stderr)
	if err != nil {
		return fail(stderr, "agent", err)
	}
	opts.Interval = *interval
	if *interval > 0 {
		opts.RefCacheTTL = min(opts.RefCacheTTL, *interval)
	}
	opts.Notify = notes.Notify
	closeScaleOut, err := so.apply(cfg, &opts)
	defer closeScaleOut()
	if err != nil {
		return fail(stderr, "agent", err)
	}
	engine, err := gitops.New(opts)
	if err != nil {
		return fail(stderr, "agent", err)
	}
	defer engine.Close()
	notes.conditions = func(key v1alpha1.AppKey) []appstatus.Condition {
		st, _ := engine.Apps().AppStatus(key)
		return st.Conditions
	}

	var srv *http.Server
	var served chan error
	if *hookAddr != "" {
		secret, err := webhookSecret(*secretFile)
		if err != nil {
			return fail(stderr, "agent", err)
		}
		srv, err = newWebhookServer(engine, secret, stdout)
		if err != nil {
			return fail(stderr, "agent", err)
		}
		ln, err := net.Listen("tcp", *hookAddr)
		if err != nil {
			return fail(stderr, "agent", fmt.Errorf("webhook: %w", err))
		}
		served = make(chan error, 1)
		go func() { served <- srv.Serve(ln) }()
		fmt.Fprintf(stdout, "webhook listening on http://%s/api/webhook\n", ln.Addr())
	}

	names := make([]string, len(apps))
	for i, a := range apps {
		names[i] = a.Name
	}
	var hydrations *agentHydrations
	if *hydrate {
		if *hydrateInterval <= 0 {
			return fail(stderr, "agent", fmt.Errorf("--hydrator-interval %s: want a positive duration", *hydrateInterval))
		}
		if hydrations, err = newAgentHydrations(engine, apps, cf.creds, cf.hydrator, *hydrateInterval, stdout); err != nil {
			return fail(stderr, "agent", err)
		}
	} else {
		warnNotHydrated(stderr, apps)
	}
	fmt.Fprintf(stdout, "managing %d application(s)%s: %s%s (Ctrl-C to stop)\n", len(apps), so.describe(opts), strings.Join(names, ", "), notLoaded(bad))
	watchCtx, stopWatch := context.WithCancel(ctx)
	var watched gosync.WaitGroup
	watched.Go(func() { newConditionWatch(stdout).run(watchCtx, engine.Apps(), conditionPeriod) })
	if hydrations != nil {
		watched.Go(func() { hydrations.run(watchCtx) })
	}
	runErr := engine.Run(ctx, derefApps(apps))
	stopWatch()
	watched.Wait()
	fmt.Fprintln(stdout, "stopping...")
	if srv != nil {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = srv.Shutdown(sctx)
		cancel()
		if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintln(stderr, "gitopsctl agent: webhook:", err)
		}
	}
	if runErr != nil && !errors.Is(runErr, context.Canceled) {
		return fail(stderr, "agent", runErr)
	}
	fmt.Fprintln(stdout, "stopped")
	return 0
}

// conditionPeriod is how often the agent looks for new and cleared
// conditions of its apps.
const conditionPeriod = time.Second

// notLoaded names the Application files the agent could not load, for its
// start line ("" when every file loaded).
func notLoaded(bad []error) string {
	if len(bad) == 0 {
		return ""
	}
	var files []string
	for _, b := range bad {
		var fe *v1alpha1.FileError
		if errors.As(b, &fe) {
			files = append(files, fe.File)
		}
	}
	noun := "files"
	if len(files) == 1 {
		noun = "file"
	}
	return fmt.Sprintf("; %d %s not loaded: %s (see stderr)", len(files), noun, strings.Join(files, ", "))
}

// webhookSecret reads the shared secret from a file or the environment;
// it never comes from the command line, where ps would show it.
func webhookSecret(file string) (string, error) {
	if file != "" {
		data, err := os.ReadFile(file)
		if err != nil {
			return "", fmt.Errorf("webhook secret: %w", err)
		}
		if s := strings.TrimSpace(string(data)); s != "" {
			return s, nil
		}
		return "", fmt.Errorf("webhook secret file %s is empty", file)
	}
	if s := os.Getenv("GITOPS_WEBHOOK_SECRET"); s != "" {
		return s, nil
	}
	return "", errors.New("--webhook-addr needs a secret: --webhook-secret-file FILE or $GITOPS_WEBHOOK_SECRET")
}

// newWebhookServer serves source/webhook's handler at /api/webhook (the
// path Argo CD uses); every verified push hints the engine with each URL
// the payload names for the repository.
func newWebhookServer(engine *gitops.Engine, secret string, log io.Writer) (*http.Server, error) {
	secrets := map[webhook.Provider][]string{}
	for _, p := range []webhook.Provider{webhook.GitHub, webhook.GitLab, webhook.Gitea, webhook.Gogs, webhook.Bitbucket, webhook.BitbucketServer} {
		secrets[p] = []string{secret}
	}
	var mu gosync.Mutex
	h := webhook.NewHandler(webhook.Options{
		Secrets: secrets,
		OnPush: func(_ context.Context, hint webhook.Hint) {
			for _, u := range hint.RepositoryURLs {
				engine.Apps().Hint(u)
			}
			mu.Lock()
			defer mu.Unlock()
			fmt.Fprintf(log, "%s webhook: push to %s %s\n", time.Now().Format("15:04:05"), firstOr(hint.RepositoryURLs, "?"), hint.Ref)
		},
	})
	mux := http.NewServeMux()
	mux.Handle("/api/webhook", h)
	return &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second, WriteTimeout: 30 * time.Second}, nil
}

func firstOr(s []string, def string) string {
	if len(s) == 0 {
		return def
	}
	return s[0]
}

// notifier prints the engine's notifications, one line each.
type notifier struct {
	mu gosync.Mutex
	w  io.Writer
	// conditions, when set, returns an app's current conditions: a
	// health change explained only by them leaves them to the
	// conditionWatch line, so each failure is printed once.
	conditions func(key v1alpha1.AppKey) []appstatus.Condition
}

// Notify is a gitops.Options.Notify.
func (n *notifier) Notify(note appstatus.Notification) {
	if note.Type == appstatus.NotifyHealthChanged && note.Message != "" && n.conditions != nil && note.Message == conditionsText(n.conditions(note.Key)) {
		note.Message = ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %-14s %s", note.Time.Format("15:04:05"), note.Type, note.Key.Name)
	if note.Revision != "" {
		fmt.Fprintf(&b, " @ %s", shortRev(note.Revision))
	}
	if note.Health != "" {
		fmt.Fprintf(&b, " health=%s", note.Health)
	}
	if note.Message != "" {
		// An automated sync's message names its revision again, in full.
		fmt.Fprintf(&b, ": %s", strings.ReplaceAll(note.Message, "'"+note.Revision+"'", "'"+shortRev(note.Revision)+"'"))
	}
	b.WriteByte('\n')
	n.mu.Lock()
	defer n.mu.Unlock()
	_, _ = io.WriteString(n.w, b.String())
}

// conditionsText is conditions as the engine explains a health by them:
// "Type: message", joined by "; ".
func conditionsText(conds []appstatus.Condition) string {
	parts := make([]string, 0, len(conds))
	for _, c := range conds {
		parts = append(parts, string(c.Type)+": "+c.Message)
	}
	return strings.Join(parts, "; ")
}

// shortRev shortens each commit of a revision list to 7 characters.
func shortRev(rev string) string {
	parts := strings.Split(rev, ",")
	for i, p := range parts {
		if len(p) > 7 {
			parts[i] = p[:7]
		}
	}
	return strings.Join(parts, ",")
}

// derefApps returns the Applications themselves, as Engine.Run takes them.
func derefApps(apps []*gitops.Application) []gitops.Application {
	out := make([]gitops.Application, len(apps))
	for i, a := range apps {
		out[i] = *a
	}
	return out
}
