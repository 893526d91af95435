package layers

import (
	"strings"
	"testing"
)

// batteries are the import paths (with their subpackages; a trailing slash
// makes a path prefix, a trailing $ the package alone) of the parts the root package or the host plugs into the engine,
// and of the libraries they are made of: the Helm, Kustomize and Jsonnet
// renderers; the chart source (Helm's registry client) and the OCI
// artifact source (source/oci, go-containerregistry); CEL project
// policies; the Redis render store; kubeconfig loading; shards (client-go's
// leader election); the image updater's registry client. The lean core
// builds without any of them.
var batteries = []string{
	root + "/render/helm", root + "/render/kustomize", root + "/render/jsonnet", root + "/render/builtin",
	"helm.sh/helm/v3/pkg/engine", "helm.sh/helm/v3/pkg/chartutil", "helm.sh/helm/v3/pkg/action",
	"sigs.k8s.io/kustomize/api/", "github.com/google/go-jsonnet",
	root + "/source/helmrepo", "helm.sh/helm/v3/pkg/registry", "oras.land/", root + "/source/oci",
	root + "/project/celpolicy", "cel.dev/",
	root + "/cache/store/redisstore", "github.com/redis/",
	root + "/cache/kubeconfig", "k8s.io/client-go/tools/clientcmd$", // client-go/rest imports its api/ subpackage
	root + "/shard", "k8s.io/client-go/tools/leaderelection",
	"github.com/google/go-containerregistry/", "github.com/docker/",
}

// TestLeanCoreBuildsWithoutTheBatteries fails when package engine reaches
// a battery: those are wired in by the root (gitops.New and
// gitops.DefaultOptions: render/builtin, source/helmrepo; the root's
// NewCELPolicy and ClustersFromKubeconfig) or by the host (Redis, shards),
// never by the core.
func TestLeanCoreBuildsWithoutTheBatteries(t *testing.T) {
	found := map[string][]string{} // battery -> the packages of it the core builds
	for _, dep := range deps(t, core) {
		for _, b := range batteries {
			exact, alone := strings.CutSuffix(b, "$")
			if dep == exact || (!alone && (strings.HasSuffix(b, "/") && strings.HasPrefix(dep, b) || strings.HasPrefix(dep, b+"/"))) {
				found[b] = append(found[b], dep)
			}
		}
	}
	for _, b := range batteries {
		if pkgs := found[b]; len(pkgs) > 0 {
			t.Errorf("%s imports %d package(s) of the battery %s (%s); the lean core must not reach the batteries",
				core, len(pkgs), strings.TrimSuffix(b, "$"), strings.Join(pkgs[:min(len(pkgs), 3)], ", "))
		}
	}
}
