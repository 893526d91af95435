package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/appstatus"
	"github.com/kubegitops/gitops/health"
	"github.com/kubegitops/gitops/internal/gitserver"
	"github.com/kubegitops/gitops/testenv"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// demoRepoName is the demo repository's name on the Git server.
const demoRepoName = "demo"

// demoFlags are the demo's options.
type demoFlags struct {
	cluster clusterFlags
	keep    bool
	prefix  string
	timeout time.Duration
}

// runDemo is `gitopsctl demo`: a guided tour of the engine on a real
// cluster and a real Git server. Exit status 0 when every step did what it
// should, 1 when one did not (the output says which), 2 on bad flags.
func runDemo(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var f demoFlags
	f.cluster.register(fs)
	fs.BoolVar(&f.keep, "keep", false, "keep the cluster, Git server and engine running after the tour, until Ctrl-C")
	fs.StringVar(&f.prefix, "namespace-prefix", "gitops-demo", "the demo deploys into PREFIX-guestbook, PREFIX-helm and PREFIX-kustomize")
	fs.DurationVar(&f.timeout, "timeout", 5*time.Minute, "give up when the tour (not counting a first build of the cluster) takes longer")
	if !parseFlags(fs, args) {
		return 2
	}
	d := &demo{flags: f, out: newLockedWriter(stdout), errOut: newLockedWriter(stderr), started: time.Now()}
	err := d.run(ctx)
	d.cleanup()
	if err != nil {
		fmt.Fprintf(stdout, "\nThe demo failed: %v\n", err)
		if ctx.Err() != nil {
			return 130
		}
		return 1
	}
	return 0
}

// demo holds the tour's moving parts so that cleanup can stop them in
// order whatever step failed.
type demo struct {
	flags   demoFlags
	out     io.Writer
	errOut  io.Writer
	started time.Time
	step    int

	cluster    *testenv.Cluster
	kubeconfig string
	cfg        *rest.Config
	client     kubernetes.Interface
	git        *gitserver.Server
	repoURL    string
	apps       []*gitops.Application
	engine     *gitops.Engine
	stopRun    context.CancelFunc
	runDone    chan error
	timings    []string
}

const demoSteps = 6

// say prints a step's title.
func (d *demo) say(format string, args ...any) {
	d.step++
	fmt.Fprintf(d.out, "\n==> [%d/%d] %s\n", d.step, demoSteps, fmt.Sprintf(format, args...))
}

// note prints a line under the current step.
func (d *demo) note(format string, args ...any) {
	fmt.Fprintf(d.out, "    "+format+"\n", args...)
}

// timed records how long a step took, for the summary.
func (d *demo) timed(what string, start time.Time) {
	took := time.Since(start).Round(100 * time.Millisecond)
	d.timings = append(d.timings, fmt.Sprintf("%-44s %s", what, took))
	d.note("done in %s", took)
}

func (d *demo) run(parent context.Context) error {
	if err := d.startCluster(parent); err != nil {
		return err
	}
	// The cluster may have been built first (minutes); the tour's own
	// deadline starts now.
	ctx, cancel := context.WithTimeout(parent, d.flags.timeout)
	defer cancel()
	if err := d.startGit(ctx); err != nil {
		return err
	}
	if err := d.startEngine(ctx); err != nil {
		return err
	}
	if err := d.waitDeployed(ctx); err != nil {
		return err
	}
	if err := d.selfHeal(ctx); err != nil {
		return err
	}
	if err := d.rollOut(ctx); err != nil {
		return err
	}
	d.summary()
	if d.flags.keep {
		d.keepRunning(parent) // until Ctrl-C, not the tour's deadline
	}
	return nil
}

// startCluster uses --kubeconfig/--context when given, else starts the
// local cluster.
func (d *demo) startCluster(ctx context.Context) error {
	start := time.Now()
	if d.flags.cluster.kubeconfig != "" || d.flags.cluster.context != "" {
		d.say("Using the cluster of your kubeconfig")
		cfg, err := d.flags.cluster.restConfig()
		if err != nil {
			return err
		}
		d.cfg = cfg
		d.kubeconfig = d.flags.cluster.kubeconfig
		d.note("API server %s", cfg.Host)
	} else {
		d.say("Starting a local cluster (etcd, kube-apiserver %s, controllers, a kwok node)", testenv.KubernetesVersion)
		d.note("the first run builds the cluster's programs from source (about ten minutes); later runs take seconds")
		opts := testenv.DefaultOptions()
		opts.Build.Log = func(format string, args ...any) { fmt.Fprintf(d.errOut, "    "+format+"\n", args...) }
		c, err := testenv.Start(ctx, opts)
		if err != nil {
			return fmt.Errorf("local cluster: %w", err)
		}
		d.cluster, d.cfg, d.kubeconfig = c, c.Config(), c.Kubeconfig()
		d.note("API server %s (logs in %s)", c.Server(), c.Dir())
	}
	cs, err := kubernetes.NewForConfig(d.cfg)
	if err != nil {
		return err
	}
	d.client = cs
	d.timed("cluster ready", start)
	return nil
}

// startGit serves the bundled repository over a real Git HTTP server.
func (d *demo) startGit(ctx context.Context) error {
	start := time.Now()
	d.say("Serving the demo repository over Git smart HTTP (git http-backend)")
	srv, err := gitserver.Start(ctx, gitserver.DefaultOptions())
	if err != nil {
		return err
	}
	d.git = srv
	files, err := demoRepository()
	if err != nil {
		return err
	}
	commit, err := srv.CreateRepository(ctx, demoRepoName, files)
	if err != nil {
		return err
	}
	d.repoURL = srv.RepoURL(demoRepoName)
	d.note("%s  branch %s at %s", d.repoURL, srv.Branch(), shortRev(commit))
	d.note("guestbook/               plain manifests: a PreSync Job hook, waves 0-2 (ConfigMap, Deployment, Service)")
	d.note("chart/                   a Helm chart (Deployment and Service; replicaCount set by the Application)")
	d.note("kustomize/overlays/demo  a Kustomize overlay (name prefix, replicas, a generated ConfigMap)")
	d.timed("Git server ready", start)
	return nil
}

// startEngine loads the Applications and runs the engine in the
// background, narrating notifications and sync progress.
func (d *demo) startEngine(ctx context.Context) error {
	start := time.Now()
	d.say("Running the engine: automated sync with prune and selfHeal")
	apps, err := demoApplications(d.repoURL, d.flags.prefix)
	if err != nil {
		return err
	}
	d.apps = apps
	for _, a := range apps {
		d.note("Application %-12s -> %s (namespace %s)", a.Name, a.Spec.Source.Path, a.Spec.Destination.Namespace)
	}
	fmt.Fprintln(d.out)
	notes := &notifier{w: indent{d.out}}
	table := newProgressTable(indent{d.out}, nil)
	opts := engineOptions(d.cfg, stderrLogger(d.errOut, d.flags.cluster.verbose))
	if err := d.flags.cluster.applyScripts(ctx, d.cfg, d.errOut, &opts); err != nil {
		return err
	}
	if lh, err := newLiveHealth(d.cfg, opts.Health); err == nil {
		table.health = lh.Of
	}
	opts.Notify = notes.Notify
	opts.Sync.OnProgress = table.OnProgress
	// An instance id of its own: this tour never claims (or prunes) the
	// objects of another engine or of a tour with another prefix on the
	// same cluster, whose apps have the same names.
	opts.Tracking.InstanceID = "gitopsctl-demo-" + d.flags.prefix
	// Waves wait for health; the demo's objects are small, so look often.
	opts.Sync.PollInterval = 200 * time.Millisecond
	e, err := gitops.New(opts)
	if err != nil {
		return err
	}
	d.engine = e
	runCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	d.stopRun, d.runDone = stop, make(chan error, 1)
	go func() { d.runDone <- e.Run(runCtx, derefApps(apps)) }()
	d.timings = append(d.timings, fmt.Sprintf("%-44s %s", "engine started", time.Since(start).Round(100*time.Millisecond)))
	return nil
}

// waitDeployed waits until every app is synced and healthy.
func (d *demo) waitDeployed(ctx context.Context) error {
	start := time.Now()
	err := waitUntil(ctx, 2*time.Minute, func() (bool, error) {
		for _, a := range d.apps {
			if !d.appReady(a.Name, "") {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return d.explain("the applications did not become Synced and Healthy", err)
	}
	fmt.Fprintln(d.out)
	for _, a := range d.apps {
		st, _ := d.engine.Apps().AppStatus(v1alpha1.KeyOf(a))
		d.note("%-12s %s, %s at %s (%d resources)", a.Name, st.Sync, st.Health.Code, shortRev(st.Revision), countResources(st))
	}
	d.timed("first sync: Synced and Healthy", start)
	return nil
}

// appReady reports whether the engine last saw app synced and healthy (at
// revision, when given), and the sync that got it there has ended: Run's
// automated syncs run beside its refreshes, so a refresh can see the app
// Synced while its operation still deletes its hooks (HookSucceeded).
func (d *demo) appReady(app, revision string) bool {
	st, ok := d.engine.Apps().AppStatus(v1alpha1.AppKey{Name: app})
	if !ok || st.Sync != appstatus.Synced || st.Health.Code != health.Healthy || (revision != "" && st.Revision != revision) {
		return false
	}
	op, err := d.engine.LastOperation(context.Background(), v1alpha1.AppKey{Name: app})
	return err == nil && (op == nil || !op.FinishedAt.IsZero())
}

// explain wraps a failed wait with what the engine last saw of each app.
func (d *demo) explain(what string, err error) error {
	var b strings.Builder
	for _, a := range d.apps {
		st, ok := d.engine.Apps().AppStatus(v1alpha1.KeyOf(a))
		if !ok {
			fmt.Fprintf(&b, "\n  %s: not reconciled yet", a.Name)
			continue
		}
		fmt.Fprintf(&b, "\n  %s: %s, %s %s", a.Name, st.Sync, st.Health.Code, st.Health.Message)
		for _, r := range st.Resources {
			if r.Status != appstatus.Synced || (r.Health != nil && r.Health.Code != health.Healthy) {
				h := ""
				if r.Health != nil {
					h = string(r.Health.Code) + " " + r.Health.Message
				}
				fmt.Fprintf(&b, "\n    %s: %s %s", r.Key, r.Status, h)
			}
		}
		for _, c := range st.Conditions {
			fmt.Fprintf(&b, "\n    %s: %s", c.Type, c.Message)
		}
	}
	return fmt.Errorf("%s: %w%s", what, err, b.String())
}

func countResources(st appstatus.Status) int {
	n := 0
	for _, r := range st.Resources {
		if !r.Hook {
			n++
		}
	}
	return n
}

// waitUntil polls cond every 200 ms until it holds, it fails, or timeout
// (or ctx) ends.
func waitUntil(ctx context.Context, timeout time.Duration, cond func() (bool, error)) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		ok, err := cond()
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("gave up after %s: %w", timeout, ctx.Err())
		case <-tick.C:
		}
	}
}

// summary prints what the tour showed.
func (d *demo) summary() {
	d.say("Summary (%s in all)", time.Since(d.started).Round(100*time.Millisecond))
	for _, t := range d.timings {
		d.note("%s", t)
	}
	fmt.Fprintln(d.out)
	for _, a := range d.apps {
		st, _ := d.engine.Apps().AppStatus(v1alpha1.KeyOf(a))
		d.note("%-12s %-8s %-8s %s", a.Name, st.Sync, st.Health.Code, shortRev(st.Revision))
	}
	if !d.flags.keep {
		fmt.Fprintln(d.out, "\nRun `gitopsctl demo --keep` to explore the result with kubectl afterwards, or in the")
		fmt.Fprintln(d.out, "deploy portal (examples/portal): --keep prints the `go run ./examples/portal` line for these apps.")
	}
}

// keepRunning leaves everything up until Ctrl-C.
func (d *demo) keepRunning(ctx context.Context) {
	fmt.Fprintln(d.out, "\nEverything keeps running until Ctrl-C. From another terminal:")
	if d.kubeconfig != "" {
		fmt.Fprintf(d.out, "  export KUBECONFIG=%s\n", d.kubeconfig)
	}
	fmt.Fprintf(d.out, "  kubectl get all -n %s-guestbook\n", d.flags.prefix)
	fmt.Fprintf(d.out, "  git clone %s\n", d.repoURL)
	if dir, err := d.writePortalFiles(); err != nil {
		fmt.Fprintf(d.out, "  (the deploy portal's files could not be written: %v)\n", err)
	} else {
		defer os.RemoveAll(dir)
		fmt.Fprintf(d.out, "  # the deploy portal over these apps, at http://127.0.0.1:8080 (log in with the token in %s):\n", filepath.Join(dir, "tokens.txt"))
		fmt.Fprintf(d.out, "  go run ./examples/portal --kubeconfig %s --apps %s --policy %s --token-file %s --instance-id %s\n",
			d.kubeconfig, filepath.Join(dir, "apps"), filepath.Join(dir, "policy.yaml"), filepath.Join(dir, "tokens.txt"), "gitopsctl-demo-"+d.flags.prefix)
	}
	<-ctx.Done()
}

// cleanup stops the engine, the Git server and the local cluster; objects
// deployed to a cluster of the user's kubeconfig are left there.
func (d *demo) cleanup() {
	if d.stopRun != nil {
		d.stopRun()
		select {
		case <-d.runDone:
		case <-time.After(15 * time.Second):
			fmt.Fprintln(d.errOut, "gitopsctl demo: the engine did not stop within 15 s")
		}
	}
	if d.engine != nil {
		d.engine.Close()
	}
	if d.git != nil {
		if err := d.git.Close(); err != nil {
			fmt.Fprintln(d.errOut, "gitopsctl demo: git server:", err)
		}
	}
	if d.cluster != nil {
		fmt.Fprintln(d.out, "Stopping the local cluster...")
		if err := d.cluster.Stop(); err != nil {
			fmt.Fprintln(d.errOut, "gitopsctl demo: stop cluster:", err)
		}
	} else if d.client != nil && d.engine != nil {
		fmt.Fprintf(d.out, "The demo's objects stay in your cluster; remove them with:\n  kubectl delete namespace %s-guestbook %s-helm %s-kustomize\n", d.flags.prefix, d.flags.prefix, d.flags.prefix)
	}
}

// indent prefixes every line written through it with four spaces.
type indent struct{ w io.Writer }

// Write implements io.Writer.
func (i indent) Write(p []byte) (int, error) {
	lines := strings.SplitAfter(string(p), "\n")
	var b strings.Builder
	for _, l := range lines {
		if l != "" {
			b.WriteString("    " + l)
		}
	}
	if _, err := io.WriteString(i.w, b.String()); err != nil {
		return 0, err
	}
	return len(p), nil
}
