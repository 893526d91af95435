package argocdcm

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// settingErrors returns the *SettingErrors joined in err, by key.
func settingErrors(t *testing.T, err error) map[string]*SettingError {
	t.Helper()
	out := map[string]*SettingError{}
	j, ok := err.(interface{ Unwrap() []error })
	if !ok {
		t.Fatalf("want joined setting errors, got %T: %v", err, err)
	}
	for _, e := range j.Unwrap() {
		var se *SettingError
		if !errors.As(e, &se) {
			t.Fatalf("not a *SettingError: %T %v", e, e)
		}
		out[se.Key] = se
	}
	return out
}

func TestParseArgoCDParamsMapsEachKey(t *testing.T) {
	p, err := ParseParams(map[string]string{
		"controller.status.processors":           "7",
		"controller.operation.processors":        "3",
		"controller.repo.server.timeout.seconds": "90",
		"reposerver.parallelism.limit":           "5",
		"controller.diff.server.side":            "true",
		"controller.self.heal.timeout.seconds":   "9",
		"application.namespaces":                 "team-a, team-b",
		// The engine's own behaviour, spelled out: accepted.
		"controller.self.heal.backoff.factor": "3",
		"controller.sync.timeout.seconds":     "0",
	})
	if err != nil {
		t.Fatal(err)
	}
	if p.SelfHealTimeout != 9*time.Second || strings.Join(p.ApplicationNamespaces, ",") != "team-a,team-b" || len(p.Warnings) != 0 {
		t.Errorf("params %+v", p)
	}
	// The backoff's factor is set; its other keys keep Argo CD's defaults.
	if b := p.SelfHealBackoff; b == nil || b.Duration != 2*time.Second || b.Factor != 3 || b.Cap != 5*time.Minute {
		t.Errorf("self-heal backoff %+v", p.SelfHealBackoff)
	}
	opts := Defaults()
	p.Apply(&opts)
	if opts.ReconcileWorkers != 7 || opts.SyncWorkers != 3 || opts.RenderTimeout != 90*time.Second ||
		opts.RenderParallelism != 5 || !opts.ServerSideDiff {
		t.Errorf("options: reconcile workers %d, sync workers %d, render timeout %s, render parallelism %d, server-side diff %v",
			opts.ReconcileWorkers, opts.SyncWorkers, opts.RenderTimeout, opts.RenderParallelism, opts.ServerSideDiff)
	}
}

func TestParseArgoCDParamsUnsetKeysKeepOptions(t *testing.T) {
	p, err := ParseParams(nil)
	if err != nil {
		t.Fatal(err)
	}
	opts, want := Defaults(), Defaults()
	p.Apply(&opts)
	if opts.ReconcileWorkers != want.ReconcileWorkers || opts.SyncWorkers != want.SyncWorkers ||
		opts.RenderTimeout != 0 || opts.RenderParallelism != want.RenderParallelism || opts.ServerSideDiff != want.ServerSideDiff {
		t.Errorf("empty params changed the options")
	}
}

func TestParseArgoCDParamsNoParallelismLimit(t *testing.T) {
	p, err := ParseParams(map[string]string{"reposerver.parallelism.limit": "0"})
	if err != nil {
		t.Fatal(err)
	}
	opts := Defaults()
	p.Apply(&opts)
	if opts.RenderParallelism < 1024 {
		t.Errorf("render parallelism %d for no limit, want at least 1024", opts.RenderParallelism)
	}
}

func TestParseArgoCDParamsRefusesByName(t *testing.T) {
	p, err := ParseParams(map[string]string{
		"controller.status.processors":           "many",  // malformed
		"controller.operation.processors":        "0",     // malformed: at least 1
		"controller.log.level":                   "loud",  // malformed
		"reposerver.enable.git.submodule":        "true",  // behaviour this module does not have
		"hydrator.enabled":                       "yes",   // malformed
		"controller.no.such.key":                 "x",     // unknown key of a component played
		"server.insecure":                        "true",  // another component's: named
		"controller.resource.health.persist":     "true",  // meaningless here: named
		"controller.diff.server.side":            "maybe", // malformed
		"controller.repo.server.timeout.seconds": "120",   // fine: the rest apply
		"controller.sync.timeout.seconds":        "600",   // fine
	})
	errs := settingErrors(t, err)
	for key, want := range map[string]error{
		"controller.status.processors":    ErrMalformed,
		"controller.operation.processors": ErrMalformed,
		"controller.log.level":            ErrMalformed,
		"controller.diff.server.side":     ErrMalformed,
		"reposerver.enable.git.submodule": ErrUnsupported,
		"hydrator.enabled":                ErrMalformed,
		"controller.no.such.key":          ErrUnsupported,
	} {
		se := errs[key]
		if se == nil {
			t.Errorf("%s not refused", key)
			continue
		}
		if !errors.Is(se, want) || se.ConfigMap != ParamsConfigMapName || !strings.Contains(se.Error(), "argocd-cmd-params-cm "+key) {
			t.Errorf("%s: %v (want %v, naming the ConfigMap and key)", key, se, want)
		}
	}
	if len(errs) != 7 {
		t.Errorf("%d keys refused, want 7: %v", len(errs), err)
	}
	if !strings.Contains(errs["controller.no.such.key"].Error(), "unknown key") {
		t.Errorf("unknown key: %v", errs["controller.no.such.key"])
	}
	if len(p.Warnings) != 2 || !strings.Contains(p.Warnings[0], "controller.resource.health.persist") || !strings.Contains(p.Warnings[1], "server.insecure") {
		t.Errorf("warnings %q, want two naming controller.resource.health.persist and server.insecure", p.Warnings)
	}
	if p.RepoServerTimeout != 2*time.Minute || p.SyncTimeout != 10*time.Minute || p.StatusProcessors != 0 {
		t.Errorf("the keys that parsed: %+v", p)
	}
}

func TestParseArgoCDSettingsPartialKeepsTheRest(t *testing.T) {
	data := map[string]string{"timeout.reconciliation": "soon", "timeout.hard.reconciliation": "1h",
		"resource.customizations.health.ConfigMap": "hs = {status = \"Healthy\"}\nreturn hs\n"}
	s, err := ParsePartial(data)
	errs := settingErrors(t, err)
	if se := errs["timeout.reconciliation"]; len(errs) != 1 || se == nil || !errors.Is(se, ErrMalformed) ||
		!strings.Contains(se.Error(), "argocd-cm timeout.reconciliation") {
		t.Fatalf("errors %v, want one naming argocd-cm timeout.reconciliation", err)
	}
	if s == nil || s.HardReconciliation != time.Hour || s.HealthOverrides["ConfigMap"] == "" || s.Reconciliation != 0 {
		t.Fatalf("settings of the keys that parsed: %+v", s)
	}
	if all, err := Parse(data); all != nil || err == nil {
		t.Errorf("Parse of a bad key: %v, %v; want no settings and the error", all, err)
	}
}
