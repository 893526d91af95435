package project

import (
	"strings"

	"github.com/kubegitops/gitops/apis/v1alpha1"

	"k8s.io/client-go/rest"
)

// ServiceAccountFor returns the service account (namespace and name) that
// syncs of app impersonate, from the first destinationServiceAccounts entry
// matching the app's destination; ok is false when none matches.
func ServiceAccountFor(p *v1alpha1.AppProject, app *v1alpha1.Application) (namespace, name string, ok bool) {
	d := app.Spec.Destination
	cluster := d.Server
	if cluster == "" {
		cluster = d.Name
	}
	for _, e := range p.Spec.DestinationServiceAccounts {
		nsPattern := e.Namespace
		if nsPattern == "" {
			nsPattern = "*"
		}
		if !Glob(e.Server, cluster) || !Glob(nsPattern, d.Namespace) || e.DefaultServiceAccount == "" {
			continue
		}
		if ns, n, found := strings.Cut(e.DefaultServiceAccount, ":"); found {
			return ns, n, true
		}
		return d.Namespace, e.DefaultServiceAccount, true
	}
	return "", "", false
}

// ImpersonatedConfig returns a copy of cfg that acts as the service account
// namespace/name, with the groups the API server gives service accounts, so
// that RBAC bindings to those groups apply too. The identity in cfg needs
// the right to impersonate.
func ImpersonatedConfig(cfg *rest.Config, namespace, name string) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.Impersonate = rest.ImpersonationConfig{
		UserName: "system:serviceaccount:" + namespace + ":" + name,
		Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:" + namespace, "system:authenticated"},
	}
	return c
}
