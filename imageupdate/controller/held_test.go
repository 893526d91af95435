package controller

import (
	"context"
	"encoding/json"
	"github.com/kubegitops/gitops/apis/v1alpha1"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/imageupdate"
	"github.com/kubegitops/gitops/state"
)

// recordBefore is the state.json a ConfigMap state store wrote for an app
// with one sync and a held override before state.AppState kept the
// override opaquely (state.AppState.ImageOverride was an
// *imageupdate.Override then): the bytes json.Marshal gave.
const recordBefore = `{"history":[{"id":1,"revisions":["abc"],"deployedAt":"2026-01-02T03:04:05Z"}],` +
	`"imageOverride":{"KustomizeImages":["app=reg.example/team/app:1.0.1"],` +
	`"HelmParameters":[{"Name":"image.tag","Value":"1.10","ForceString":true}]}}`

// A state ConfigMap written before the override was kept opaquely still
// loads: the engine reads its history, HeldOverride its override, and the
// next ApplyOverride merges into it and writes it back in the same form.
func TestHeldOverrideReadsARecordWrittenBefore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := cluster.TestNamespace(t)
	cs, err := kubernetes.NewForConfig(cluster.Config())
	if err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "gitops-state-web", Namespace: ns,
		Labels: map[string]string{"gitops.kubegitops.io/state-of": "web"}}, Data: map[string]string{"state.json": recordBefore}}
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e := newEngine(t, func(o *gitops.Options) { o.State = state.NewConfigMapStore(cs, ns) })
	app := dirApp("web", repoDir(t, map[string]string{"app/deployment.yaml": imageDeployment}), ns)

	held, err := HeldOverride(ctx, e, v1alpha1.KeyOf(app))
	want := &imageupdate.Override{KustomizeImages: []string{"app=reg.example/team/app:1.0.1"},
		HelmParameters: []imageupdate.HelmParameter{{Name: "image.tag", Value: "1.10", ForceString: true}}}
	if err != nil || !reflect.DeepEqual(held, want) {
		t.Fatalf("held override of a record written before: %+v, %v; want %+v", held, err, want)
	}
	if hist, err := e.History(ctx, v1alpha1.KeyOf(app)); err != nil || len(hist) != 1 || hist[0].Revisions[0] != "abc" {
		t.Fatalf("history of a record written before: %+v, %v", hist, err)
	}

	if _, err := ApplyOverride(ctx, e, *app, imageupdate.Override{KustomizeImages: []string{"app=reg.example/team/app:1.0.2"}}); err != nil {
		t.Fatal(err)
	}
	got, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "gitops-state-web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		ImageOverride map[string]json.RawMessage `json:"imageOverride"`
	}
	if err := json.Unmarshal([]byte(got.Data["state.json"]), &rec); err != nil {
		t.Fatal(err)
	}
	if imgs := string(rec.ImageOverride["KustomizeImages"]); imgs != `["app=reg.example/team/app:1.0.2"]` {
		t.Errorf("the merged override's kustomize images, as written: %s", imgs)
	}
	if params := string(rec.ImageOverride["HelmParameters"]); !strings.Contains(params, `"Name":"image.tag"`) {
		t.Errorf("the merge lost the Helm parameter, or wrote it in another form: %s", params)
	}
}

// A record whose override is not one is an error naming the app, not an
// empty override.
func TestHeldOverrideRefusesARecordOfAnotherShape(t *testing.T) {
	if _, err := decodeHeld(v1alpha1.AppKey{Namespace: "team", Name: "web"}, json.RawMessage(`["not", "an", "override"]`)); err == nil || !strings.Contains(err.Error(), "application team/web") {
		t.Fatalf("decode of another shape: %v", err)
	}
	if ov, err := decodeHeld(v1alpha1.AppKey{Name: "web"}, nil); ov != nil || err != nil {
		t.Fatalf("no override held: %+v, %v", ov, err)
	}
}
