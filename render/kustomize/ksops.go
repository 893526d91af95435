package kustomize

import (
	"fmt"
	"path"
	"strings"

	"github.com/kubegitops/gitops/render"
	"sigs.k8s.io/yaml"
)

// KSOPSError is a kustomization whose generators name a KSOPS generator
// (kind ksops of apiVersion viaduct.ai/v1, a Kustomize exec plugin), which
// this renderer does not run: exec plugins are disabled. The SOPS files it
// lists render decrypted when they are listed as resources instead and a
// decryptor is configured. It wraps render.ErrInvalidInput.
type KSOPSError struct {
	// Generator is the generator file, slash-separated and relative to
	// the tree.
	Generator string
}

// Error implements error.
func (e *KSOPSError) Error() string {
	return fmt.Sprintf("%s is a KSOPS generator (kind ksops), an exec plugin this renderer does not run: "+
		"list its files under resources: in the kustomization instead and configure the SOPS decryptor "+
		"(gitopsctl --sops, the operator's -sops), which decrypts them as kustomize reads them", e.Generator)
}

// Unwrap returns render.ErrInvalidInput.
func (e *KSOPSError) Unwrap() error { return render.ErrInvalidInput }

// checkKSOPS returns a *KSOPSError when one of the generators of the
// kustomization in dir is a local file holding a KSOPS generator. Other
// generators (and entries that are not files) are left to kustomize.
func checkKSOPS(root *render.Root, dir string, generators []string) error {
	for _, g := range generators {
		if isRemote(g) || strings.Contains(g, "\n") {
			continue
		}
		p := path.Join(dir, g)
		if strings.HasPrefix(g, "/") {
			p = rel(g)
		}
		info, err := root.Stat(p)
		if err != nil || info.IsDir() {
			continue
		}
		data, err := root.ReadFile(p)
		if err != nil {
			continue
		}
		var head struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
		}
		if yaml.Unmarshal(data, &head) == nil && strings.EqualFold(head.Kind, "ksops") && strings.HasPrefix(head.APIVersion, "viaduct.ai/") {
			return &KSOPSError{Generator: p}
		}
	}
	return nil
}
