package argocdcm

import (
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubegitops/gitops/autosync"
	"github.com/kubegitops/gitops/internal/argodocs"
)

// docsConfigMap reads a ConfigMap of docs/operator-manual of Argo CD's
// release, as it is.
func docsConfigMap(t *testing.T, name string) *corev1.ConfigMap {
	t.Helper()
	raw := argodocs.ForTest(t).MustReadFile(t, "docs/operator-manual/"+name)
	cm := &corev1.ConfigMap{}
	if err := yaml.Unmarshal(raw, cm); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if len(cm.Data) == 0 {
		t.Fatalf("%s: no data", name)
	}
	return cm
}

// TestParamKeysCoverArgoCDDocs walks the docs' argocd-cmd-params-cm.yaml:
// every key has an entry in ParamKeys, and every key of a component the
// operator plays is applied or says why not.
func TestParamKeysCoverArgoCDDocs(t *testing.T) {
	cm := docsConfigMap(t, "argocd-cmd-params-cm.yaml")
	for key := range cm.Data {
		k, ok := LookupParam(key)
		if !ok {
			t.Errorf("%s: not in ParamKeys", key)
			continue
		}
		if k.Use == UseOtherComponent {
			continue
		}
		if k.Effect == "" {
			t.Errorf("%s: %s, without a word of what or why", key, k.Use)
		}
	}
}

// TestParamKeysTable: the table's applied keys are each read by a parser
// (or with the self-heal backoff), and every parser reads a key the table
// says is applied; each key of a component played names one.
func TestParamKeysTable(t *testing.T) {
	backoff := []string{"controller.self.heal.backoff.timeout.seconds", "controller.self.heal.backoff.factor",
		"controller.self.heal.backoff.cap.seconds", "controller.self.heal.backoff.cooldown.seconds"}
	seen := map[string]bool{}
	for _, k := range ParamKeys() {
		if seen[k.Name] {
			t.Errorf("%s: twice in the table", k.Name)
		}
		seen[k.Name] = true
		_, parsed := paramParsers[k.Name]
		if k.Use == UseApplied && !parsed && !slices.Contains(backoff, k.Name) {
			t.Errorf("%s: applied, but no parser reads it", k.Name)
		}
		if k.Use != UseApplied && parsed {
			t.Errorf("%s: %s, but a parser reads it", k.Name, k.Use)
		}
		if k.Use != UseOtherComponent && len(k.Components) == 0 {
			t.Errorf("%s: no component", k.Name)
		}
	}
	for key := range paramParsers {
		if !seen[key] {
			t.Errorf("parser of %s, which the table does not list", key)
		}
	}
}

// TestParseArgoCDDocsParams parses the docs' argocd-cmd-params-cm.yaml as
// it is: its documented values apply (Argo CD's log defaults among them,
// never flagged), and the only keys refused ask for what this module does
// not do, by name.
func TestParseArgoCDDocsParams(t *testing.T) {
	cm := docsConfigMap(t, "argocd-cmd-params-cm.yaml")
	p, err := ParseParams(cm.Data)
	refused := map[string]bool{}
	if err != nil {
		for key, se := range settingErrors(t, err) {
			if se.Unwrap() == nil || !strings.Contains(se.Error(), "not supported") {
				t.Errorf("%s: %v, want only unsupported behaviour refused", key, se)
			}
			refused[key] = true
		}
	}
	want := []string{"applicationsetcontroller.enable.git.submodule", "applicationsetcontroller.enable.new.git.file.globbing",
		"reposerver.enable.git.submodule"}
	if got := slices.Sorted(maps.Keys(refused)); !slices.Equal(got, want) {
		t.Errorf("refused %v, want %v", got, want)
	}
	if p.Log != (LogParams{Level: "info", Format: "json"}) || p.StatusProcessors != 20 || p.OperationProcessors != 10 ||
		p.RepoServerTimeout != time.Minute || p.RenderParallelism != 1 || p.KubectlParallelism != 20 ||
		p.Client.QPS != 50 || p.Client.Burst != 100 || p.Client.RetryBaseBackoff != 100*time.Millisecond ||
		p.SyncWaveDelay == nil || *p.SyncWaveDelay != 2*time.Second || p.SyncTimeout != -1 || p.DirectoryBytes != 10_000_000 ||
		p.RepoErrorGracePeriod != 3*time.Minute {
		t.Errorf("application controller and repo server params %+v", p)
	}
	if b := p.SelfHealBackoff; b == nil || *b != autosync.DefaultBackoff() {
		t.Errorf("self-heal backoff %+v", p.SelfHealBackoff)
	}
	if strings.Join(p.Metrics.AppLabels, ",") != "team,env" || strings.Join(p.Metrics.AppConditions, ",") != "OrphanedResourceWarning" ||
		strings.Join(p.Metrics.ClusterLabels, ",") != "environment" {
		t.Errorf("metrics %+v", p.Metrics)
	}
	a := p.AppSets
	if strings.Join(a.Namespaces, ",") != "argocd,argocd-appsets-*" || a.RequeueAfter != 3*time.Minute || a.ConcurrentReconciliations != 10 ||
		strings.Join(a.PreservedLabels, ",") != "acme.com/label1,acme.com/label2" || a.SCMProviders == nil || !*a.SCMProviders ||
		len(a.AllowedSCMProviders) != 2 || a.ProgressiveSyncs || a.MaxStatusResources != 5000 || a.Queue.BucketSize != 500 {
		t.Errorf("ApplicationSet params %+v", a)
	}
	if p.RedisServer != "argocd-redis:6379" {
		t.Errorf("redis.server %q, want the docs' argocd-redis:6379", p.RedisServer)
	}
	if p.Notifications.Processors != 1 || p.Notifications.Log.Level != "info" {
		t.Errorf("notifications params %+v", p.Notifications)
	}
	// Every key that sets nothing here is named, once.
	for _, ig := range p.Ignored {
		if !strings.Contains(strings.Join(p.Warnings, "\n"), ParamsConfigMapName+" "+ig.Key+":") {
			t.Errorf("%s ignored but not named", ig.Key)
		}
	}
	for _, key := range []string{"server.insecure", "controller.repo.server.plaintext", "reposerver.tls.ciphers", "redis.compression", "dexserver.log.level"} {
		if !slices.ContainsFunc(p.Ignored, func(ig Ignored) bool { return ig.Key == key }) {
			t.Errorf("%s not named as ignored", key)
		}
	}
	opts := Defaults()
	p.Apply(&opts)
	if opts.ReconcileWorkers != 20 || opts.SyncWorkers != 10 || opts.Sync.WaveDelay != 2*time.Second || opts.ClusterWriteLimit != 20 ||
		opts.QPS != 50 || opts.Burst != 100 || opts.RenderParallelism != 1 || opts.Sync.Timeout >= 0 {
		t.Errorf("options: workers %d/%d wave delay %s write limit %d QPS %v/%d render parallelism %d sync timeout %s",
			opts.ReconcileWorkers, opts.SyncWorkers, opts.Sync.WaveDelay, opts.ClusterWriteLimit, opts.QPS, opts.Burst, opts.RenderParallelism, opts.Sync.Timeout)
	}
}

// TestParamsFixedSelfHealTimeout: with the backoff's timeout 0, Argo CD
// waits controller.self.heal.timeout.seconds between self-heals.
func TestParamsFixedSelfHealTimeout(t *testing.T) {
	p, err := ParseParams(map[string]string{"controller.self.heal.backoff.timeout.seconds": "0", "controller.self.heal.timeout.seconds": "15"})
	if err != nil {
		t.Fatal(err)
	}
	if b := p.SelfHealBackoff; b == nil || b.Duration != 15*time.Second || b.Factor != 1 || b.Cap != 15*time.Second {
		t.Errorf("self-heal backoff %+v, want a fixed 15 s", p.SelfHealBackoff)
	}
}
