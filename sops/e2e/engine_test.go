package e2e

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	gitops "github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/appstatus"
	"github.com/kubegitops/gitops/internal/testfiles"
	"github.com/kubegitops/gitops/render"
	"github.com/kubegitops/gitops/sops"
	"github.com/kubegitops/gitops/sops/internal/sopstest"
	"github.com/kubegitops/gitops/sync"
)

const (
	plaintext  = "hunter2-plaintext"
	secretYAML = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ntype: Opaque\nstringData:\n  password: " + plaintext + "\n"
)

// An app whose Secret is SOPS-encrypted in its folder: the engine syncs
// the plaintext, every diff masks it, a second sync writes nothing, and a
// tampered file fails the refresh and the sync naming the file while the
// last good Secret stays in the cluster.
func TestEngineSyncsAnEncryptedSecret(t *testing.T) {
	ctx := context.Background()
	ns := cluster.TestNamespace(t)
	id, rcp := sopstest.NewIdentity(t)
	enc := sopstest.Encrypt(t, "secret.yaml", secretYAML, sopstest.KubernetesRegex, rcp)
	dir := testfiles.Tree(t, map[string]string{
		"app/secret.yaml": enc,
		"app/cm.yaml":     "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {mode: prod}\n",
	})
	var err error
	opts := gitops.DefaultOptions()
	opts.Clusters = []gitops.ClusterConfig{{Name: "in-cluster", Server: "https://kubernetes.default.svc", Config: cluster.Config()}}
	dopts := sops.DefaultOptions()
	dopts.AgeKeys = []string{id}
	if opts.Decryptor, err = sops.New(dopts); err != nil {
		t.Fatal(err)
	}
	e, err := gitops.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	app := &gitops.Application{Spec: gitops.ApplicationSpec{
		Source:      &gitops.ApplicationSource{RepoURL: dir, Path: "app"},
		Destination: gitops.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: ns},
	}}
	app.Name = ns
	noPlaintext := func(st appstatus.Status, extra ...string) {
		t.Helper()
		data, err := json.Marshal(st)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range append([]string{plaintext, base64.StdEncoding.EncodeToString([]byte(plaintext))}, extra...) {
			if strings.Contains(string(data), s) {
				t.Fatalf("the status shows %q: %s", s, data)
			}
		}
	}
	st, err := e.Refresh(ctx, app)
	if err != nil || st.Sync != appstatus.OutOfSync {
		t.Fatalf("first refresh: %v %+v", err, st)
	}
	noPlaintext(st)
	res, err := e.Sync(ctx, app, gitops.SyncRequest{})
	if err != nil || res.Phase != sync.Succeeded {
		t.Fatalf("sync: %v %s", err, res.Summary())
	}
	cs, err := kubernetes.NewForConfig(cluster.Config())
	if err != nil {
		t.Fatal(err)
	}
	secret, err := cs.CoreV1().Secrets(ns).Get(ctx, "db", metav1.GetOptions{})
	if err != nil || string(secret.Data["password"]) != plaintext {
		t.Fatalf("the Secret in the cluster: %v %q", err, secret.Data)
	}
	st = refreshUntil(t, e, app, "Synced", func(s appstatus.Status) bool { return s.Sync == appstatus.Synced })
	noPlaintext(st)

	// A second sync writes nothing.
	if res, err := e.Sync(ctx, app, gitops.SyncRequest{}); err != nil || res.Phase != sync.Succeeded {
		t.Fatalf("second sync: %v %s", err, res.Summary())
	}
	again, _ := cs.CoreV1().Secrets(ns).Get(ctx, "db", metav1.GetOptions{})
	if again.ResourceVersion != secret.ResourceVersion {
		t.Fatalf("the second sync rewrote the Secret: %s -> %s", secret.ResourceVersion, again.ResourceVersion)
	}

	// Drift: the diff names the Secret and masks both values.
	again.Data["password"] = []byte("changed-by-hand")
	if _, err := cs.CoreV1().Secrets(ns).Update(ctx, again, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	st = refreshUntil(t, e, app, "drift seen", func(s appstatus.Status) bool { return s.Sync == appstatus.OutOfSync })
	noPlaintext(st, "changed-by-hand")
	masked := false
	for _, r := range st.Resources {
		masked = masked || (r.Key.Name == "db" && strings.Contains(r.Diff, "+masked-"))
	}
	if !masked {
		t.Fatalf("no masked diff of the drifted Secret: %+v", st.Resources)
	}
	if res, err := e.Sync(ctx, app, gitops.SyncRequest{}); err != nil || res.Phase != sync.Succeeded {
		t.Fatalf("sync after drift: %v %s", err, res.Summary())
	}
	refreshUntil(t, e, app, "Synced after drift", func(s appstatus.Status) bool { return s.Sync == appstatus.Synced })

	// A tampered file: refresh and sync fail naming it; nothing is applied.
	tampered := strings.Replace(enc, "password: ENC[AES256_GCM,data:", "password: ENC[AES256_GCM,data:AA", 1)
	if tampered == enc {
		t.Fatal("the fixture was not tampered")
	}
	if err := os.WriteFile(filepath.Join(dir, "app/secret.yaml"), []byte(tampered), 0o600); err != nil {
		t.Fatal(err)
	}
	testfiles.Write(t, dir, map[string]string{"app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {mode: changed}\n"})
	st, err = e.Refresh(ctx, app)
	var derr *render.DecryptError
	if !errors.As(err, &derr) || derr.Path != "app/secret.yaml" || !errors.Is(err, sops.ErrTampered) {
		t.Fatalf("refresh of a tampered file: %v", err)
	}
	found := false
	for _, c := range st.Conditions {
		found = found || (c.Type == appstatus.ConditionComparisonError && strings.Contains(c.Message, "app/secret.yaml"))
	}
	if !found {
		t.Fatalf("no ComparisonError naming the file: %+v", st.Conditions)
	}
	if res, err := e.Sync(ctx, app, gitops.SyncRequest{}); err == nil || res.Phase == sync.Succeeded {
		t.Fatalf("the sync of a tampered app succeeded: %s", res.Summary())
	}
	after, _ := cs.CoreV1().Secrets(ns).Get(ctx, "db", metav1.GetOptions{})
	cm, _ := cs.CoreV1().ConfigMaps(ns).Get(ctx, "settings", metav1.GetOptions{})
	if string(after.Data["password"]) != plaintext || cm.Data["mode"] != "prod" {
		t.Fatalf("a failed render applied something: %q %v", after.Data["password"], cm.Data)
	}
}

func refreshUntil(t *testing.T, e *gitops.Engine, app *gitops.Application, what string, cond func(appstatus.Status) bool) appstatus.Status {
	t.Helper()
	var last appstatus.Status
	var lastErr error
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		last, lastErr = e.Refresh(ctx, app)
		return lastErr == nil && cond(last), nil
	})
	if err != nil {
		t.Fatalf("waiting for %s: last status %+v, err %v", what, last, lastErr)
	}
	return last
}
