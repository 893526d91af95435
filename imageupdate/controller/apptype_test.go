package controller

import (
	"context"
	"errors"
	"testing"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/imageupdate"
	"github.com/kubegitops/gitops/internal/testfiles"
)

// offline is the destination of the offline engine: nothing connects to a
// cluster, the render uses the ClusterConfig's versions.
const offline = "https://offline.invalid"

// newOfflineEngine builds an engine whose one cluster is offline.
func newOfflineEngine(t *testing.T) *gitops.Engine {
	t.Helper()
	opts := gitops.DefaultOptions()
	opts.Clusters = []gitops.ClusterConfig{{Name: "offline", Server: offline}}
	e, err := gitops.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	return e
}

const chartDeployment = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: "{{ .Values.image.repository }}:{{ .Values.image.tag }}"}]}
`

// The source type of an app is what Argo CD Image Updater reads: the
// write-back-target "kustomization" makes it Kustomize; else the app's
// status.sourceType, the tool its source renders with. A chart in the app's
// path with no spec.source.helm is Helm (the files decide, not the spec); a
// plain directory is refused by name, as Argo CD Image Updater skips it.
func TestAppSourceTypeIsTheRenderedOne(t *testing.T) {
	ctx := context.Background()
	e := newOfflineEngine(t)
	dir := testfiles.Tree(t, map[string]string{
		"chart/Chart.yaml":                "apiVersion: v2\nname: web\nversion: 1.0.0\n",
		"chart/values.yaml":               "image: {repository: example.invalid/web, tag: 1.0.0}\n",
		"chart/templates/deployment.yaml": chartDeployment,
		"kust/kustomization.yaml":         "resources: [deployment.yaml]\n",
		"kust/deployment.yaml":            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec: {containers: [{name: web, image: example.invalid/web:1.0.0}]}\n",
		"plain/deployment.yaml":           "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec: {containers: [{name: web, image: example.invalid/web:1.0.0}]}\n",
	})
	mk := func(path string, ann map[string]string) *gitops.Application {
		a := &gitops.Application{Spec: gitops.ApplicationSpec{
			Source:      &gitops.ApplicationSource{RepoURL: dir, Path: path},
			Destination: gitops.ApplicationDestination{Server: offline, Namespace: "web"},
		}}
		a.Name = "web-" + path
		a.Annotations = map[string]string{imageupdate.Prefix + "image-list": "web=example.invalid/web:~1.0"}
		for k, v := range ann {
			a.Annotations[k] = v
		}
		return a
	}
	for _, c := range []struct {
		name string
		app  *gitops.Application
		want imageupdate.SourceType
	}{
		{"a chart in the path, no spec.source.helm", mk("chart", nil), imageupdate.SourceHelm},
		{"a kustomization", mk("kust", nil), imageupdate.SourceKustomize},
		{"write-back-target kustomization over a chart", mk("chart", map[string]string{imageupdate.Prefix + "write-back-target": "kustomization:../kust"}), imageupdate.SourceKustomize},
	} {
		in, err := AppOf(ctx, e, c.app)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if in.SourceType != c.want {
			t.Errorf("%s: source type %s, want %s", c.name, in.SourceType, c.want)
		}
		if len(in.Images) != 1 || in.Images[0] != "example.invalid/web:1.0.0" {
			t.Errorf("%s: images %v", c.name, in.Images)
		}
	}
	// status.sourceType, when the app carries one (an Application read from
	// a cluster), is what Argo CD Image Updater reads.
	fromStatus := mk("kust", nil)
	fromStatus.Status.SourceType = "Helm"
	if in, err := AppOf(ctx, e, fromStatus); err != nil || in.SourceType != imageupdate.SourceHelm {
		t.Errorf("status.sourceType Helm: %v %v", in.SourceType, err)
	}
	var ie *imageupdate.Error
	if _, err := AppOf(ctx, e, mk("plain", nil)); !errors.As(err, &ie) || ie.App != "web-plain" || !errors.Is(err, imageupdate.ErrWriteBackTarget) {
		t.Errorf("a plain directory app: %v, want an *imageupdate.Error naming web-plain", err)
	}
}
