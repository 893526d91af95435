package main

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/kubegitops/gitops/internal/argodocs"
	"github.com/kubegitops/gitops/rbac"
)

// TestArgoCDDocsRBACConfigMap applies Argo CD's documented argocd-rbac-cm
// (docs/operator-manual/argocd-rbac-cm.yaml of the release), as it is, to
// the local cluster and reads it as --rbac-namespace does: it loads, and a
// member of my-org:team-beta (its scopes are [cognito:groups, email]) is
// admin, while everyone else reads only (its policy.default).
func TestArgoCDDocsRBACConfigMap(t *testing.T) {
	raw := argodocs.ForTest(t).MustReadFile(t, "docs/operator-manual/argocd-rbac-cm.yaml")
	var cm corev1.ConfigMap
	if err := yaml.UnmarshalStrict(raw, &cm); err != nil {
		t.Fatal(err)
	}
	ns := cluster.TestNamespace(t)
	cm.Namespace = ns
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	kube, err := kubernetes.NewForConfig(cluster.Config())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kube.CoreV1().ConfigMaps(ns).Create(ctx, &cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	az, cfg, err := loadRBACNamespace(ctx, kube, ns, nil)
	if err != nil {
		t.Fatalf("the documented argocd-rbac-cm: %v", err)
	}
	beta := identity{User: "u", Groups: rbac.GroupsFromClaims(map[string]any{"cognito:groups": []any{"my-org:team-beta"}}, cfg.Scopes)}
	if err := az.decide(beta, rbac.ResourceApplications, rbac.ActionDelete, "p/a"); err != nil {
		t.Errorf("team-beta deletes an app: %v", err)
	}
	other := identity{User: "v", Groups: []string{"someone-else"}}
	if err := az.decide(other, rbac.ResourceApplications, rbac.ActionGet, "p/a"); err != nil {
		t.Errorf("policy.default role:readonly gets an app: %v", err)
	}
	if err := az.decide(other, rbac.ResourceApplications, rbac.ActionSync, "p/a"); err == nil {
		t.Error("policy.default role:readonly syncs an app")
	}
}
