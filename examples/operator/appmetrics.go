package main

import (
	"context"
	"regexp"
	"slices"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/argocdcm"
	"github.com/kubegitops/gitops/engine"
)

// appMetrics are Argo CD's series of argocd-cmd-params-cm
// controller.metrics.*, computed from the operator's cache at each scrape:
//   - argocd_app_labels{name,namespace,project,label_<l>...} 1 for each
//     Application, with the labels controller.metrics.application.labels
//     names;
//   - argocd_app_condition{name,namespace,project,condition} 1 for each
//     condition of the types controller.metrics.application.conditions
//     names;
//   - argocd_cluster_labels{name,server,label_<l>...} 1 for each cluster
//     Secret, with the labels controller.metrics.cluster.labels names.
//
// A series is there only while its key is set (Set changes them live).
type appMetrics struct {
	reader    client.Reader
	namespace string
	log       logr.Logger
	want      atomic.Pointer[argocdcm.MetricsParams]
}

func newAppMetrics(reader client.Reader, namespace string, log logr.Logger) *appMetrics {
	m := &appMetrics{reader: reader, namespace: namespace, log: log}
	m.want.Store(&argocdcm.MetricsParams{})
	return m
}

// Set replaces the labels and conditions the series carry. Two labels of
// one Prometheus name (a.b and a_b) count once, the first.
func (m *appMetrics) Set(p argocdcm.MetricsParams) {
	p.AppLabels, p.ClusterLabels = distinctLabels(p.AppLabels), distinctLabels(p.ClusterLabels)
	m.want.Store(&p)
}

func distinctLabels(labels []string) []string {
	seen := map[string]bool{}
	var out []string
	for i, n := range labelNames(labels) {
		if !seen[n] {
			seen[n] = true
			out = append(out, labels[i])
		}
	}
	return out
}

// Describe implements prometheus.Collector; the collector is unchecked,
// its labels following argocd-cmd-params-cm.
func (m *appMetrics) Describe(chan<- *prometheus.Desc) {}

// Collect implements prometheus.Collector.
func (m *appMetrics) Collect(ch chan<- prometheus.Metric) {
	want := m.want.Load()
	if len(want.AppLabels)+len(want.AppConditions)+len(want.ClusterLabels) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if len(want.AppLabels)+len(want.AppConditions) > 0 {
		var apps v1alpha1.ApplicationList
		if err := m.reader.List(ctx, &apps); err != nil {
			m.log.Error(err, "listing Applications for their metrics")
		} else {
			m.collectApps(ch, apps.Items, want)
		}
	}
	if len(want.ClusterLabels) > 0 {
		var secrets corev1.SecretList
		if err := m.reader.List(ctx, &secrets, client.InNamespace(m.namespace), client.MatchingLabels{engine.ClusterSecretTypeLabel: "cluster"}); err != nil {
			m.log.Error(err, "listing cluster Secrets for their metrics")
		} else {
			m.collectClusters(ch, secrets.Items, want.ClusterLabels)
		}
	}
}

func (m *appMetrics) collectApps(ch chan<- prometheus.Metric, apps []v1alpha1.Application, want *argocdcm.MetricsParams) {
	if len(want.AppLabels) > 0 {
		names := append([]string{"name", "namespace", "project"}, labelNames(want.AppLabels)...)
		desc := prometheus.NewDesc("argocd_app_labels", "Argo CD Application labels converted to Prometheus labels", names, nil)
		for _, a := range apps {
			values := []string{a.Name, a.Namespace, project(&a)}
			for _, l := range want.AppLabels {
				values = append(values, a.Labels[l])
			}
			ch <- prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, 1, values...)
		}
	}
	if len(want.AppConditions) > 0 {
		desc := prometheus.NewDesc("argocd_app_condition", "Report application conditions.", []string{"name", "namespace", "project", "condition"}, nil)
		for _, a := range apps {
			counted := map[string]bool{}
			for _, c := range a.Status.Conditions {
				if slices.Contains(want.AppConditions, c.Type) && !counted[c.Type] {
					counted[c.Type] = true
					ch <- prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, 1, a.Name, a.Namespace, project(&a), c.Type)
				}
			}
		}
	}
}

func (m *appMetrics) collectClusters(ch chan<- prometheus.Metric, secrets []corev1.Secret, labels []string) {
	names := append([]string{"name", "server"}, labelNames(labels)...)
	desc := prometheus.NewDesc("argocd_cluster_labels", "Argo CD cluster labels converted to Prometheus labels", names, nil)
	for _, s := range secrets {
		values := []string{string(s.Data["name"]), string(s.Data["server"])}
		for _, l := range labels {
			values = append(values, s.Labels[l])
		}
		ch <- prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, 1, values...)
	}
}

func project(a *v1alpha1.Application) string {
	if a.Spec.Project == "" {
		return "default"
	}
	return a.Spec.Project
}

var notLabelChar = regexp.MustCompile(`[^a-zA-Z0-9_]`)

// labelNames are Argo CD's Prometheus names of Kubernetes labels:
// label_ and the name with every other character an underscore.
func labelNames(labels []string) []string {
	out := make([]string, len(labels))
	for i, l := range labels {
		out[i] = "label_" + notLabelChar.ReplaceAllString(l, "_")
	}
	return out
}
