package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/kubegitops/gitops"
)

// appCommand is the shared setup of render, diff, sync and status: flags
// parsed, the application loaded and an engine built. Close releases it.
type appCommand struct {
	cluster clusterFlags
	appFile string
	appName string
	app     *gitops.Application
	engine  *gitops.Engine
}

func (a *appCommand) register(fs *flag.FlagSet) {
	a.cluster.register(fs)
	fs.StringVar(&a.appFile, "app", "", "file holding the Application (argoproj.io/v1alpha1)")
	fs.StringVar(&a.appName, "name", "", "the application to use when --app holds several")
}

// setup loads the app and builds the engine; tweak may adjust the options.
func (a *appCommand) setup(stderr io.Writer, tweak func(*gitops.Options)) error {
	app, err := loadApp(a.appFile, a.appName)
	if err != nil {
		return err
	}
	cfg, err := a.cluster.restConfig()
	if err != nil {
		return err
	}
	opts, err := a.cluster.engineOptions(context.Background(), cfg, stderr)
	if err != nil {
		return err
	}
	if tweak != nil {
		tweak(&opts)
	}
	e, err := gitops.New(opts)
	if err != nil {
		return err
	}
	a.app, a.engine = app, e
	return nil
}

// Close stops the engine's caches.
func (a *appCommand) Close() {
	if a.engine != nil {
		a.engine.Close()
	}
}

// parseFlags parses args and refuses positional arguments; false means the
// command must return 2.
func parseFlags(fs *flag.FlagSet, args []string) bool {
	if err := fs.Parse(args); err != nil {
		return false
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(fs.Output(), "%s: unexpected argument %q\n", fs.Name(), fs.Arg(0))
		return false
	}
	return true
}

// fail prints an error of a command and returns exit status 2.
func fail(stderr io.Writer, cmd string, err error) int {
	fmt.Fprintf(stderr, "gitopsctl %s: %v\n", cmd, err)
	return 2
}
