package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/engine"
	"github.com/kubegitops/gitops/sync"
	"github.com/kubegitops/gitops/testenv"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"
)

// cluster serves TestDiffAgainstCluster; the other tests use none.
var cluster *testenv.Cluster

func TestMain(m *testing.M) {
	os.Exit(testenv.RunMain(m, testenv.DefaultOptions(), &cluster))
}

// TestPrintsRenderedManifests runs the step without a cluster on
// testdata/app.yaml, whose source is the folder testdata/repo: it must exit
// 0 and print the folder's Deployment and Service as a YAML stream.
func TestPrintsRenderedManifests(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"--app", "testdata/app.yaml"}, &stdout, &stderr)
	if code != exitInSync {
		t.Fatalf("exit %d, want %d; stderr:\n%s", code, exitInSync, stderr.String())
	}
	if !strings.HasPrefix(stdout.String(), "# argocd/guestbook at sha256:") {
		t.Errorf("output does not start with the app's key and folder revision:\n%s", stdout.String())
	}
	got := map[string]map[string]any{}
	for _, doc := range strings.Split(stdout.String(), "\n---\n")[1:] {
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			t.Fatalf("document does not parse: %v\n%s", err, doc)
		}
		md, _ := obj["metadata"].(map[string]any)
		got[obj["kind"].(string)+"/"+md["name"].(string)] = obj
	}
	if len(got) != 2 {
		t.Fatalf("got objects %v, want Deployment/guestbook-ui and Service/guestbook-ui", keys(got))
	}
	dep, ok := got["Deployment/guestbook-ui"]
	if !ok {
		t.Fatalf("no Deployment/guestbook-ui in %v", keys(got))
	}
	containers := dep["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)
	if img := containers[0].(map[string]any)["image"]; img != "gcr.io/heptio-images/ks-guestbook-demo:0.2" {
		t.Errorf("Deployment image %v, want the one in testdata/repo", img)
	}
	if _, ok := got["Service/guestbook-ui"]; !ok {
		t.Errorf("no Service/guestbook-ui in %v", keys(got))
	}
}

// TestBadInputExitsTwo checks that a step that cannot be made says why and
// exits 2, not 1 (which means "out of sync" to a pipeline).
func TestBadInputExitsTwo(t *testing.T) {
	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"no app flag":    {nil, "--app is required"},
		"missing file":   {[]string{"--app", "testdata/missing.yaml"}, "testdata/missing.yaml"},
		"unknown field":  {[]string{"--app", "testdata/bad-field.yaml"}, "bogus"},
		"missing folder": {[]string{"--app", "testdata/missing-folder.yaml"}, "no-such-folder"},
	} {
		t.Run(name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), tc.args, &stdout, &stderr)
			if code != exitError {
				t.Errorf("exit %d, want %d", code, exitError)
			}
			if !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("stderr does not name %q:\n%s", tc.want, stderr.String())
			}
		})
	}
}

// TestDiffAgainstCluster runs the step with a kubeconfig, as a pipeline
// gating a merge does: exit 1 naming both objects while the namespace is
// empty, exit 0 once an engine has synced the app, and exit 1 again
// with the replicas in the diff once someone scales the Deployment by hand.
func TestDiffAgainstCluster(t *testing.T) {
	ctx := context.Background()
	ns := cluster.TestNamespace(t)
	repo, err := filepath.Abs("testdata/repo")
	if err != nil {
		t.Fatal(err)
	}
	appFile := filepath.Join(t.TempDir(), "app.yaml")
	app := `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: guestbook, namespace: argocd}
spec:
  source: {repoURL: ` + repo + `, path: guestbook}
  destination: {server: https://kubernetes.default.svc, namespace: ` + ns + `}
`
	if err := os.WriteFile(appFile, []byte(app), 0o600); err != nil {
		t.Fatal(err)
	}
	step := func(wantCode int, wantOut ...string) {
		t.Helper()
		var stdout, stderr bytes.Buffer
		code := run(ctx, []string{"--app", appFile, "--kubeconfig", cluster.Kubeconfig()}, &stdout, &stderr)
		if code != wantCode {
			t.Fatalf("exit %d, want %d; stdout:\n%s\nstderr:\n%s", code, wantCode, stdout.String(), stderr.String())
		}
		for _, want := range wantOut {
			if !strings.Contains(stdout.String(), want) {
				t.Errorf("output lacks %q:\n%s", want, stdout.String())
			}
		}
	}
	step(exitOutOfSync, "argocd/guestbook: OutOfSync",
		"apps/Deployment "+ns+"/guestbook-ui: out of sync", "Service "+ns+"/guestbook-ui: out of sync")

	// The objects as a CD system leaves them: synced by an engine, which
	// tracks them as the app's. (Objects created by another writer with the
	// same content stay OutOfSync: FRICTION.md, item 12.)
	apps, err := loadApps(appFile)
	if err != nil {
		t.Fatal(err)
	}
	opts := gitops.DefaultOptions()
	opts.Clusters = []gitops.ClusterConfig{{Name: "in-cluster", Server: "https://kubernetes.default.svc", Config: cluster.Config()}}
	e, err := gitops.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.Sync(ctx, &apps[0], engine.SyncRequest{})
	e.Close()
	if err != nil || res.Phase != sync.Succeeded {
		t.Fatalf("sync: %v, %s: %s", err, res.Phase, res.Message)
	}
	client, err := dynamic.NewForConfig(cluster.Config())
	if err != nil {
		t.Fatal(err)
	}
	deployments := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	step(exitInSync, "argocd/guestbook: Synced")

	scale := []byte(`{"spec":{"replicas":3}}`)
	if _, err := client.Resource(deployments).Namespace(ns).Patch(ctx, "guestbook-ui", types.MergePatchType, scale, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	step(exitOutOfSync, "apps/Deployment "+ns+"/guestbook-ui: out of sync", "replicas: 3")
}

func keys(m map[string]map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
