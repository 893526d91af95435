package helm

import (
	"context"
	"errors"
	"testing"
	"testing/fstest"

	"github.com/kubegitops/gitops/render"
	"github.com/kubegitops/gitops/render/rendertest"
)

// A SOPS-encrypted value file (or --set-file source) with no decryptor
// fails the render naming it, instead of feeding ciphertext and the sops
// metadata to the templates.
func TestEncryptedValueFileIsRefusedWithoutADecryptor(t *testing.T) {
	snap := fixture(t).With(map[string]*fstest.MapFile{"charts/app/values.enc.yaml": {Data: []byte(rendertest.SOPSValuesYAML)}})
	sources := map[string]*render.HelmSource{
		"valueFiles":     {ValueFiles: []string{"values.enc.yaml"}},
		"fileParameters": {FileParameters: []render.HelmFileParameter{{Name: "x", Path: "values.enc.yaml"}}},
	}
	for name, src := range sources {
		in := prodInput(snap)
		in.Helm = src
		objs, err := New(DefaultOptions()).Render(context.Background(), in)
		var ee *render.EncryptedError
		if !errors.As(err, &ee) || ee.Path != "values.enc.yaml" {
			t.Errorf("%s: rendered %d objects, err %v; want an *EncryptedError naming values.enc.yaml", name, len(objs), err)
		}
	}
}
