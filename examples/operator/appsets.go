package main

import (
	"github.com/go-logr/logr"
	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/examples/operator/appsets"
	"github.com/kubegitops/gitops/examples/operator/controller"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// setupAppSets adds the ApplicationSet reconciler to mgr: it serves the
// sets of the namespaces whose Applications are served (the manager's
// cache), and writes Applications the Application reconciler deploys.
func setupAppSets(mgr manager.Manager, engine *gitops.Engine, projects *controller.Projects, f flags, log logr.Logger) error {
	opts := appsets.DefaultOptions()
	opts.Engine, opts.Interval, opts.ControllerNamespace = engine, f.interval, f.namespace
	opts.Projects = projects
	opts.Log = log.WithName("applicationset")
	r, err := appsets.New(mgr.GetClient(), opts)
	if err != nil {
		return err
	}
	return r.SetupWithManager(mgr)
}
