package kustomize

import (
	"context"
	"errors"
	"testing"
	"testing/fstest"

	"github.com/kubegitops/gitops/render"
	"github.com/kubegitops/gitops/render/rendertest"
)

// A SOPS-encrypted Kustomize resource, or secretGenerator source, with no
// decryptor fails the render naming the file, however kustomize reworded
// the read error; the ciphertext never becomes a Secret.
func TestEncryptedResourceIsRefusedWithoutADecryptor(t *testing.T) {
	cases := map[string]string{
		"resource":  "resources: [secret.enc.yaml]\n",
		"json":      "resources: [secret.enc.json]\n",
		"generator": "secretGenerator:\n- name: db\n  files: [secret.enc.yaml]\n",
	}
	for name, kustomization := range cases {
		snap := rendertest.NewSnapshot(fstest.MapFS{
			"app/kustomization.yaml": {Data: []byte(kustomization)},
			"app/secret.enc.yaml":    {Data: []byte(rendertest.SOPSSecretYAML)},
			"app/secret.enc.json":    {Data: []byte(rendertest.SOPSSecretJSON)},
		})
		objs, err := New(DefaultOptions()).Render(context.Background(), render.Input{FS: snap, Path: "app"})
		var ee *render.EncryptedError
		if !errors.As(err, &ee) || (ee.Path != "app/secret.enc.yaml" && ee.Path != "app/secret.enc.json") {
			t.Errorf("%s: rendered %d objects, err %v; want an *EncryptedError naming the file", name, len(objs), err)
		}
	}
}
