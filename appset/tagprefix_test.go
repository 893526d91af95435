package appset

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/kubegitops/gitops/apis/v1alpha1"
)

// TestTemplatedTagPrefix is the ApplicationSet example of Argo CD's
// tracking strategies (docs/user-guide/tracking_strategies.md): a
// tagPrefix built from the generator's parameters reaches each generated
// Application, and the Application loads with it (it was refused by name
// before the model had tagPrefix).
func TestTemplatedTagPrefix(t *testing.T) {
	res := generate(t, loadOne(t, header+`  goTemplate: true
  generators:
  - list:
      elements: [{app: app1, cluster: cluster1, env: prod}, {app: app2, cluster: cluster2, env: dev}]
  template:
    metadata: {name: '{{.app}}-{{.cluster}}-{{.env}}'}
    spec:
      project: default
      source:
        repoURL: `+repoURL+`
        path: '{{.app}}'
        targetRevision: v1.*
        tagPrefix: "{{.app}}/{{.cluster}}/{{.env}}/"
      destination: {server: https://kubernetes.default.svc, namespace: '{{.app}}'}
`), DefaultOptions())
	want := map[string]string{"app1-cluster1-prod": "app1/cluster1/prod/", "app2-cluster2-dev": "app2/cluster2/dev/"}
	if len(res.Applications) != len(want) {
		t.Fatalf("generated %d apps, want %d", len(res.Applications), len(want))
	}
	for _, u := range res.Applications {
		js, err := json.Marshal(u.Object)
		if err != nil {
			t.Fatal(err)
		}
		apps, err := v1alpha1.LoadApplications(bytes.NewReader(js))
		if err != nil {
			t.Fatalf("%s: the generated Application does not load: %v", u.GetName(), err)
		}
		src := apps[0].Spec.Source
		if src == nil || src.TagPrefix != want[u.GetName()] || src.TargetRevision != "v1.*" {
			t.Errorf("%s: source %+v, want tagPrefix %q and targetRevision v1.*", u.GetName(), src, want[u.GetName()])
		}
	}
}
