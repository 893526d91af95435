package rbac

import (
	"errors"
	"testing"
)

// resourcePolicy is rbac.md's fine-grained examples: example-user may
// delete Pods of prod-app but not the app; update-only may update the app
// but none of its resources; app-admin may delete the app and its
// resources, except its Pods.
var resourcePolicy = map[string]string{"policy.csv": `p, example-user, applications, delete, default/prod-app, deny
p, example-user, applications, delete/*/Pod/*/*, default/prod-app, allow
p, update-only, applications, update, default/prod-app, allow
p, update-only, applications, update/*, default/prod-app, deny
p, app-admin, applications, delete, default/prod-app, allow
p, app-admin, applications, delete/*/Pod/*, default/prod-app, deny
`}

// TestDecideResource: by default (Argo CD 3) a resource of an app is
// decided by "<action>/<group>/<kind>/<namespace>/<name>" alone; with
// ResourceInheritance (argocd-cm's
// server.rbac.disableApplicationFineGrainedRBACInheritance "false") the
// app-level action grants it first, so a fine-grained deny cannot take it
// away, as rbac.md warns.
func TestDecideResource(t *testing.T) {
	if got := ResourceSubAction(ActionDelete, "", "Pod", "web", "web-0"); got != "delete//Pod/web/web-0" {
		t.Errorf("ResourceSubAction = %q", got)
	}
	cfg, err := Load(resourcePolicy)
	if err != nil {
		t.Fatal(err)
	}
	v3, err := NewEnforcer(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	v2, err := NewEnforcerWithOptions(cfg, nil, EnforcerOptions{ResourceInheritance: true})
	if err != nil {
		t.Fatal(err)
	}
	const app = "default/prod-app"
	for _, tc := range []struct {
		user, action, group, kind string
		v3, v2                    bool
	}{
		{"example-user", ActionDelete, "", "Pod", true, true},
		{"example-user", ActionDelete, "apps", "Deployment", false, false},
		{"update-only", ActionUpdate, "apps", "Deployment", false, true},
		{"update-only", ActionDelete, "", "Pod", false, false},
		// delete on the app alone does not reach its resources in v3.
		{"app-admin", ActionDelete, "apps", "Deployment", false, true},
		{"app-admin", ActionDelete, "", "Pod", false, true},
		// The built-in admin has delete/* and update/*.
		{"admin", ActionDelete, "apps", "Deployment", true, true},
		{"admin", ActionUpdate, "", "ConfigMap", true, true},
	} {
		for _, e := range []struct {
			name string
			enf  *Enforcer
			want bool
		}{{"v3", v3, tc.v3}, {"v2 inheritance", v2, tc.v2}} {
			d := e.enf.DecideResource(user(tc.user), tc.action, app, tc.group, tc.kind, "prod", "web")
			if d.Allowed != e.want {
				t.Errorf("%s: %s %s %s/%s: allowed %v, want %v (%v)", e.name, tc.user, tc.action, tc.group, tc.kind, d.Allowed, e.want, d.Err())
			}
		}
	}
	// The refusal names the fine-grained action and the line that denied it.
	err = v3.DecideResource(user("update-only"), ActionUpdate, app, "apps", "Deployment", "prod", "web").Err()
	want := `permission denied: applications, update/apps/Deployment/prod/web, default/prod-app: update-only: denied by policy.csv line 4 "p, update-only, applications, update/*, default/prod-app, deny"`
	if err == nil || err.Error() != want {
		t.Errorf("refusal:\n got %v\nwant %s", err, want)
	}
	// Other actions are the app's.
	if d := v3.DecideResource(user("admin"), ActionGet, app, "", "Pod", "prod", "web"); !d.Allowed || d.Action != ActionGet {
		t.Errorf("get: %+v", d)
	}
}

// TestInheritanceFromArgoCDCM: Argo CD 3 reads an absent or empty
// server.rbac.disableApplicationFineGrainedRBACInheritance as true (no
// inheritance); "false" turns inheritance on; a value ParseBool does not
// read is an *Error naming the key.
func TestInheritanceFromArgoCDCM(t *testing.T) {
	for v, want := range map[string]bool{"": false, "true": false, "TRUE": false, "1": false, "false": true, "0": true, " false ": true} {
		got, err := InheritanceFromArgoCDCM(map[string]string{KeyDisableFineGrainedInheritance: v})
		if err != nil || got != want {
			t.Errorf("%q: %v %v, want %v", v, got, err, want)
		}
	}
	if got, err := InheritanceFromArgoCDCM(nil); err != nil || got {
		t.Errorf("no argocd-cm: %v %v, want no inheritance", got, err)
	}
	_, err := InheritanceFromArgoCDCM(map[string]string{KeyDisableFineGrainedInheritance: "no"})
	var e *Error
	if !errors.As(err, &e) || !errors.Is(err, ErrInvalidValue) || e.Source != "argocd-cm "+KeyDisableFineGrainedInheritance {
		t.Errorf("bad value: %v", err)
	}
}
