package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/examples/operator/controller"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// checkServesAppProjects proves what the -application-namespaces help
// says: with a default AppProject in the operator's namespace (ns) that
// lists no sourceNamespaces, an Application of the other namespace (team)
// naming default is refused (InvalidSpecError, sourceNamespaces), while
// one naming an AppProject whose sourceNamespaces allow team is synced.
func checkServesAppProjects(ctx context.Context, t *testing.T, c client.Client, ns, team, repoURL string) {
	t.Helper()
	dest := cluster.TestNamespace(t)
	everywhere := []any{map[string]any{"server": "*", "namespace": "*"}}
	for name, spec := range map[string]map[string]any{
		"default": {"sourceRepos": []any{"*"}, "destinations": everywhere},
		"team":    {"sourceRepos": []any{"*"}, "destinations": everywhere, "sourceNamespaces": []any{team}},
	} {
		p := controller.NewAppProject()
		p.SetNamespace(ns)
		p.SetName(name)
		p.Object["spec"] = spec
		if err := c.Create(ctx, p); err != nil {
			t.Fatalf("create AppProject %s: %v", name, err)
		}
	}
	app := func(name, project string) *v1alpha1.Application {
		return &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: team, Name: name}, Spec: v1alpha1.ApplicationSpec{
			Project:     project,
			Source:      &v1alpha1.ApplicationSource{RepoURL: repoURL, Path: "app"},
			Destination: v1alpha1.ApplicationDestination{Name: "in-cluster", Namespace: dest},
			SyncPolicy:  &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{}},
		}}
	}
	for _, a := range []*v1alpha1.Application{app("of-default", "default"), app("of-team", "team")} {
		if err := c.Create(ctx, a); err != nil {
			t.Fatalf("create Application %s: %v", a.Name, err)
		}
	}
	wait1 := func(name, what string, cond func(*v1alpha1.Application) bool) {
		t.Helper()
		got := &v1alpha1.Application{}
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			if err := c.Get(ctx, types.NamespacedName{Namespace: team, Name: name}, got); err != nil {
				return false, nil
			}
			return cond(got), nil
		})
		if err != nil {
			t.Fatalf("Application %s/%s: waiting for %s: %v; status %+v", team, name, what, err, got.Status)
		}
	}
	wait1("of-team", "Synced and Healthy", func(a *v1alpha1.Application) bool {
		return a.Status.Sync.Status == "Synced" && a.Status.Health.Status == "Healthy"
	})
	wait1("of-default", "the sourceNamespaces refusal", func(a *v1alpha1.Application) bool {
		for _, c := range a.Status.Conditions {
			if c.Type == "InvalidSpecError" && strings.Contains(c.Message, "sourceNamespaces") {
				return a.Status.Sync.Status != "Synced"
			}
		}
		return false
	})
}
