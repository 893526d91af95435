package engine

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/appstatus"
	"github.com/kubegitops/gitops/cache/kubeconfig"
	"github.com/kubegitops/gitops/health"
	"github.com/kubegitops/gitops/testenv"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// kubeconfigOf writes one kubeconfig whose contexts are the given clusters.
func kubeconfigOf(t *testing.T, clusters map[string]*testenv.Cluster) string {
	t.Helper()
	merged := clientcmdapi.NewConfig()
	for name, c := range clusters {
		raw, err := clientcmd.LoadFromFile(c.Kubeconfig())
		if err != nil {
			t.Fatal(err)
		}
		ctx := raw.Contexts[raw.CurrentContext]
		merged.Clusters[name] = raw.Clusters[ctx.Cluster]
		merged.AuthInfos[name] = raw.AuthInfos[ctx.AuthInfo]
		merged.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*merged, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// One engine serves two clusters, chosen by context name and by server URL;
// when one goes away only its apps turn Unknown, and they come back with it.
func TestTwoClustersOneGoesAway(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	west, err := testenv.Start(ctx, testenv.Options{APIServerOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = west.Stop() })
	named, err := kubeconfig.Load(kubeconfigOf(t, map[string]*testenv.Cluster{"east": cluster, "west": west}), nil)
	if err != nil {
		t.Fatal(err)
	}
	var clusters []ClusterConfig // as gitops.ClustersFromKubeconfig makes them
	for _, n := range named {
		clusters = append(clusters, ClusterConfig{Name: n.Name, Server: n.Config.Host, Config: n.Config})
	}
	if len(clusters) != 2 || clusters[0].Name != "east" || clusters[1].Server != west.Server() {
		t.Fatalf("clusters from kubeconfig: %+v", clusters)
	}

	ns := cluster.TestNamespace(t)
	dir := repoDir(t, map[string]string{"app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {a: b}\n"})
	e := newEngine(t, func(o *Options) { o.Clusters = clusters; o.Interval = 2 * time.Second })
	east := automated(dirApp(ns+"-east", dir, ns))
	east.Spec.Destination = ApplicationDestination{Name: "east", Namespace: ns}
	westApp := automated(dirApp(ns+"-west", dir, ns))
	westApp.Spec.Destination = ApplicationDestination{Server: west.Server(), Namespace: ns}
	westApp.Spec.SyncPolicy.SyncOptions = []string{"CreateNamespace=true"}
	startRun(t, e, east, westApp)

	syncedHealthy := func(name string) func() bool {
		return func() bool {
			st, ok := e.Apps().AppStatus(v1alpha1.AppKey{Name: name})
			return ok && st.Sync == appstatus.Synced && st.Health.Code == health.Healthy
		}
	}
	eventually(t, 2*time.Minute, "both apps synced and healthy", func() bool {
		return syncedHealthy(east.Name)() && syncedHealthy(westApp.Name)()
	})

	if err := west.StopAPIServer(); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	eventually(t, time.Minute, "the west app Unknown", func() bool {
		st, ok := e.Apps().AppStatus(v1alpha1.KeyOf(westApp))
		return ok && st.Sync == appstatus.Unknown && st.Health.Code == health.Unknown && hasError(st.Conditions)
	})
	t.Logf("the west app Unknown %v after its cluster went away (interval 2 s)", time.Since(stopped).Round(10*time.Millisecond))
	// The east app was refreshed since (interval 2 s) and is untouched.
	before, _ := e.Apps().AppStatus(v1alpha1.KeyOf(east))
	eventually(t, time.Minute, "the east app refreshed again", func() bool {
		st, _ := e.Apps().AppStatus(v1alpha1.KeyOf(east))
		return st.ReconciledAt.After(before.ReconciledAt)
	})
	if st, _ := e.Apps().AppStatus(v1alpha1.KeyOf(east)); st.Sync != appstatus.Synced || st.Health.Code != health.Healthy || len(st.Conditions) != 0 {
		t.Fatalf("east app disturbed by the west cluster going away: %+v", st)
	}

	if err := west.StartAPIServer(ctx); err != nil {
		t.Fatal(err)
	}
	started := time.Now()
	eventually(t, 2*time.Minute, "the west app back", syncedHealthy(westApp.Name))
	t.Logf("the west app Synced and Healthy %v after its cluster came back", time.Since(started).Round(10*time.Millisecond))
}
