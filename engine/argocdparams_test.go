package engine

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kubegitops/gitops/render"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
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
	p, err := ParseArgoCDParams(map[string]string{
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
	opts := ArgoCDDefaults()
	p.Apply(&opts)
	if opts.ReconcileWorkers != 7 || opts.SyncWorkers != 3 || opts.RenderTimeout != 90*time.Second ||
		opts.RenderParallelism != 5 || !opts.ServerSideDiff {
		t.Errorf("options: reconcile workers %d, sync workers %d, render timeout %s, render parallelism %d, server-side diff %v",
			opts.ReconcileWorkers, opts.SyncWorkers, opts.RenderTimeout, opts.RenderParallelism, opts.ServerSideDiff)
	}
}

func TestParseArgoCDParamsUnsetKeysKeepOptions(t *testing.T) {
	p, err := ParseArgoCDParams(nil)
	if err != nil {
		t.Fatal(err)
	}
	opts, want := ArgoCDDefaults(), ArgoCDDefaults()
	p.Apply(&opts)
	if opts.ReconcileWorkers != want.ReconcileWorkers || opts.SyncWorkers != want.SyncWorkers ||
		opts.RenderTimeout != 0 || opts.RenderParallelism != want.RenderParallelism || opts.ServerSideDiff != want.ServerSideDiff {
		t.Errorf("empty params changed the options")
	}
}

func TestParseArgoCDParamsNoParallelismLimit(t *testing.T) {
	p, err := ParseArgoCDParams(map[string]string{"reposerver.parallelism.limit": "0"})
	if err != nil {
		t.Fatal(err)
	}
	opts := ArgoCDDefaults()
	p.Apply(&opts)
	if opts.RenderParallelism < 1024 {
		t.Errorf("render parallelism %d for no limit, want at least 1024", opts.RenderParallelism)
	}
}

func TestParseArgoCDParamsRefusesByName(t *testing.T) {
	p, err := ParseArgoCDParams(map[string]string{
		"controller.status.processors":           "many",  // malformed
		"controller.operation.processors":        "0",     // malformed: at least 1
		"controller.sync.timeout.seconds":        "600",   // unsupported behaviour
		"controller.resource.health.persist":     "true",  // unsupported behaviour
		"controller.no.such.key":                 "x",     // unknown
		"server.insecure":                        "true",  // another component's: a warning
		"controller.diff.server.side":            "maybe", // malformed
		"controller.repo.server.timeout.seconds": "120",   // fine: the rest apply
	})
	errs := settingErrors(t, err)
	for key, want := range map[string]error{
		"controller.status.processors":       ErrSettingMalformed,
		"controller.operation.processors":    ErrSettingMalformed,
		"controller.diff.server.side":        ErrSettingMalformed,
		"controller.sync.timeout.seconds":    ErrSettingUnsupported,
		"controller.resource.health.persist": ErrSettingUnsupported,
		"controller.no.such.key":             ErrSettingUnsupported,
	} {
		se := errs[key]
		if se == nil {
			t.Errorf("%s not refused", key)
			continue
		}
		if !errors.Is(se, want) || se.ConfigMap != ArgoCDParamsConfigMapName || !strings.Contains(se.Error(), "argocd-cmd-params-cm "+key) {
			t.Errorf("%s: %v (want %v, naming the ConfigMap and key)", key, se, want)
		}
	}
	if len(errs) != 6 {
		t.Errorf("%d keys refused, want 6: %v", len(errs), err)
	}
	if !strings.Contains(errs["controller.no.such.key"].Error(), "unknown key") {
		t.Errorf("unknown key: %v", errs["controller.no.such.key"])
	}
	if len(p.Warnings) != 1 || !strings.Contains(p.Warnings[0], "server.insecure") {
		t.Errorf("warnings %q, want one naming server.insecure", p.Warnings)
	}
	if p.RepoServerTimeout != 2*time.Minute || p.StatusProcessors != 0 {
		t.Errorf("the keys that parsed: %+v", p)
	}
}

func TestParseArgoCDSettingsPartialKeepsTheRest(t *testing.T) {
	data := map[string]string{"timeout.reconciliation": "soon", "timeout.hard.reconciliation": "1h",
		"resource.customizations.health.ConfigMap": "hs = {status = \"Healthy\"}\nreturn hs\n"}
	s, err := ParseArgoCDSettingsPartial(data)
	errs := settingErrors(t, err)
	if se := errs["timeout.reconciliation"]; len(errs) != 1 || se == nil || !errors.Is(se, ErrSettingMalformed) ||
		!strings.Contains(se.Error(), "argocd-cm timeout.reconciliation") {
		t.Fatalf("errors %v, want one naming argocd-cm timeout.reconciliation", err)
	}
	if s == nil || s.HardReconciliation != time.Hour || s.HealthOverrides["ConfigMap"] == "" || s.Reconciliation != 0 {
		t.Fatalf("settings of the keys that parsed: %+v", s)
	}
	if all, err := ParseArgoCDSettings(data); all != nil || err == nil {
		t.Errorf("ParseArgoCDSettings of a bad key: %v, %v; want no settings and the error", all, err)
	}
}

// blockingRenderer renders nothing until its context ends.
type blockingRenderer struct{}

func (blockingRenderer) Render(ctx context.Context, _ render.Input) ([]*unstructured.Unstructured, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

func TestRenderTimeoutNamesTheApp(t *testing.T) {
	opts := DefaultOptions()
	opts.Clusters = []ClusterConfig{{Name: "offline", Server: "https://offline.invalid"}}
	opts.Renderers = map[render.Kind]render.Renderer{render.KindPlain: blockingRenderer{}}
	opts.RenderTimeout = 200 * time.Millisecond
	e, err := newWithBuiltins(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	app := dirApp("slow", repoDir(t, map[string]string{"app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n"}), "default")
	app.Spec.Destination.Server = "https://offline.invalid"
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	start := time.Now()
	_, _, err = e.Render(ctx, app)
	var te *RenderTimeoutError
	if !errors.As(err, &te) || te.App != "slow" || te.Timeout != opts.RenderTimeout || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("render past the timeout: %T %v, want a *RenderTimeoutError naming app slow", err, err)
	}
	if !strings.Contains(err.Error(), "application slow") {
		t.Errorf("error %q does not name the app", err)
	}
	if took := time.Since(start); took > 30*time.Second {
		t.Errorf("render returned after %s", took)
	}
}
