package v1alpha1

import (
	"slices"
	"strings"
	"testing"
)

// TestLoadProjectRoles: an AppProject's roles (Argo CD's project roles)
// load with their policies and groups; a bad or duplicate role name and an
// empty or repeated group are errors naming the field and line; jwtTokens
// (project tokens, an API server's business) load in Argo CD's shape.
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

	tokens := in + "    jwtTokens: [{iat: 1700000000, id: abc}, {iat: 1700000100, exp: 1800000000}]\n"
	projects, err = LoadProjects(strings.NewReader(tokens))
	if err != nil {
		t.Fatalf("jwtTokens: %v", err)
	}
	wantTokens := []JWTToken{{IssuedAt: 1700000000, ID: "abc"}, {IssuedAt: 1700000100, ExpiresAt: 1800000000}}
	if got := projects[0].Spec.Roles[0].JWTTokens; !slices.Equal(got, wantTokens) {
		t.Fatalf("jwtTokens = %+v, want %+v", got, wantTokens)
	}
	bad = in + "    jwtTokens: [{iat: yesterday}]\n"
	if _, err := LoadProjects(strings.NewReader(bad)); err == nil || !strings.Contains(err.Error(), "jwtTokens.iat") {
		t.Fatalf("a token whose iat is not a number: %v, want an error naming it", err)
	}
}
