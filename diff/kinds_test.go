package diff

import (
	"context"
	"testing"
)

const emptyRulesRole = `
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: empty-rules}
rules: []
`

const aggregatedRole = `
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: aggregated}
aggregationRule:
  clusterRoleSelectors:
  - matchLabels: {example.com/aggregate-to-aggregated: "true"}
rules:
- {apiGroups: [""], resources: [configmaps], verbs: [get]}
`

const unorderedEndpoints = `
apiVersion: v1
kind: Endpoints
metadata: {name: external, namespace: default}
subsets:
- addresses: [{ip: 10.0.0.9}, {ip: 10.0.0.2}]
  ports: [{name: metrics, port: 9090}, {name: http, port: 80, protocol: TCP}]
- addresses: [{ip: 10.0.1.1}]
  ports: [{name: dns, port: 53, protocol: UDP}]
`

const sortedEndpoints = `
apiVersion: v1
kind: Endpoints
metadata: {name: external, namespace: default}
subsets:
- addresses: [{ip: 10.0.1.1}]
  ports: [{name: dns, port: 53, protocol: UDP}]
- addresses: [{ip: 10.0.0.2}, {ip: 10.0.0.9}]
  ports: [{name: http, port: 80, protocol: TCP}, {name: metrics, port: 9090, protocol: TCP}]
`

// TestEmptyRoleRulesAreAbsent: rules: [] and no rules are one state (the
// server stores both as null). The comparison already takes an empty list
// for absence; the RBAC rule makes the desired object shown and patched
// from say so too.
func TestEmptyRoleRulesAreAbsent(t *testing.T) {
	d := mustDiffer(t, DefaultOptions())
	desired := mustObject(t, emptyRulesRole)
	live := desired.DeepCopy()
	delete(live.Object, "rules")
	res, err := d.Diff(context.Background(), desired, live)
	if err != nil {
		t.Fatal(err)
	}
	if res.Modified {
		t.Fatalf("empty rules against none: %v\n%s", res.Changes, res.Text)
	}
	if _, ok := res.Desired.Object["rules"]; ok {
		t.Fatalf("the normalised desired role keeps rules: %v", res.Desired.Object["rules"])
	}
	d.norm.byKind = nil
	if res, err = d.Diff(context.Background(), desired, live); err != nil || res.Desired.Object["rules"] == nil {
		t.Fatalf("without the RBAC rule the desired role has no empty rules (err %v): the test proves nothing", err)
	}
}

func TestIgnoreAggregatedRoles(t *testing.T) {
	desired := mustObject(t, aggregatedRole)
	live := desired.DeepCopy()
	live.Object["rules"] = []any{map[string]any{"apiGroups": []any{"apps"}, "resources": []any{"deployments"}, "verbs": []any{"list"}}}
	for _, ignore := range []bool{false, true} {
		opts := DefaultOptions()
		opts.IgnoreAggregatedRoles = ignore
		res, err := mustDiffer(t, opts).Diff(context.Background(), desired, live)
		if err != nil {
			t.Fatal(err)
		}
		if res.Modified == ignore {
			t.Errorf("IgnoreAggregatedRoles=%v: modified %v: %v", ignore, res.Modified, res.Changes)
		}
	}
	// A ClusterRole without an aggregationRule keeps its rules compared.
	plain := desired.DeepCopy()
	delete(plain.Object, "aggregationRule")
	plainLive := live.DeepCopy()
	delete(plainLive.Object, "aggregationRule")
	opts := DefaultOptions()
	opts.IgnoreAggregatedRoles = true
	if res, err := mustDiffer(t, opts).Diff(context.Background(), plain, plainLive); err != nil || !res.Modified {
		t.Errorf("plain ClusterRole with other rules: modified %v, err %v", res.Modified, err)
	}
}

func TestEndpointsOrderAndProtocol(t *testing.T) {
	d := mustDiffer(t, DefaultOptions())
	desired, live := mustObject(t, unorderedEndpoints), mustObject(t, sortedEndpoints)
	res, err := d.Diff(context.Background(), desired, live)
	if err != nil {
		t.Fatal(err)
	}
	if res.Modified {
		t.Fatalf("same endpoints in another order: %v\n%s", res.Changes, res.Text)
	}
	// A real change is still one.
	live.Object["subsets"].([]any)[1].(map[string]any)["addresses"].([]any)[0].(map[string]any)["ip"] = "10.0.0.3"
	if res, err = d.Diff(context.Background(), desired, live); err != nil || !res.Modified {
		t.Fatalf("changed address: modified %v, err %v", res.Modified, err)
	}
	d.norm.byKind = nil
	if res, err = d.Diff(context.Background(), desired, mustObject(t, sortedEndpoints)); err != nil || !res.Modified {
		t.Fatalf("without the Endpoints rule: modified %v, err %v (the test proves nothing)", res.Modified, err)
	}
}
