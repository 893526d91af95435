package argocdcm

import (
	"fmt"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"

	"github.com/kubegitops/gitops/render/builtin"
	"github.com/kubegitops/gitops/render/helm"
	"github.com/kubegitops/gitops/render/kustomize"
)

// ArgoCDTools returns the built-in renderers' options with Argo CD's
// defaults where this module's differ: Helm value files may be fetched
// over http and https (argocd-cm helm.valuesFileSchemes' default).
func ArgoCDTools() builtin.Options {
	o := builtin.DefaultOptions()
	o.Helm.AllowedValueSchemes = []string{"http", "https"}
	return o
}

// parseKustomizeBuildOptions reads kustomize.buildOptions, the flags Argo
// CD passes to `kustomize build`, into the Kustomize renderer's options:
// --load-restrictor (or v3's --load_restrictor) LoadRestrictionsNone or
// LoadRestrictionsRootOnly (v3's none, rootOnly), --reorder legacy or
// none, --enable-managedby-label; --enable-helm (helmCharts are inflated
// anyway) and --enable_kyaml true (always so) change nothing. Any other
// flag is ErrUnsupported naming it: plugins that run programs
// (--enable-alpha-plugins, --enable-exec) are never run.
func parseKustomizeBuildOptions(value string, o *kustomize.Options) error {
	args := strings.Fields(value)
	for i := 0; i < len(args); i++ {
		flag, val, hasVal := strings.Cut(args[i], "=")
		next := func() (string, error) {
			if hasVal {
				return val, nil
			}
			if i+1 >= len(args) || strings.HasPrefix(args[i+1], "-") {
				return "", fmt.Errorf("%w: %s needs a value", ErrMalformed, flag)
			}
			i++
			return args[i], nil
		}
		switch strings.ReplaceAll(flag, "_", "-") {
		case "--load-restrictor":
			v, err := next()
			if err != nil {
				return err
			}
			switch v {
			case "LoadRestrictionsNone", "none":
				o.LoadRestrictions = types.LoadRestrictionsNone
			case "LoadRestrictionsRootOnly", "rootOnly":
				o.LoadRestrictions = types.LoadRestrictionsRootOnly
			default:
				return fmt.Errorf("%w: %s %q, want LoadRestrictionsNone or LoadRestrictionsRootOnly", ErrMalformed, flag, v)
			}
		case "--reorder":
			v, err := next()
			if err != nil {
				return err
			}
			switch v {
			case "legacy":
				o.Reorder = krusty.ReorderOptionLegacy
			case "none":
				o.Reorder = krusty.ReorderOptionNone
			default:
				return fmt.Errorf("%w: %s %q, want legacy or none", ErrMalformed, flag, v)
			}
		case "--enable-managedby-label":
			o.AddManagedByLabel = true
		case "--enable-helm":
		case "--enable-kyaml":
			if v, err := next(); err != nil || v != "true" {
				return fmt.Errorf("%w: %s false: this Kustomize always uses kyaml", ErrUnsupported, flag)
			}
		default:
			return fmt.Errorf("%w: kustomize build flag %s", ErrUnsupported, flag)
		}
	}
	return nil
}

// parseValuesFileSchemes reads helm.valuesFileSchemes: the URL schemes of
// remote value files ("" turns them off). The Helm renderer fetches http
// and https; another scheme is ErrUnsupported.
func parseValuesFileSchemes(value string, o *helm.Options) error {
	schemes := splitList(value)
	for _, s := range schemes {
		if s != "http" && s != "https" {
			return fmt.Errorf("%w: scheme %q: value files are fetched over http and https only", ErrUnsupported, s)
		}
	}
	o.AllowedValueSchemes = slices.Compact(schemes)
	if o.AllowedValueSchemes == nil {
		o.AllowedValueSchemes = []string{}
	}
	return nil
}
