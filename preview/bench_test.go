package preview

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"testing/fstest"
)

// benchRepo is a repository of n plain apps (apps/aNNNN/cm.yaml) and one
// app file listing them, generated at test time.
func benchRepo(n int) fstest.MapFS {
	fs := fstest.MapFS{}
	var apps strings.Builder
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("a%04d", i)
		fs["apps/"+name+"/cm.yaml"] = &fstest.MapFile{Data: []byte(configMap(name, "v1"))}
		fmt.Fprintf(&apps, "---\napiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: %s\nspec:\n  destination:\n    server: https://kubernetes.default.svc\n    namespace: %s\n  source:\n    repoURL: %s\n    targetRevision: main\n    path: apps/%s\n", name, name, appsURL, name)
	}
	fs["app-files/apps.yaml"] = &fstest.MapFile{Data: []byte(apps.String())}
	return fs
}

// BenchmarkPreview1000Apps previews a change touching 10 of 1,000 apps:
// every app renders once at base (the evidence of what it reads), exactly
// the 10 touched apps at head.
func BenchmarkPreview1000Apps(b *testing.B) {
	const n, touched = 1000, 10
	r := newRepo(b, benchRepo(n))
	changes := map[string]string{}
	for i := 0; i < touched; i++ {
		name := fmt.Sprintf("a%04d", i*97)
		changes["apps/"+name+"/cm.yaml"] = configMap(name, "v2")
	}
	head := r.commit(b, changes)
	o := r.options(b, r.first, head)
	o.Apps = []string{"app-files"}
	b.ResetTimer()
	var rep Report
	for b.Loop() {
		var err error
		if rep, err = Run(context.Background(), o); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if rep.Renders.Head != touched || rep.Renders.Base != n || len(rep.Apps) != touched {
		b.Fatalf("renders %+v, %d apps reported; want %d base, %d head, %d apps", rep.Renders, len(rep.Apps), n, touched, touched)
	}
	b.ReportMetric(float64(rep.Renders.Base), "base-renders/op")
	b.ReportMetric(float64(rep.Renders.Head), "head-renders/op")
}
