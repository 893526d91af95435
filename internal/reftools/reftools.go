package reftools

import (
	"context"
	_ "embed"
	"fmt"

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

var packages = map[Tool]string{
	Helm:      "helm.sh/helm/v3/cmd/helm",
	Kustomize: "sigs.k8s.io/kustomize/kustomize/v5",
}

// Ensure returns the path of tool, building it into the user cache the first
// time (a few minutes cold, seconds with a warm Go build cache).
func Ensure(ctx context.Context, tool Tool) (string, error) {
	pkg, ok := packages[tool]
	if !ok {
		return "", fmt.Errorf("reftools: unknown tool %q", tool)
	}
	m := toolbuild.Module{Name: "kubegitops-reftools", GoMod: goMod, GoSum: goSum, ToolsGo: toolsGo, LDFlags: "-s -w -X helm.sh/helm/v3/internal/version.version=v3.22.0"}
	paths, err := m.Ensure(ctx, []toolbuild.Program{{Name: string(tool), Package: pkg}}, toolbuild.Options{}, nil, nil)
	if err != nil {
		return "", fmt.Errorf("reftools: %w", err)
	}
	return paths[string(tool)], nil
}
