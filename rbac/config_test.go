package rbac

import (
	"errors"
	"reflect"
	"testing"
)

// TestLoadErrors: every key Argo CD does not read, value it would not
// accept and malformed line is an *Error naming the key and line.
func TestLoadErrors(t *testing.T) {
	for name, tc := range map[string]struct {
		cm     map[string]string
		kind   error
		source string
		line   int
	}{
		"unknown key":         {map[string]string{"policy.cvs": "g, a, role:admin"}, ErrUnknownKey, "policy.cvs", 0},
		"policy.default typo": {map[string]string{"policy.defualt": "role:readonly"}, ErrUnknownKey, "policy.defualt", 0},
		"match mode":          {map[string]string{"policy.matchMode": "regexp"}, ErrInvalidValue, "policy.matchMode", 0},
		"scopes not a list":   {map[string]string{"scopes": "groups: [a]"}, ErrInvalidValue, "scopes", 0},
		"log enforce off":     {map[string]string{"server.rbac.log.enforce.enable": "false"}, ErrInvalidValue, "server.rbac.log.enforce.enable", 0},
		"four fields":         {map[string]string{"policy.csv": "# c\np, role:x, applications, get, */*, allow\np, role:x, applications, get, */*\n"}, ErrMalformedLine, "policy.csv", 3},
		"bad effect":          {map[string]string{"policy.csv": "p, role:x, applications, get, */*, allowed"}, ErrMalformedLine, "policy.csv", 1},
		"three-field g":       {map[string]string{"policy.csv": "\n\ng, a, role:x, extra"}, ErrMalformedLine, "policy.csv", 3},
		"not p or g":          {map[string]string{"policy.csv": "r, a, b"}, ErrMalformedLine, "policy.csv", 1},
		"empty field":         {map[string]string{"policy.csv": "p, role:x, , get, */*, allow"}, ErrMalformedLine, "policy.csv", 1},
		"unknown resource":    {map[string]string{"policy.csv": "p, role:x, aplications, get, */*, allow"}, ErrMalformedLine, "policy.csv", 1},
		"bad glob":            {map[string]string{"policy.csv": "p, role:x, applications, get, [a-/*, allow"}, ErrMalformedLine, "policy.csv", 1},
		"bad regex":           {map[string]string{"policy.matchMode": "regex", "policy.csv": "p, role:x, applications, get, (a, allow"}, ErrMalformedLine, "policy.csv", 1},
		"overlay line":        {map[string]string{"policy.csv": "g, a, role:admin", "policy.team.csv": "p, a"}, ErrMalformedLine, "policy.team.csv", 1},
	} {
		_, err := Load(tc.cm)
		var e *Error
		if !errors.As(err, &e) || !errors.Is(err, tc.kind) || e.Source != tc.source || e.Line != tc.line {
			t.Errorf("%s: got %v, want an *Error (%v) naming %s line %d", name, err, tc.kind, tc.source, tc.line)
		}
	}
	// Several problems are all reported.
	_, err := Load(map[string]string{"foo": "x", "policy.csv": "p, a\ng, b"})
	if n := len(err.(interface{ Unwrap() []error }).Unwrap()); n != 3 {
		t.Errorf("got %d errors, want 3: %v", n, err)
	}
}

// TestLoadDefaults: an empty config map means glob matching, scopes
// [groups], no default role and no policy; values are read as Argo CD
// reads them.
func TestLoadDefaults(t *testing.T) {
	cfg, err := Load(nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.MatchMode != MatchGlob || !reflect.DeepEqual(cfg.Scopes, []string{"groups"}) || cfg.DefaultRole != "" || len(cfg.Policy) != 0 {
		t.Errorf("defaults %+v", cfg)
	}
	cfg, err = Load(map[string]string{"scopes": "[groups, email]", "policy.matchMode": "regex", "policy.default": "role:readonly",
		"server.rbac.log.enforce.enable": "true", "policy.b.csv": "g, b, role:admin", "policy.a.csv": "g, a, role:admin", "policy.csv": "g, main, role:admin"})
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, r := range cfg.Policy {
		order = append(order, r.Fields[0]+"@"+r.Source)
	}
	if !reflect.DeepEqual(order, []string{"main@policy.csv", "a@policy.a.csv", "b@policy.b.csv"}) {
		t.Errorf("policy order %v: want policy.csv, then overlays by key", order)
	}
	if cfg.MatchMode != MatchRegex || !reflect.DeepEqual(cfg.Scopes, []string{"groups", "email"}) || cfg.DefaultRole != "role:readonly" {
		t.Errorf("config %+v", cfg)
	}
}

// TestGroupsFromClaims: scopes name the claims whose values are groups
// (string or list); [groups, email] lets an email be bound by a g line.
func TestGroupsFromClaims(t *testing.T) {
	claims := map[string]any{"sub": "u1", "groups": []any{"org:a", 7, "org:b"}, "email": "u@example.com", "roles": []string{"r"}}
	if got := GroupsFromClaims(claims, nil); !reflect.DeepEqual(got, []string{"org:a", "org:b"}) {
		t.Errorf("default scopes: %v", got)
	}
	if got := GroupsFromClaims(claims, []string{"groups", "email", "roles", "missing"}); !reflect.DeepEqual(got, []string{"org:a", "org:b", "u@example.com", "r"}) {
		t.Errorf("groups, email, roles: %v", got)
	}
	cm := map[string]string{"scopes": "[groups, email]", "policy.csv": "g, u@example.com, role:admin\n"}
	cfg, err := Load(cm)
	if err != nil {
		t.Fatal(err)
	}
	e := mustEnforcer(t, cm)
	s := Subject{Name: "u1", Groups: GroupsFromClaims(claims, cfg.Scopes)}
	if d := e.Decide(s, "clusters", "delete", "c"); !d.Allowed || d.Via != "u@example.com" {
		t.Errorf("email scope: %+v", d)
	}
	if e.Enforce(Subject{Name: "u1", Groups: GroupsFromClaims(claims, nil)}, "clusters", "delete", "c") {
		t.Error("without the email scope the email granted admin")
	}
}
