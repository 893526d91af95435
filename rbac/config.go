package rbac

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"
)

// The keys of argocd-rbac-cm that Load reads.
const (
	KeyPolicyCSV     = "policy.csv"
	KeyPolicyDefault = "policy.default"
	KeyMatchMode     = "policy.matchMode"
	KeyScopes        = "scopes"
	// KeyLogEnforce is Argo CD 2's switch for RBAC on logs; Argo CD 3
	// always enforces it, and so does this package: only "true" is
	// accepted.
	KeyLogEnforce = "server.rbac.log.enforce.enable"
)

// DefaultScopes returns the OIDC claims whose values are a user's groups
// when argocd-rbac-cm sets no scopes: [groups].
func DefaultScopes() []string { return []string{"groups"} }

// Config is argocd-rbac-cm as Argo CD reads it.
type Config struct {
	// Policy are the lines of policy.csv, then of each policy.<name>.csv
	// key in key order (Argo CD's overlays), added to the built-in policy.
	Policy []Rule
	// DefaultRole (policy.default) is checked first for every subject; what
	// it allows no deny takes away. Empty: none.
	DefaultRole string
	// MatchMode (policy.matchMode) is glob (the default) or regex.
	MatchMode MatchMode
	// Scopes are the OIDC claims whose values are groups; [groups] unless
	// scopes is set.
	Scopes []string
}

// Load reads argocd-rbac-cm's data. A key Argo CD does not read, a value
// it would not accept and a malformed policy line are each an *Error
// naming the key (and the line); all of them are reported, joined.
func Load(data map[string]string) (*Config, error) {
	cfg := &Config{MatchMode: MatchGlob, Scopes: DefaultScopes(), DefaultRole: strings.TrimSpace(data[KeyPolicyDefault])}
	var errs []error
	keys := make([]string, 0, len(data))
	for k := range data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var policyKeys []string
	for _, k := range keys {
		v := data[k]
		switch {
		case k == KeyPolicyCSV:
			policyKeys = append([]string{k}, policyKeys...)
		case strings.HasPrefix(k, "policy.") && strings.HasSuffix(k, ".csv") && len(k) > len("policy..csv"):
			policyKeys = append(policyKeys, k)
		case k == KeyPolicyDefault:
		case k == KeyMatchMode:
			switch mode := MatchMode(strings.TrimSpace(v)); mode {
			case "", MatchGlob, MatchRegex:
				if mode != "" {
					cfg.MatchMode = mode
				}
			default:
				errs = append(errs, &Error{Source: k, Err: fmt.Errorf("%w: want glob or regex, got %q", ErrInvalidValue, v)})
			}
		case k == KeyScopes:
			scopes, err := parseScopes(v)
			if err != nil {
				errs = append(errs, &Error{Source: k, Err: err})
			} else if scopes != nil {
				cfg.Scopes = scopes
			}
		case k == KeyLogEnforce:
			if strings.TrimSpace(v) != "true" {
				errs = append(errs, &Error{Source: k, Err: fmt.Errorf("%w: logs are always subject to RBAC (as in Argo CD 3); only \"true\" is accepted, got %q", ErrInvalidValue, v)})
			}
		default:
			errs = append(errs, &Error{Source: k, Err: fmt.Errorf("%w (want policy.csv, policy.<name>.csv, policy.default, policy.matchMode, scopes)", ErrUnknownKey)})
		}
	}
	for _, k := range policyKeys {
		rules, perrs := parsePolicy(k, data[k])
		errs = append(errs, perrs...)
		cfg.Policy = append(cfg.Policy, rules...)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if err := errors.Join(compileRules(newMatcher(cfg.MatchMode), cfg.Policy)...); err != nil {
		return nil, err
	}
	return cfg, nil
}

// parseScopes reads scopes as Argo CD does: a YAML list ("[groups, email]").
// Empty means the default.
func parseScopes(v string) ([]string, error) {
	if strings.TrimSpace(v) == "" {
		return nil, nil
	}
	var scopes []string
	if err := yaml.Unmarshal([]byte(v), &scopes); err != nil {
		return nil, fmt.Errorf("%w: want a YAML list of claim names such as [groups, email]: %v", ErrInvalidValue, err)
	}
	for i, s := range scopes {
		if strings.TrimSpace(s) == "" {
			return nil, fmt.Errorf("%w: scope %d is empty", ErrInvalidValue, i+1)
		}
	}
	return scopes, nil
}
