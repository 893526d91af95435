package reftools

import (
	"context"
	_ "embed"
	"fmt"
	"testing"

	"github.com/kubegitops/gitops/internal/toolbuild"
)

var (
	//go:embed module/go.mod.txt
	goMod []byte
	//go:embed module/go.sum.txt
	goSum []byte
	//go:embed module/tools.go.txt
	toolsGo []byte
)

// Tool names a reference tool.
type Tool string

// The reference tools.
const (
	Helm      Tool = "helm"      // helm.sh/helm/v3 v3.22.0
	Kustomize Tool = "kustomize" // sigs.k8s.io/kustomize/kustomize/v5 v5.8.2 (kustomize/api v0.21.2)
)

// All are the reference tools, as make tools builds them.
var All = []Tool{Helm, Kustomize}

var packages = map[Tool]string{
	Helm:      "helm.sh/helm/v3/cmd/helm",
	Kustomize: "sigs.k8s.io/kustomize/kustomize/v5",
}

func module() toolbuild.Module {
	return toolbuild.Module{Name: "kubegitops-reftools", GoMod: goMod, GoSum: goSum, ToolsGo: toolsGo, LDFlags: "-s -w -X helm.sh/helm/v3/internal/version.version=v3.22.0"}
}

// Ensure returns the path of each of tools, building those not yet in the
// user cache (a few minutes cold, seconds with a warm Go build cache) in one
// go build. log, when set, is told what is being built.
func Ensure(ctx context.Context, log func(format string, args ...any), tools ...Tool) (map[Tool]string, error) {
	var progs []toolbuild.Program
	for _, tool := range tools {
		pkg, ok := packages[tool]
		if !ok {
			return nil, fmt.Errorf("reftools: unknown tool %q", tool)
		}
		progs = append(progs, toolbuild.Program{Name: string(tool), Package: pkg})
	}
	paths, err := module().Ensure(ctx, progs, toolbuild.Options{Log: log}, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("reftools: %w", err)
	}
	out := map[Tool]string{}
	for _, tool := range tools {
		out[tool] = paths[string(tool)]
	}
	return out, nil
}

// Path returns the path of tool, building it first when it is not in the
// user cache (see Ensure).
func Path(ctx context.Context, tool Tool) (string, error) {
	paths, err := Ensure(ctx, nil, tool)
	if err != nil {
		return "", err
	}
	return paths[tool], nil
}

// ForTest returns the path of tool for a test or a benchmark. make tools
// builds every reference tool before the tests run, so they only find it;
// a test run outside make builds it here, with no deadline (a build takes
// the machine's time, not the test's) and saying so in the test's log. A
// build that fails fails tb, naming make tools.
func ForTest(tb testing.TB, tool Tool) string {
	tb.Helper()
	log := func(format string, args ...any) {
		tb.Logf("reftools: %s (make tools builds it before the tests)", fmt.Sprintf(format, args...))
	}
	paths, err := Ensure(context.Background(), log, tool)
	if err != nil {
		tb.Fatalf("%v\n(run `make tools` to build the reference tools before the tests)", err)
	}
	return paths[tool]
}
