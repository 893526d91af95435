package enginetest

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"sort"
	"strings"
	gosync "sync"
	"testing"
	"time"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/appstatus"
	"github.com/kubegitops/gitops/internal/testfiles"
	"github.com/kubegitops/gitops/notify"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/yaml"
)

// queries returns the PromQL expressions of the shipped dashboard and
// alert rules.
func queries(t *testing.T) []string {
	t.Helper()
	var out []string
	b, err := os.ReadFile("../../docs/grafana-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatalf("dashboard: %v", err)
	}
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			out = append(out, tg.Expr)
		}
	}
	b, err = os.ReadFile("../../docs/prometheus-alerts.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var rules struct {
		Groups []struct {
			Rules []struct {
				Expr string `json:"expr"`
			} `json:"rules"`
		} `json:"groups"`
	}
	if err := yaml.Unmarshal(b, &rules); err != nil {
		t.Fatalf("alerts: %v", err)
	}
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			out = append(out, r.Expr)
		}
	}
	if len(out) < 10 {
		t.Fatalf("only %d queries found", len(out))
	}
	return out
}

// A series name (ours or Argo CD's), with its label matchers if any.
var seriesRef = regexp.MustCompile(`\b((?:argocd|gitops)_[a-z_]+)(\{[^}]*\})?`)
var matcher = regexp.MustCompile(`([a-z_]+)\s*(?:=~|!~|!=|=)`)

func TestDashboardAndAlertSeriesAreExported(t *testing.T) {
	ns := cluster.TestNamespace(t)
	reg := prometheus.NewRegistry()

	// A receiver that works and a service whose port refuses: both
	// notification counters get series.
	recv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer recv.Close()
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	closed := ln.Addr().String()
	ln.Close()
	cfg, err := notify.Load(notify.WithCatalog(map[string]string{
		"service.webhook.ok":          "url: " + recv.URL,
		"service.webhook.down":        "url: http://" + closed,
		"template.app-sync-succeeded": "webhook: {ok: {method: POST, body: ok}, down: {method: POST, body: x}}",
	}), nil, notify.DefaultLoadOptions())
	if err != nil {
		t.Fatal(err)
	}
	dir := testfiles.Tree(t, map[string]string{"app/web.yaml": testfiles.WebApp})
	app := &gitops.Application{Spec: gitops.ApplicationSpec{
		Source:      &gitops.ApplicationSource{RepoURL: dir, Path: "app"},
		Destination: gitops.ApplicationDestination{Name: "in-cluster", Namespace: ns},
		SyncPolicy:  &gitops.SyncPolicy{Automated: &gitops.SyncPolicyAutomated{}},
	}}
	app.Name, app.Namespace = ns, "argocd"
	app.Annotations = map[string]string{"notifications.argoproj.io/subscribe.on-sync-succeeded.ok": "", "notifications.argoproj.io/subscribe.on-sync-succeeded.down": ""}
	var engine *gitops.Engine
	ctl, err := notify.NewController(cfg, notify.ControllerOptions{Registerer: reg,
		Retry:       wait.Backoff{Steps: 2, Duration: 10 * time.Millisecond},
		Application: func(name string) (*gitops.Application, bool) { return app, name == app.Name },
		Status: func(name string) (appstatus.Status, bool) {
			return engine.Apps().AppStatus(v1alpha1.AppKey{Name: name})
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	opts := gitops.DefaultOptions()
	opts.Clusters = []gitops.ClusterConfig{{Name: "in-cluster", Server: "https://kubernetes.default.svc", Config: cluster.Config()}}
	opts.Interval, opts.Registerer, opts.ArgoMetrics, opts.Notify = time.Hour, reg, true, ctl.Notify
	if engine, err = gitops.New(opts); err != nil {
		t.Fatal(err)
	}
	defer engine.Close()
	ctx, cancel := context.WithCancel(context.Background())
	var wg gosync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); _ = ctl.Run(ctx) }()
	go func() { defer wg.Done(); _ = engine.Run(ctx, []gitops.Application{*app}) }()
	defer func() { cancel(); wg.Wait() }()

	families := map[string]*dto.MetricFamily{}
	waitFor(t, "a sync, its notifications and the app's status", func() bool {
		st, ok := engine.Apps().AppStatus(v1alpha1.KeyOf(app))
		if !ok || st.Sync != appstatus.Synced || !ctl.Idle() {
			return false
		}
		got, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range got {
			families[f.GetName()] = f
		}
		return families["gitops_notifications_failed_total"] != nil && families["gitops_notifications_sent_total"] != nil
	})

	// argocd_app_info says what the engine says.
	info := families["argocd_app_info"]
	if info == nil || len(info.Metric) != 1 || labelOf(info.Metric[0], "sync_status") != "Synced" ||
		labelOf(info.Metric[0], "dest_server") != "https://kubernetes.default.svc" || labelOf(info.Metric[0], "name") != app.Name {
		t.Errorf("argocd_app_info: %v", info)
	}
	checked := map[string]bool{}
	for _, q := range queries(t) {
		for _, m := range seriesRef.FindAllStringSubmatch(q, -1) {
			name := m[1]
			f := families[name]
			if f == nil {
				if base := strings.TrimSuffix(name, "_bucket"); base != name && families[base] != nil && families[base].GetType() == dto.MetricType_HISTOGRAM {
					f = families[base]
				}
			}
			if f == nil {
				t.Errorf("%q queries %s, which is not exported", q, name)
				continue
			}
			checked[name] = true
			for _, lm := range matcher.FindAllStringSubmatch(m[2], -1) {
				if !hasLabel(f, lm[1]) {
					t.Errorf("%q matches on %s{%s}, a label it does not have", q, name, lm[1])
				}
			}
		}
	}
	names := make([]string, 0, len(checked))
	for n := range checked {
		names = append(names, n)
	}
	sort.Strings(names)
	t.Logf("series checked: %v", names)
}

func labelOf(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

func hasLabel(f *dto.MetricFamily, name string) bool {
	for _, m := range f.Metric {
		for _, l := range m.GetLabel() {
			if l.GetName() == name {
				return true
			}
		}
	}
	return false
}

// counterValue is the value of the counter series of family name with
// exactly labels, 0 when there is none yet.
func counterValue(t *testing.T, reg *prometheus.Registry, name string, labels map[string]string) float64 {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.Metric {
			ok := len(m.GetLabel()) == len(labels)
			for _, l := range m.GetLabel() {
				ok = ok && labels[l.GetName()] == l.GetValue()
			}
			if ok {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}
