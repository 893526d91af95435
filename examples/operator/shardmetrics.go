package main

import (
	"strconv"

	"github.com/kubegitops/gitops/examples/operator/controller"
	"github.com/kubegitops/gitops/shard"
	"github.com/prometheus/client_golang/prometheus"
)

// shardMetrics are a sharded replica's series, computed at each scrape:
//   - gitops_shard_apps{member,algorithm,replica} the Applications this
//     replica owns; algorithm is Argo CD's (legacy, round-robin,
//     consistent-hashing) and replica its number when it places by
//     cluster (Argo CD's dynamic distribution: "" while it holds none),
//     else "per-app" and "";
//   - gitops_shard_apps_gained_total{member} and
//     gitops_shard_apps_lost_total{member} the apps it took and those it
//     no longer owns (moved or deleted) since it started;
//   - gitops_shard_members{member} the live members of its group;
//   - gitops_shard_clusters{cluster,replica} 1 for each cluster, on the
//     replica this one computes for it (placed by cluster only).
type shardMetrics struct {
	member    string
	stats     func() controller.ShardStats
	members   *shard.Membership
	placement *byCluster // nil: per-app placement

	apps, gained, lost, live, clusters *prometheus.Desc
}

func newShardMetrics(member string, stats func() controller.ShardStats, members *shard.Membership, placement *byCluster) *shardMetrics {
	return &shardMetrics{
		member: member, stats: stats, members: members, placement: placement,
		apps:     prometheus.NewDesc("gitops_shard_apps", "Applications this replica owns.", []string{"member", "algorithm", "replica"}, nil),
		gained:   prometheus.NewDesc("gitops_shard_apps_gained_total", "Applications this replica took since it started.", []string{"member"}, nil),
		lost:     prometheus.NewDesc("gitops_shard_apps_lost_total", "Applications this replica no longer owns (moved or deleted) since it started.", []string{"member"}, nil),
		live:     prometheus.NewDesc("gitops_shard_members", "Live members of this replica's group.", []string{"member"}, nil),
		clusters: prometheus.NewDesc("gitops_shard_clusters", "1 for each cluster, labelled with the replica it is placed on (placement by cluster).", []string{"cluster", "replica"}, nil),
	}
}

// Describe sends the series' descriptions.
func (m *shardMetrics) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{m.apps, m.gained, m.lost, m.live, m.clusters} {
		ch <- d
	}
}

// Collect sends the series as they are now.
func (m *shardMetrics) Collect(ch chan<- prometheus.Metric) {
	s := m.stats()
	algorithm, replica := "per-app", ""
	if p := m.placement; p != nil {
		algorithm = p.algorithm
		if _, self := p.numbers(); self >= 0 {
			replica = strconv.Itoa(self)
		}
		for cluster, n := range p.Placement() {
			ch <- prometheus.MustNewConstMetric(m.clusters, prometheus.GaugeValue, 1, cluster, strconv.Itoa(n))
		}
	}
	ch <- prometheus.MustNewConstMetric(m.apps, prometheus.GaugeValue, float64(s.Owned), m.member, algorithm, replica)
	ch <- prometheus.MustNewConstMetric(m.gained, prometheus.CounterValue, float64(s.Gained), m.member)
	ch <- prometheus.MustNewConstMetric(m.lost, prometheus.CounterValue, float64(s.Lost), m.member)
	if m.members != nil {
		ch <- prometheus.MustNewConstMetric(m.live, prometheus.GaugeValue, float64(len(m.members.Members())), m.member)
	}
}
