package engine

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Argo CD's build environment is substituted in Helm parameters and value
// file paths, Jsonnet external variables and top-level arguments, and
// Kustomize name prefix and images, per source, for an offline
// destination's versions.
func TestBuildEnvironmentIsSubstituted(t *testing.T) {
	t.Parallel()
	dir := repoDir(t, map[string]string{
		"chart/Chart.yaml":       "apiVersion: v2\nname: env\nversion: 0.1.0\n",
		"chart/values-shop.yaml": "fromFile: shop-values\n",
		"chart/templates/cm.yaml": `apiVersion: v1
kind: ConfigMap
metadata: {name: helm-env}
data:
  app: {{ .Values.app | quote }}
  rev: {{ .Values.rev | quote }}
  kube: {{ .Values.kube | quote }}
  literal: {{ .Values.literal | quote }}
  unknown: {{ .Values.unknown | quote }}
  fromFile: {{ .Values.fromFile | quote }}
`,
		"jsonnet/main.jsonnet": `function(tla) { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'jsonnet-env' },
  data: { app: std.extVar('app'), tla: tla } }`,
		"kustomize/kustomization.yaml": "resources: [deploy.yaml]\n",
		"kustomize/deploy.yaml": `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: nginx}]}
`,
	})
	e := offlineEngine(t, func(*Options) {})
	app := &Application{Spec: ApplicationSpec{
		Sources: []ApplicationSource{
			{RepoURL: dir, Path: "chart", Helm: &ApplicationSourceHelm{
				ValueFiles: []string{"values-$ARGOCD_APP_NAMESPACE.yaml"},
				Parameters: []HelmParameter{{Name: "app", Value: "$ARGOCD_APP_NAME"}, {Name: "rev", Value: "${ARGOCD_APP_REVISION_SHORT_8}"},
					{Name: "kube", Value: "k$KUBE_VERSION"}, {Name: "literal", Value: "a$$b"}, {Name: "unknown", Value: "[$NOT_DEFINED]"}}}},
			{RepoURL: dir, Path: "jsonnet", Directory: &ApplicationSourceDirectory{Jsonnet: ApplicationSourceJsonnet{
				ExtVars: []JsonnetVar{{Name: "app", Value: "$ARGOCD_APP_NAME@$ARGOCD_APP_NAMESPACE"}},
				TLAs:    []JsonnetVar{{Name: "tla", Value: "$ARGOCD_APP_SOURCE_PATH"}}}}},
			{RepoURL: dir, Path: "kustomize", Kustomize: &ApplicationSourceKustomize{NamePrefix: "$ARGOCD_APP_NAME-", Images: []string{"nginx=nginx:$KUBE_VERSION"}}},
		},
		Destination: ApplicationDestination{Name: "prod", Namespace: "shop"},
	}}
	app.Name = "envy"
	objs, rev, err := e.Render(context.Background(), app)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*unstructured.Unstructured{}
	for _, o := range objs {
		byName[o.GetName()] = o
	}
	field := func(name string, path ...string) string {
		o := byName[name]
		if o == nil {
			t.Fatalf("no object %s among %v", name, byName)
		}
		v, _, _ := unstructured.NestedString(o.Object, path...)
		return v
	}
	firstRev := strings.Split(rev, ",")[0]
	for path, want := range map[string]string{
		"app": "envy", "rev": firstRev[:8], "kube": "k1.31.0", "literal": "a$b", "unknown": "[]", "fromFile": "shop-values",
	} {
		if got := field("helm-env", "data", path); got != want {
			t.Errorf("helm %s = %q, want %q", path, got, want)
		}
	}
	if got := field("jsonnet-env", "data", "app"); got != "envy@shop" {
		t.Errorf("jsonnet extVar = %q", got)
	}
	if got := field("jsonnet-env", "data", "tla"); got != "jsonnet" {
		t.Errorf("jsonnet TLA = %q", got)
	}
	containers, _, _ := unstructured.NestedSlice(byName["envy-web"].Object, "spec", "template", "spec", "containers")
	if len(containers) != 1 || containers[0].(map[string]any)["image"] != "nginx:1.31.0" {
		t.Errorf("kustomize: %v", containers)
	}
}

// kustomize.commonAnnotationsEnvsubst substitutes the build environment
// in commonAnnotations' values, which are taken as written without it;
// kustomize.labelIncludeTemplates (with labelWithoutSelector) labels the
// pod template but not the selector, and without labelWithoutSelector
// fails the render naming both fields, as Argo CD v3.6 does.
func TestKustomizeAnnotationsEnvsubstAndLabelTemplates(t *testing.T) {
	t.Parallel()
	dir := repoDir(t, map[string]string{
		"kustomize/kustomization.yaml": "resources: [deploy.yaml]\n",
		"kustomize/deploy.yaml": `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: nginx}]}
`,
	})
	e := offlineEngine(t, func(*Options) {})
	render := func(k *ApplicationSourceKustomize) (*unstructured.Unstructured, error) {
		app := &Application{Spec: ApplicationSpec{
			Source:      &ApplicationSource{RepoURL: dir, Path: "kustomize", Kustomize: k},
			Destination: ApplicationDestination{Name: "prod", Namespace: "shop"},
		}}
		app.Name = "envy"
		objs, _, err := e.Render(context.Background(), app)
		if err != nil {
			return nil, err
		}
		return objs[0], nil
	}
	annotations := map[string]string{"app-source": "${ARGOCD_APP_NAME}@$ARGOCD_APP_NAMESPACE"}
	d, err := render(&ApplicationSourceKustomize{CommonAnnotations: annotations, CommonAnnotationsEnvsubst: true})
	if err != nil || d.GetAnnotations()["app-source"] != "envy@shop" {
		t.Fatalf("with commonAnnotationsEnvsubst: %v %v", d, err)
	}
	d, err = render(&ApplicationSourceKustomize{CommonAnnotations: annotations})
	if err != nil || d.GetAnnotations()["app-source"] != annotations["app-source"] {
		t.Fatalf("without commonAnnotationsEnvsubst: %v %v", d, err)
	}

	labels := map[string]string{"tier": "web"}
	for _, include := range []bool{false, true} {
		d, err = render(&ApplicationSourceKustomize{CommonLabels: labels, LabelWithoutSelector: true, LabelIncludeTemplates: include})
		if err != nil {
			t.Fatal(err)
		}
		tmpl, _, _ := unstructured.NestedStringMap(d.Object, "spec", "template", "metadata", "labels")
		sel, _, _ := unstructured.NestedStringMap(d.Object, "spec", "selector", "matchLabels")
		if d.GetLabels()["tier"] != "web" || sel["tier"] != "" || (tmpl["tier"] == "web") != include {
			t.Errorf("labelIncludeTemplates=%v: labels %v, template %v, selector %v", include, d.GetLabels(), tmpl, sel)
		}
	}
	_, err = render(&ApplicationSourceKustomize{CommonLabels: labels, LabelIncludeTemplates: true})
	if err == nil || !strings.Contains(err.Error(), "labelIncludeTemplates") || !strings.Contains(err.Error(), "labelWithoutSelector") {
		t.Fatalf("labelIncludeTemplates without labelWithoutSelector: %v", err)
	}
}
