package engine

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/kubegitops/gitops/internal/gitserver"
	"github.com/kubegitops/gitops/internal/testfiles"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// TestTagPrefixFollowsAComponentsReleases: a monorepo on a real Git
// server tags each component's releases ("component-b/1.0.3"); an app
// with targetRevision "1.0.*" and tagPrefix "component-b/" deploys
// component-b's highest 1.0 patch, a new patch tag is deployed after the
// next refresh, and a constraint no tag of the prefix meets is an error
// naming the app, the constraint and the prefix.
func TestTagPrefixFollowsAComponentsReleases(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	gs, _ := testfiles.GitRepo(t, gitserver.DefaultOptions(), "mono", fstest.MapFS{"app/web.yaml": {Data: []byte(webApp)}})
	release := func(greeting string, tags ...string) string {
		t.Helper()
		c, err := gs.Commit(ctx, "mono", greeting, map[string][]byte{
			"app/web.yaml": bytes.Replace([]byte(webApp), []byte("greeting: hello"), []byte("greeting: "+greeting), 1),
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, tag := range tags {
			if _, err := gs.Git(ctx, "mono", "tag", tag, c); err != nil {
				t.Fatal(err)
			}
		}
		return c
	}
	release("a-one", "component-a/1.0.0", "component-b/1.0.0")
	b103 := release("b-one-zero-three", "component-b/1.0.3")
	release("b-one-one", "component-b/1.1.0")

	ns := cluster.TestNamespace(t)
	e := newEngine(t, nil)
	app := gitApp(ns, gs.RepoURL("mono"), "1.0.*", ns)
	app.Spec.Source.TagPrefix = "component-b/"
	st, err := e.Refresh(ctx, app)
	if err != nil || st.Revision != b103 {
		t.Fatalf("refresh: revision %s, %v; want component-b/1.0.3 = %s", st.Revision, err, b103)
	}
	cs, err := kubernetes.NewForConfig(cluster.Config())
	if err != nil {
		t.Fatal(err)
	}
	greeting := func() string {
		t.Helper()
		cm, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "settings", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return cm.Data["greeting"]
	}
	if _, err := e.Sync(ctx, app, SyncRequest{}); err != nil {
		t.Fatal(err)
	}
	if g := greeting(); g != "b-one-zero-three" {
		t.Fatalf("after the sync: greeting %q, want component-b/1.0.3's", g)
	}

	// The next patch release is tagged: the next refresh sees it.
	b104 := release("b-one-zero-four", "component-b/1.0.4")
	if st, err = e.HardRefresh(ctx, app); err != nil || st.Revision != b104 {
		t.Fatalf("after component-b/1.0.4: revision %s, %v; want %s", st.Revision, err, b104)
	}
	if _, err := e.Sync(ctx, app, SyncRequest{}); err != nil {
		t.Fatal(err)
	}
	if g := greeting(); g != "b-one-zero-four" {
		t.Fatalf("after the second sync: greeting %q, want component-b/1.0.4's", g)
	}

	app.Spec.Source.TargetRevision = "2.*"
	_, err = e.Refresh(ctx, app)
	if err == nil {
		t.Fatal("a constraint no tag meets refreshed without an error")
	}
	for _, want := range []string{ns, `"2.*"`, `"component-b/"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
}
