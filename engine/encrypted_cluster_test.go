package engine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubegitops/gitops/appstatus"
	"github.com/kubegitops/gitops/internal/testfiles"
	"github.com/kubegitops/gitops/render"
	"github.com/kubegitops/gitops/render/rendertest"
	"github.com/kubegitops/gitops/sync"
)

// A SOPS-encrypted manifest in an engine without a Decryptor: the refresh
// fails with an *render.EncryptedError and a ComparisonError naming the
// file and Options.Decryptor, the sync applies nothing (neither the
// ciphertext Secret nor the other change of the same commit), and once
// the file is gone the app is Synced again.
func TestEncryptedManifestWithoutDecryptorIsRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := cluster.TestNamespace(t)
	cm := func(mode string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {mode: " + mode + "}\n"
	}
	dir := repoDir(t, map[string]string{"app/cm.yaml": cm("prod")})
	e := newEngine(t, nil)
	app := dirApp(ns, dir, ns)
	if res, err := e.Sync(ctx, app, SyncRequest{}); err != nil || res.Phase != sync.Succeeded {
		t.Fatalf("first sync: %v %s", err, res.Summary())
	}
	refreshUntil(t, e, app, "Synced", func(s appstatus.Status) bool { return s.Sync == appstatus.Synced })

	testfiles.Write(t, dir, map[string]string{"app/secret.yaml": rendertest.SOPSSecretYAML, "app/cm.yaml": cm("changed")})
	st, err := e.Refresh(ctx, app)
	var ee *render.EncryptedError
	if !errors.As(err, &ee) || ee.Path != "app/secret.yaml" {
		t.Fatalf("refresh of an encrypted file without a decryptor: %v (status %+v)", err, st)
	}
	found := false
	for _, c := range st.Conditions {
		found = found || (c.Type == appstatus.ConditionComparisonError && strings.Contains(c.Message, "app/secret.yaml") && strings.Contains(c.Message, "Options.Decryptor"))
	}
	if !found {
		t.Fatalf("no ComparisonError naming the file and the option: %+v", st.Conditions)
	}
	if res, err := e.Sync(ctx, app, SyncRequest{}); err == nil || res.Phase == sync.Succeeded {
		t.Fatalf("the sync of an encrypted app succeeded: %s", res.Summary())
	} else if !errors.As(err, &ee) {
		t.Fatalf("the sync failed for another reason: %v", err)
	}
	cs, err := kubernetes.NewForConfig(cluster.Config())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Secrets(ns).Get(ctx, "db", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the encrypted Secret reached the cluster: %v", err)
	}
	live, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "settings", metav1.GetOptions{})
	if err != nil || live.Data["mode"] != "prod" {
		t.Fatalf("a refused render applied something: %v %v", err, live.Data)
	}

	// The step after: without the file the app compares again.
	if err := os.Remove(filepath.Join(dir, "app/secret.yaml")); err != nil {
		t.Fatal(err)
	}
	testfiles.Write(t, dir, map[string]string{"app/cm.yaml": cm("prod")})
	st = refreshUntil(t, e, app, "Synced without the file", func(s appstatus.Status) bool { return s.Sync == appstatus.Synced })
	for _, c := range st.Conditions {
		if c.Type == appstatus.ConditionComparisonError {
			t.Fatalf("a ComparisonError outlived the file: %+v", c)
		}
	}
}
