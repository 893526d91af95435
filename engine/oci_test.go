package engine

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubegitops/gitops/appstatus"
	"github.com/kubegitops/gitops/health"
	"github.com/kubegitops/gitops/internal/chartserver"
	"github.com/kubegitops/gitops/source"
	"github.com/kubegitops/gitops/source/oci"
	"github.com/kubegitops/gitops/source/repocreds"
)

// ociOverlay is a Kustomize base and a prod overlay, the ConfigMap's data
// saying which release it is.
func ociOverlay(release string) map[string]string {
	return map[string]string{
		"base/kustomization.yaml":          "resources: [cm.yaml]\n",
		"base/cm.yaml":                     "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  release: \"" + release + "\"\n",
		"overlays/prod/kustomization.yaml": "resources: [../../base]\nnamePrefix: prod-\ncommonLabels:\n  tier: prod\n",
	}
}

// An app whose source is an OCI artifact holding a Kustomize overlay,
// read over TLS with the credentials of an Argo CD `type: oci` repository
// Secret (and the CA of argocd-tls-certs-cm), syncs at the digest of the
// highest tag its constraint admits; a new tag under the constraint is
// the next refresh's revision and syncs; an app pinned at a digest stays
// there.
func TestOCIKustomizeOverlaySyncsAndFollowsItsConstraint(t *testing.T) {
	t.Parallel()
	ns := cluster.TestNamespace(t)
	reg := chartserver.NewArtifactRegistry(t, chartserver.ArtifactOptions{Username: chartUser, Password: chartPassword, TLS: true})
	d100 := reg.Push("org/shop", "1.0.0", ociOverlay("one"))
	cs, err := kubernetes.NewForConfig(cluster.Config())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "registry", Namespace: ns,
		Labels: map[string]string{repocreds.SecretTypeLabel: repocreds.TypeRepository}},
		StringData: map[string]string{"url": reg.URL("org/shop"), "username": chartUser, "password": chartPassword, "type": "oci"}}
	if _, err := cs.CoreV1().Secrets(ns).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	certs := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: repocreds.TLSCertsConfig, Namespace: ns},
		Data: map[string]string{"127.0.0.1": string(reg.CAData)}}
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, certs, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	store, err := repocreds.LoadNamespace(ctx, cs, ns)
	if err != nil {
		t.Fatal(err)
	}
	e := newEngine(t, func(o *Options) { o.Credentials = store.For })
	app := &Application{Spec: ApplicationSpec{
		Source:      &ApplicationSource{RepoURL: reg.URL("org/shop"), TargetRevision: "~1.0", Path: "overlays/prod"},
		Destination: ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: ns},
	}}
	app.Name = ns
	pinned := copyApp(t, app)
	pinned.Name = ns + "-pinned"
	pinned.Spec.Source.TargetRevision = d100
	if _, err := e.Sync(ctx, app, SyncRequest{}); err != nil {
		t.Fatal(err)
	}
	refreshUntil(t, e, app, "Synced and Healthy at 1.0.0's digest", func(s appstatus.Status) bool {
		return s.Sync == appstatus.Synced && s.Health.Code == health.Healthy && s.Revision == d100
	})
	cm, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "prod-settings", metav1.GetOptions{})
	if err != nil || cm.Data["release"] != "one" || cm.Labels["tier"] != "prod" {
		t.Fatalf("ConfigMap of the overlay: %+v %v", cm, err)
	}

	d101 := reg.Push("org/shop", "1.0.1", ociOverlay("two"))
	reg.Push("org/shop", "2.0.0", ociOverlay("three")) // outside ~1.0
	refreshUntil(t, e, app, "OutOfSync at 1.0.1's digest", func(s appstatus.Status) bool {
		return s.Sync == appstatus.OutOfSync && s.Revision == d101
	})
	if _, err := e.Sync(ctx, app, SyncRequest{}); err != nil {
		t.Fatal(err)
	}
	refreshUntil(t, e, app, "Synced at 1.0.1's digest", func(s appstatus.Status) bool {
		return s.Sync == appstatus.Synced && s.Revision == d101
	})
	cm, err = cs.CoreV1().ConfigMaps(ns).Get(ctx, "prod-settings", metav1.GetOptions{})
	if err != nil || cm.Data["release"] != "two" {
		t.Fatalf("ConfigMap after 1.0.1: %v %v", cm.Data, err)
	}
	// The step after: a second sync stays Synced at the same digest.
	if _, err := e.Sync(ctx, app, SyncRequest{}); err != nil {
		t.Fatal(err)
	}
	refreshUntil(t, e, app, "still Synced at 1.0.1's digest", func(s appstatus.Status) bool {
		return s.Sync == appstatus.Synced && s.Revision == d101
	})

	objs, rev, err := e.Render(ctx, pinned)
	if err != nil || rev != d100 || len(objs) != 1 || objs[0].Object["data"].(map[string]any)["release"] != "one" {
		t.Fatalf("the app pinned at %s renders %d objects at %s: %v", d100, len(objs), rev, err)
	}
}

// An artifact past the OCI source's limits fails the render with an
// error naming the artifact and its digest; an engine without an OCI
// source says which option plugs one in.
func TestOCIArtifactOverTheLimitIsRefusedByName(t *testing.T) {
	t.Parallel()
	reg := chartserver.NewArtifactRegistry(t, chartserver.ArtifactOptions{})
	files := ociOverlay("one")
	files["base/blob.yaml"] = strings.Repeat("# padding\n", 500)
	d := reg.Push("org/big", "1.0.0", files)
	e := offlineEngine(t, func(o *Options) {
		o.NewOCISource = func(logr.Logger) (source.Source, error) {
			opts := oci.DefaultOptions()
			opts.PlainHTTP = true
			opts.Limits.MaxTotalBytes = 4096
			return oci.New(opts), nil
		}
	})
	app := &Application{Spec: ApplicationSpec{
		Source:      &ApplicationSource{RepoURL: reg.URL("org/big"), TargetRevision: "1.0.0", Path: "overlays/prod"},
		Destination: ApplicationDestination{Name: "prod", Namespace: "shop"},
	}}
	app.Name = "big"
	_, _, err := e.Render(context.Background(), app)
	var ae *oci.ArtifactError
	if !errors.Is(err, oci.ErrArtifactTooLarge) || !errors.As(err, &ae) || !strings.Contains(err.Error(), reg.Host+"/org/big@"+d) {
		t.Fatalf("over-size artifact: %v", err)
	}

	opts := DefaultOptions()
	opts.Clusters = []ClusterConfig{{Name: "prod", Server: "https://prod.invalid", KubeVersion: "1.31.0"}}
	lean, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer lean.Close()
	_, _, err = lean.Render(context.Background(), app)
	if !errors.Is(err, ErrNoOCISource) || !strings.Contains(err.Error(), "NewOCISource") {
		t.Fatalf("lean engine: %v", err)
	}
}
