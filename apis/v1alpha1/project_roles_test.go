package v1alpha1

import (
	"strings"
	"testing"
)

// TestLoadProjectRoles: an AppProject's roles (Argo CD's project roles)
// load with their policies and groups; a bad or duplicate role name and an
// empty or repeated group are errors naming the field and line; jwtTokens
// (the records of project tokens) load in Argo CD's shape, and a field of
// an entry Argo CD does not have is an error naming it.
func TestLoadProjectRoles(t *testing.T) {
	in := `apiVersion: argoproj.io/v1alpha1
kind: AppProject
metadata: {name: team-a}
spec:
  roles:
  - name: deployer
    description: syncs the team's apps
    policies: ['p, proj:team-a:deployer, applications, sync, team-a/*, allow']
    groups: [my-org:team-a]
`
	projects, err := LoadProjects(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	r := projects[0].Spec.Roles
	if len(r) != 1 || r[0].Name != "deployer" || r[0].Groups[0] != "my-org:team-a" || !strings.HasPrefix(r[0].Policies[0], "p, proj:team-a:deployer") {
		t.Fatalf("roles %+v", r)
	}
	cp := projects[0].DeepCopy()
	cp.Spec.Roles[0].Groups[0] = "changed"
	if projects[0].Spec.Roles[0].Groups[0] != "my-org:team-a" {
		t.Fatal("DeepCopy shares the roles' groups")
	}

	bad := in + `  - name: -bad
  - name: deployer
    groups: ['', my-org:x, my-org:x]
`
	errs := loadErrors(t, func() error { _, err := LoadProjects(strings.NewReader(bad)); return err }())
	want := map[string]bool{"spec.roles[1].name": true, "spec.roles[2].name": true, "spec.roles[2].groups[0]": true, "spec.roles[2].groups[2]": true}
	for _, e := range errs {
		if !want[e.Path] {
			t.Errorf("unexpected error %v at %s", e, e.Path)
		}
		delete(want, e.Path)
	}
	if len(want) != 0 {
		t.Errorf("no error for %v (got %v)", want, errs)
	}

	tokens := in + "    jwtTokens: [{iat: 1700000000, id: abc, exp: 1700003600}, {iat: 1535390316}]\n"
	projects, err = LoadProjects(strings.NewReader(tokens))
	if err != nil {
		t.Fatalf("jwtTokens: %v", err)
	}
	got := projects[0].Spec.Roles[0].JWTTokens
	if len(got) != 2 || got[0] != (JWTToken{IssuedAt: 1700000000, ExpiresAt: 1700003600, ID: "abc"}) || got[1] != (JWTToken{IssuedAt: 1535390316}) {
		t.Fatalf("jwtTokens %+v", got)
	}
	cp = projects[0].DeepCopy()
	cp.Spec.Roles[0].JWTTokens[0].ID = "changed"
	if projects[0].Spec.Roles[0].JWTTokens[0].ID != "abc" {
		t.Fatal("DeepCopy shares the roles' jwtTokens")
	}
	_, err = LoadProjects(strings.NewReader(in + "    jwtTokens: [{iat: 1700000000, token: secret}]\n"))
	if err == nil || !strings.Contains(err.Error(), "spec.roles[0].jwtTokens[0].token") || strings.Contains(err.Error(), "secret") {
		t.Fatalf("an unknown field of a jwtTokens entry: got %v, want an error naming it (not its value)", err)
	}
}
