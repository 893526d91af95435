package gitops_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/kubegitops/gitops"
)

// An Engine renders, compares and syncs Applications. This one has a single
// offline destination (no cluster config), for which it can render, as a CI
// pipeline would; with a rest.Config in ClusterConfig.Config, Refresh, Sync
// and Run work against that cluster.
func ExampleEngine() {
	dir, err := os.MkdirTemp("", "gitops-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	manifest := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web-config}\ndata: {color: blue}\n"
	if err := os.MkdirAll(filepath.Join(dir, "web"), 0o755); err != nil {
		fmt.Println(err)
		return
	}
	if err := os.WriteFile(filepath.Join(dir, "web", "config.yaml"), []byte(manifest), 0o644); err != nil {
		fmt.Println(err)
		return
	}

	opts := gitops.DefaultOptions()
	opts.Clusters = []gitops.ClusterConfig{{Name: "ci", KubeVersion: "v1.37.2"}}
	engine, err := gitops.New(opts)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer engine.Close()

	app := &gitops.Application{Spec: gitops.ApplicationSpec{
		Source:      &gitops.ApplicationSource{RepoURL: dir, Path: "web"},
		Destination: gitops.ApplicationDestination{Name: "ci", Namespace: "shop"},
	}}
	app.Name = "web"
	objs, _, err := engine.Render(context.Background(), app)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, o := range objs {
		fmt.Println(o.GetKind(), o.GetName(), o.Object["data"])
	}
	// Output:
	// ConfigMap web-config map[color:blue]
}
