package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"sync"
	"syscall"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/appstatus"
	"k8s.io/client-go/tools/clientcmd"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "watch:", err)
		os.Exit(1)
	}
}

// run runs the controller until ctx ends; nil is a clean stop.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("watch", flag.ContinueOnError)
	fs.SetOutput(stderr)
	appsDir := fs.String("apps", "", "folder of Argo CD Application manifests (required)")
	kubeconfig := fs.String("kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig of the destination clusters; empty: in-cluster")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *appsDir == "" {
		return errors.New("--apps is required")
	}
	apps, err := loadDir(*appsDir)
	if err != nil {
		return err
	}
	opts := gitops.DefaultOptions()
	if opts.Clusters, err = clusters(*kubeconfig); err != nil {
		return err
	}

	out := newPrinter(stdout)
	defer out.close()
	opts.Notify = func(n appstatus.Notification) {
		line := fmt.Sprintf("notification %s %s", n.Key, n.Type)
		if n.Sync != "" {
			line += " " + string(n.Sync)
		}
		if n.Health != "" {
			line += " " + string(n.Health)
		}
		if n.Revision != "" {
			line += " at " + n.Revision
		}
		if n.Message != "" {
			line += ": " + n.Message
		}
		out.print(line)
	}
	e, err := gitops.New(opts)
	if err != nil {
		return err
	}
	defer e.Close()
	changes := statusChanges{last: map[v1alpha1.AppKey]appstatus.Status{}, print: out.print}
	defer e.Apps().OnStatus(changes.observe)()

	out.print(fmt.Sprintf("watching %d apps of %s", len(apps), *appsDir))
	if err := e.Run(ctx, apps); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	out.print("stopped")
	return nil
}

// loadDir reads the Applications of every manifest file of dir.
func loadDir(dir string) ([]v1alpha1.Application, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var apps []v1alpha1.Application
	for _, ent := range entries {
		switch filepath.Ext(ent.Name()) {
		case ".yaml", ".yml", ".json":
		default:
			continue
		}
		if ent.IsDir() {
			continue
		}
		file := filepath.Join(dir, ent.Name())
		more, err := loadFile(file)
		if err != nil {
			return nil, err
		}
		apps = append(apps, more...)
	}
	if len(apps) == 0 {
		return nil, fmt.Errorf("%s: no Application", dir)
	}
	return apps, nil
}

func loadFile(file string) ([]v1alpha1.Application, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	apps, err := v1alpha1.LoadApplications(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return apps, nil
}

// clusters are the destinations: the current context of kubeconfig as the
// in-cluster destination (or the cluster the process runs in, without a
// kubeconfig), and every context of kubeconfig by its own name and server.
func clusters(kubeconfig string) ([]gitops.ClusterConfig, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	out := []gitops.ClusterConfig{{
		Name:   v1alpha1.KubernetesInClusterName,
		Server: v1alpha1.KubernetesInternalAPIServerAddr,
		Config: cfg,
	}}
	if kubeconfig == "" {
		return out, nil
	}
	contexts, err := gitops.ClustersFromKubeconfig(kubeconfig)
	if err != nil {
		return nil, err
	}
	return append(out, contexts...), nil
}

// statusChanges prints an app's status each time its sync status, health or
// revision differs from the last one seen: OnStatus reports every refresh,
// changed or not.
type statusChanges struct {
	mu    sync.Mutex
	last  map[v1alpha1.AppKey]appstatus.Status
	print func(string)
}

func (s *statusChanges) observe(key v1alpha1.AppKey, st appstatus.Status) {
	s.mu.Lock()
	prev, seen := s.last[key]
	changed := !seen || prev.Sync != st.Sync || prev.Health.Code != st.Health.Code || prev.Revision != st.Revision
	s.last[key] = st
	s.mu.Unlock()
	if !changed {
		return
	}
	line := fmt.Sprintf("status %s %s %s at %s", key, st.Sync, st.Health.Code, st.Revision)
	errs := slices.DeleteFunc(slices.Clone(st.Conditions), func(c appstatus.Condition) bool { return !c.IsError() })
	for _, c := range errs {
		line += fmt.Sprintf("\n  %s: %s", c.Type, c.Message)
	}
	s.print(line)
}

// printer writes lines from one goroutine, so that the engine's callbacks,
// which must not block, only queue them; a line that finds the queue full is
// counted and reported with the next one.
type printer struct {
	lines   chan string
	done    chan struct{}
	mu      sync.Mutex
	dropped int
	closed  bool
}

func newPrinter(w io.Writer) *printer {
	p := &printer{lines: make(chan string, 1024), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		for line := range p.lines {
			fmt.Fprintln(w, line)
		}
	}()
	return p
}

func (p *printer) print(line string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	if p.dropped > 0 {
		line = fmt.Sprintf("(%d lines dropped)\n%s", p.dropped, line)
	}
	select {
	case p.lines <- line:
		p.dropped = 0
	default:
		p.dropped++
	}
}

// close prints what is queued and stops the printer; lines printed after it
// are dropped (the docs do not say whether the engine's callbacks can still
// run once Run has returned).
func (p *printer) close() {
	p.mu.Lock()
	p.closed = true
	close(p.lines)
	p.mu.Unlock()
	<-p.done
}
