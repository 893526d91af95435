package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestPrintsRenderedManifests runs the step without a cluster on
// testdata/app.yaml, whose source is the folder testdata/repo: it must exit
// 0 and print the folder's Deployment and Service as a YAML stream.
func TestPrintsRenderedManifests(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"--app", "testdata/app.yaml"}, &stdout, &stderr)
	if code != exitInSync {
		t.Fatalf("exit %d, want %d; stderr:\n%s", code, exitInSync, stderr.String())
	}
	if !strings.HasPrefix(stdout.String(), "# argocd/guestbook at sha256:") {
		t.Errorf("output does not start with the app's key and folder revision:\n%s", stdout.String())
	}
	got := map[string]map[string]any{}
	for _, doc := range strings.Split(stdout.String(), "\n---\n")[1:] {
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			t.Fatalf("document does not parse: %v\n%s", err, doc)
		}
		md, _ := obj["metadata"].(map[string]any)
		got[obj["kind"].(string)+"/"+md["name"].(string)] = obj
	}
	if len(got) != 2 {
		t.Fatalf("got objects %v, want Deployment/guestbook-ui and Service/guestbook-ui", keys(got))
	}
	dep, ok := got["Deployment/guestbook-ui"]
	if !ok {
		t.Fatalf("no Deployment/guestbook-ui in %v", keys(got))
	}
	containers := dep["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)
	if img := containers[0].(map[string]any)["image"]; img != "gcr.io/heptio-images/ks-guestbook-demo:0.2" {
		t.Errorf("Deployment image %v, want the one in testdata/repo", img)
	}
	if _, ok := got["Service/guestbook-ui"]; !ok {
		t.Errorf("no Service/guestbook-ui in %v", keys(got))
	}
}

// TestBadInputExitsTwo checks that a step that cannot be made says why and
// exits 2, not 1 (which means "out of sync" to a pipeline).
func TestBadInputExitsTwo(t *testing.T) {
	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"no app flag":    {nil, "--app is required"},
		"missing file":   {[]string{"--app", "testdata/missing.yaml"}, "testdata/missing.yaml"},
		"unknown field":  {[]string{"--app", "testdata/bad-field.yaml"}, "bogus"},
		"missing folder": {[]string{"--app", "testdata/missing-folder.yaml"}, "no-such-folder"},
	} {
		t.Run(name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), tc.args, &stdout, &stderr)
			if code != exitError {
				t.Errorf("exit %d, want %d", code, exitError)
			}
			if !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("stderr does not name %q:\n%s", tc.want, stderr.String())
			}
		})
	}
}

func keys(m map[string]map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
