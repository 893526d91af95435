package gitops_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubegitops/gitops"
)

// kubeconfigTwoContexts names two clusters, each reached with a token.
const kubeconfigTwoContexts = `apiVersion: v1
kind: Config
clusters:
- name: east
  cluster: {server: "https://east.example:6443"}
- name: west
  cluster: {server: "https://west.example:6443"}
users:
- name: east
  user: {token: east-secret-token}
- name: west
  user: {token: west-secret-token}
contexts:
- name: west
  context: {cluster: west, user: west}
- name: east
  context: {cluster: east, user: east}
current-context: east
`

// The root reads a kubeconfig's contexts as destinations (package engine
// no longer does, so that the lean core does not build clientcmd): each is
// known by the context's name and its server, sorted by name; a context
// the file lacks is an error naming it; no token is ever printed.
func TestClustersFromKubeconfig(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, []byte(kubeconfigTwoContexts), 0o600); err != nil {
		t.Fatal(err)
	}
	clusters, err := gitops.ClustersFromKubeconfig(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(clusters) != 2 || clusters[0].Name != "east" || clusters[0].Server != "https://east.example:6443" ||
		clusters[1].Name != "west" || clusters[1].Config.BearerToken != "west-secret-token" {
		t.Fatalf("clusters of the kubeconfig: %v", clusters)
	}
	if printed := fmt.Sprintf("%+v %#v", clusters, clusters); strings.Contains(printed, "secret-token") {
		t.Fatalf("a cluster printed its token: %s", printed)
	}
	only, err := gitops.ClustersFromKubeconfig(path, "west")
	if err != nil || len(only) != 1 || only[0].Server != "https://west.example:6443" {
		t.Fatalf("the west context alone: %v, %v", only, err)
	}
	if _, err := gitops.ClustersFromKubeconfig(path, "north"); err == nil || !strings.Contains(err.Error(), `"north"`) || !strings.Contains(err.Error(), path) {
		t.Fatalf("an unknown context: %v, want an error naming it and the file", err)
	}
}
