package plain

import (
	"context"
	"errors"
	"testing"
	"testing/fstest"

	"github.com/kubegitops/gitops/render"
	"github.com/kubegitops/gitops/render/rendertest"
)

// A SOPS-encrypted manifest in a plain directory, with no decryptor, fails
// the render naming the file, in YAML and in JSON; it is never rendered as
// a Secret holding ciphertext and a sops: block.
func TestEncryptedManifestIsRefusedWithoutADecryptor(t *testing.T) {
	for name, data := range map[string]string{"secret.enc.yaml": rendertest.SOPSSecretYAML, "secret.enc.json": rendertest.SOPSSecretJSON} {
		snap := rendertest.NewSnapshot(fstest.MapFS{
			"app/cm.yaml": {Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\n")},
			"app/" + name: {Data: []byte(data)},
		})
		objs, err := New(DefaultOptions()).Render(context.Background(), render.Input{FS: snap, Path: "app"})
		var ee *render.EncryptedError
		if !errors.As(err, &ee) || ee.Path != "app/"+name {
			t.Fatalf("%s: rendered %d objects, err %v; want an *EncryptedError naming app/%s", name, len(objs), err, name)
		}
		var re *render.Error
		if !errors.As(err, &re) || re.Tool != render.KindPlain {
			t.Errorf("%s: %v does not name the tool", name, err)
		}
	}
}
