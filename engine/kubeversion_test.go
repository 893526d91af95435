package engine

import (
	"context"
	"strings"
	"testing"
)

// TestKubeVersionIsChecked: an offline destination's KubeVersion is a
// Kubernetes version with or without its "v"; anything else is refused by
// New and by SetClusters, naming the cluster and the value.
func TestKubeVersionIsChecked(t *testing.T) {
	for _, v := range []string{"", "1.31.0", "v1.37.2", "1.30.0-rc.1", "1.31"} {
		opts := DefaultOptions()
		opts.Clusters = []ClusterConfig{{Name: "prod", Server: "https://prod.invalid", KubeVersion: v}}
		e, err := New(opts)
		if err != nil {
			t.Errorf("KubeVersion %q refused: %v", v, err)
			continue
		}
		e.Close()
	}
	opts := DefaultOptions()
	opts.Clusters = []ClusterConfig{{Name: "prod", Server: "https://prod.invalid", KubeVersion: "banana"}}
	if _, err := New(opts); err == nil || !strings.Contains(err.Error(), "prod") || !strings.Contains(err.Error(), `"banana"`) {
		t.Errorf("New with KubeVersion banana: %v, want refused naming the cluster and the value", err)
	}
	opts.Clusters[0].KubeVersion = "1.31.0"
	e, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	_, err = e.Settings().SetClusters(context.Background(), []ClusterConfig{{Name: "stage", Server: "https://stage.invalid", KubeVersion: "one.31"}})
	if err == nil || !strings.Contains(err.Error(), "stage") {
		t.Errorf("SetClusters with KubeVersion one.31: %v, want refused naming the cluster", err)
	}
}
