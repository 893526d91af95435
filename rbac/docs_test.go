package rbac

import (
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"sigs.k8s.io/yaml"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/internal/argodocs"
)

// TestArgoCDRBACConfigMap loads Argo CD's documented argocd-rbac-cm
// (docs/operator-manual/argocd-rbac-cm.yaml of the release) as it is and
// checks what it grants: team-beta is admin, team-qa (an overlay key)
// tests applications and projects, everyone reads (policy.default), the
// groups come from its scopes [cognito:groups, email], and team-alpha,
// which p lines name but no g line binds, is not checked (as in Argo CD).
func TestArgoCDRBACConfigMap(t *testing.T) {
	raw := argodocs.ForTest(t).MustReadFile(t, "docs/operator-manual/argocd-rbac-cm.yaml")
	var cm struct {
		Kind string            `json:"kind"`
		Data map[string]string `json:"data"`
	}
	if err := yaml.Unmarshal(raw, &cm); err != nil || cm.Kind != "ConfigMap" {
		t.Fatalf("argocd-rbac-cm.yaml: %v (kind %q)", err, cm.Kind)
	}
	cfg, err := Load(cm.Data)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	e, err := NewEnforcer(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	claims := func(groups ...any) Subject {
		return Subject{Name: "u", Groups: GroupsFromClaims(map[string]any{"sub": "u", "cognito:groups": groups, "email": "u@example.com", "groups": []any{"my-org:team-beta"}}, cfg.Scopes)}
	}
	runTable(t, e, []request{
		{sub: claims("my-org:team-beta"), res: "clusters", act: "delete", obj: "https://c", want: true, via: "my-org:team-beta"},
		{sub: claims("my-org:team-qa"), res: "applications", act: "delete", obj: "p/a", want: true, ruleSource: "policy.overlay.csv"},
		{sub: claims("my-org:team-qa"), res: "projects", act: "delete", obj: "p", want: true},
		{sub: claims("my-org:team-qa"), res: "clusters", act: "delete", obj: "https://c", want: false},
		{sub: claims(), res: "applications", act: "get", obj: "p/a", want: true, via: "role:readonly", ruleSource: "builtin-policy.csv"},
		{sub: claims("my-org:team-alpha"), res: "applications", act: "sync", obj: "my-project/a", want: false},
		// Only the scopes' claims are groups: "groups" is not one of them.
		{sub: claims(), res: "clusters", act: "delete", obj: "https://c", want: false},
	})
}

// TestArgoCDProjectRoles reads the roles of Argo CD's documented AppProject
// (docs/operator-manual/project.yaml of the release), as they are: the
// read-only role's group gets the project's apps, and the ci-role's token,
// listed by its iat as the docs list it, may sync guestbook-dev only.
func TestArgoCDProjectRoles(t *testing.T) {
	raw := argodocs.ForTest(t).MustReadFile(t, "docs/operator-manual/project.yaml")
	var doc struct {
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
		Spec struct {
			Roles []v1alpha1.ProjectRole `json:"roles"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	p := project(doc.Metadata.Name, doc.Spec.Roles...)
	e := mustEnforcer(t, nil, p)
	key := []byte("0123456789abcdef0123456789abcdef")
	iat := time.Unix(1535390316, 0)
	token := signToken(t, jwt.SigningMethodHS256, key, argoClaims("proj:my-project:ci-role", "", iat, 0))
	tok, err := VerifyProjectToken(token, key, func(name string) (*v1alpha1.AppProject, bool) { return &p, name == p.Name }, time.Now())
	if err != nil {
		t.Fatalf("the docs' ci-role token (iat %d): %v", iat.Unix(), err)
	}
	runTable(t, e, []request{
		{sub: user("u", "my-oidc-group"), res: "applications", act: "get", obj: "my-project/web", want: true, via: "my-oidc-group"},
		{sub: user("u", "my-oidc-group"), res: "applications", act: "sync", obj: "my-project/web", want: false},
		{sub: tok.Subject(), res: "applications", act: "sync", obj: "my-project/guestbook-dev", want: true, via: "proj:my-project:ci-role"},
		{sub: tok.Subject(), res: "applications", act: "sync", obj: "my-project/guestbook-prod", want: false},
		{sub: tok.Subject(), res: "projects", act: "get", obj: "my-project", want: true},
	})
}
