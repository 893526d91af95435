package testtools

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"time"

	"github.com/kubegitops/gitops/internal/apicheck"
	"github.com/kubegitops/gitops/internal/lfsserver"
	"github.com/kubegitops/gitops/internal/reftools"
	"github.com/kubegitops/gitops/internal/sopsexe"
	"github.com/kubegitops/gitops/internal/toolbuild"
	"github.com/kubegitops/gitops/testenv"
)

// Gitopsctl installs examples/gitopsctl with -race into the user cache
// (again only when its source changed) and returns its path.
func Gitopsctl(ctx context.Context) (string, error) {
	_, self, _, ok := runtime.Caller(0)
	if !ok {
		return "", fmt.Errorf("testtools: cannot locate the repository")
	}
	l := toolbuild.Local{Dir: filepath.Join(filepath.Dir(self), "..", ".."), Package: "./examples/gitopsctl", Flags: []string{"-race"}}
	return l.Install(ctx, toolbuild.Options{})
}

// Operator installs examples/operator with -race into the user cache
// (again only when its source changed) and returns its path: the tests of
// the programs that serve an operator's namespace (the portal's
// --namespace) run it as users do.
func Operator(ctx context.Context) (string, error) {
	_, self, _, ok := runtime.Caller(0)
	if !ok {
		return "", fmt.Errorf("testtools: cannot locate the repository")
	}
	l := toolbuild.Local{Dir: filepath.Join(filepath.Dir(self), "..", ".."), Package: "./examples/operator", Flags: []string{"-race"}}
	return l.Install(ctx, toolbuild.Options{})
}

// BuildAll builds (or finds) every program the tests run, telling log what
// it builds and where each program is. It stops at the first failure.
func BuildAll(ctx context.Context, log func(format string, args ...any)) error {
	steps := []struct {
		what string
		run  func() ([]string, error)
	}{
		{"the local cluster's programs", func() ([]string, error) {
			opts := testenv.DefaultBuildOptions()
			opts.Log = log
			b, err := testenv.EnsureBinaries(ctx, true, opts)
			return []string{b.Etcd, b.APIServer, b.ControllerManager, b.Scheduler, b.Kwok}, err
		}},
		{"kubectl", func() ([]string, error) {
			opts := testenv.DefaultBuildOptions()
			opts.Log = log
			p, err := testenv.EnsureKubectl(ctx, opts)
			return []string{p}, err
		}},
		{"the reference tools", func() ([]string, error) {
			paths, err := reftools.Ensure(ctx, log, reftools.All...)
			var out []string
			for _, t := range reftools.All {
				out = append(out, paths[t])
			}
			return out, err
		}},
		{"apidiff (make apicheck)", func() ([]string, error) {
			p, err := apicheck.Apidiff(ctx, toolbuild.Options{Log: log})
			return []string{p}, err
		}},
		{"gitops-sops", func() ([]string, error) {
			p, err := sopsexe.Install(ctx, log)
			return []string{p}, err
		}},
		{"git-lfs's test server", func() ([]string, error) {
			log("building lfstest-gitserver")
			p, err := lfsserver.Build(ctx)
			return []string{p}, err
		}},
		{"gitopsctl", func() ([]string, error) {
			log("installing gitopsctl (-race)")
			p, err := Gitopsctl(ctx)
			return []string{p}, err
		}},
		{"the operator", func() ([]string, error) {
			log("installing the operator (-race)")
			p, err := Operator(ctx)
			return []string{p}, err
		}},
	}
	for _, s := range steps {
		start := time.Now()
		paths, err := s.run()
		if err != nil {
			return fmt.Errorf("testtools: %s: %w", s.what, err)
		}
		log("%s ready in %s:", s.what, time.Since(start).Round(100*time.Millisecond))
		for _, p := range paths {
			log("  %s", p)
		}
	}
	return nil
}
