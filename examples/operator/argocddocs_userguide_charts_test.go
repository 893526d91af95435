package main

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/internal/chartserver"
)

// nginxChart is the local copy of bitnamicharts' nginx 15.9.0: a
// ConfigMap naming the release, the chart and the value some-value that
// oci.md's second example sets, and a Deployment (Healthy once kwok runs
// its pod).
func nginxChart(t *testing.T) string {
	t.Helper()
	return chartserver.Chart(t, "nginx", "15.9.0", map[string]string{
		"values.yaml": "some-value: unset\n",
		"templates/cm.yaml": `apiVersion: v1
kind: ConfigMap
metadata: {name: '{{ .Release.Name }}-settings'}
data:
  chart: '{{ .Chart.Name }}-{{ .Chart.Version }}'
  some-value: '{{ index .Values "some-value" }}'
`,
	})
}

// userGuideChartRuns runs the pages' Helm and OCI apps against local
// copies: sealed-secrets 1.16.1 in a Helm repository over HTTP, nginx
// 15.9.0 as a Helm chart in an OCI registry (Helm's registry client
// pushes it at bitnamicharts/nginx), and my-custom-image 1.16.1 as an OCI
// artifact of manifests (one gzipped tar layer, as `oras push` makes
// it). The registries speak plain HTTP on loopback: a repo-creds Secret
// per registry sets insecureOCIForceHttp, the one setting the local
// copies add.
func userGuideChartRuns(t *testing.T, w *userGuideWorld) map[string]userGuideRun {
	t.Helper()
	helmRepo := chartserver.New(t, chartserver.Options{})
	helmRepo.Add(chartserver.WebChart(t, "sealed-secrets", "1.16.1"))
	charts := chartserver.NewRegistry(t, "", "")
	charts.Push("bitnamicharts", nginxChart(t))
	artifacts := chartserver.NewArtifactRegistry(t, chartserver.ArtifactOptions{})
	artifacts.Push("some-user/my-custom-image", "1.16.1", map[string]string{
		"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: my-custom-image}\ndata: {from: oci-artifact}\n",
	})
	for k, v := range map[string]string{
		"https://bitnami.github.io/sealed-secrets":             helmRepo.URL,
		"registry-1.docker.io/bitnamicharts":                   charts.Host + "/bitnamicharts",
		"oci://registry-1.docker.io/bitnamicharts/nginx":       "oci://" + charts.Host + "/bitnamicharts/nginx",
		"oci://registry-1.docker.io/some-user/my-custom-image": artifacts.URL("some-user/my-custom-image"),
		"registry-1.docker.io":                                 charts.Host,
	} {
		w.urls[k] = v
	}
	for name, host := range map[string]string{"charts-registry": charts.Host, "artifacts-registry": artifacts.Host} {
		s := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: name, Labels: map[string]string{"argocd.argoproj.io/secret-type": "repo-creds"}},
			StringData: map[string]string{"type": "oci", "url": "oci://" + host, "insecureOCIForceHttp": "true"},
		}
		if err := w.c.Create(w.ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	get := func(t *testing.T, c client.Client, ns, name string) *corev1.ConfigMap {
		t.Helper()
		m := &corev1.ConfigMap{}
		if err := c.Get(w.ctx, types.NamespacedName{Namespace: ns, Name: name}, m); err != nil {
			t.Errorf("%s/%s: %v", ns, name, err)
		}
		return m
	}
	return map[string]userGuideRun{
		// releaseName sealed-secrets, the chart's version 1.16.1, into kubeseal.
		"docs/user-guide/helm.md#1": {health: "Healthy", check: func(t *testing.T, c client.Client, app *v1alpha1.Application) {
			if m := get(t, c, "kubeseal", "sealed-secrets-settings"); m.Data["version"] != "1.16.1" || m.Labels["chart"] != "sealed-secrets-1.16.1" {
				t.Errorf("sealed-secrets-settings %v %v, want the chart 1.16.1's", m.Labels, m.Data)
			}
			if app.Status.Sync.Revision != "1.16.1" {
				t.Errorf("revision %q, want the chart version 1.16.1", app.Status.Sync.Revision)
			}
		}},
		// A repoURL without oci://: Argo CD reads it as an OCI registry
		// of charts (util/helm IsHelmOciRepo), the release named after
		// the app.
		"docs/user-guide/helm.md#2": {health: "Healthy", check: func(t *testing.T, c client.Client, app *v1alpha1.Application) {
			if m := get(t, c, "nginx", "nginx-settings"); m.Data["chart"] != "nginx-15.9.0" || m.Data["some-value"] != "unset" {
				t.Errorf("nginx-settings %v, want nginx 15.9.0 with its own values", m.Data)
			}
		}},
		// An OCI artifact of manifests at its tag, path ".".
		"docs/user-guide/oci.md#1": {health: "Healthy", check: func(t *testing.T, c client.Client, app *v1alpha1.Application) {
			if m := get(t, c, "my-namespace", "my-custom-image"); m.Data["from"] != "oci-artifact" {
				t.Errorf("my-custom-image %v, want the artifact's ConfigMap", m.Data)
			}
		}},
		// The chart as an OCI source (path "."), its valuesObject applied.
		"docs/user-guide/oci.md#2": {health: "Healthy", check: func(t *testing.T, c client.Client, app *v1alpha1.Application) {
			if m := get(t, c, "nginx", "nginx-settings"); m.Data["chart"] != "nginx-15.9.0" || m.Data["some-value"] != "foo" {
				t.Errorf("nginx-settings %v, want nginx 15.9.0 with the valuesObject's some-value: foo", m.Data)
			}
		}},
		// A docs bug: the page says a registry host in repoURL with the
		// chart's repository in path works with a Helm repository
		// credential, but Argo CD v3.6.1's repo server reads a source
		// with neither an oci:// repoURL nor a chart as Git
		// (reposerver/repository/repository.go switches on IsOCI and
		// IsHelm), so the app cannot be read. The operator does the
		// same: a ComparisonError, the sync fails, nothing is written.
		"docs/user-guide/oci.md#3": {run: func(t *testing.T, w *userGuideWorld, key string, o *unstructured.Unstructured) {
			name := w.apply(t, o, manualSync()).Name
			// The local copy of the registry's host, "127.0.0.1:port",
			// read as Git is an scp-like SSH URL.
			w.waitApp(t, name, key+": refused as Argo CD refuses it (read as Git)", func(a *v1alpha1.Application) bool {
				op := a.Status.OperationState
				return hasCondition(a, "ComparisonError", "source ssh://127.0.0.1") && a.Status.Sync.Status != "Synced" &&
					op != nil && (op.Phase == "Error" || op.Phase == "Failed")
			})
			w.deleteApp(t, name)
		}},
	}
}
