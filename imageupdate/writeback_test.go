package imageupdate

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

const values = `# chart values
replicaCount: 2
image:
  name: old/app
  tag: "0.9"
`

// Helm apps: image-name/image-tag into a values file (target branch from a
// template, pushed with credentials from git:secret:ns/name), image-spec
// into Argo's .argocd-source-<app>.yaml; a dry run changes nothing.
func TestHelmWriteBack(t *testing.T) {
	t.Parallel()
	reg := startRegistry(t, nil)
	pushVersions(t, reg)
	gs, url := startGit(t, "chart", fstest.MapFS{
		"app/values.yaml":               {Data: []byte(values)},
		"app/.argocd-source-other.yaml": {Data: []byte("helm:\n  parameters:\n  - name: keep.me\n    value: \"yes\"\n    forcestring: true\n")},
		"app/Chart.yaml":                {Data: []byte("apiVersion: v2\nname: app\nversion: 0.1.0\n")},
	})
	ctx := context.Background()
	head, _ := gs.Head(ctx, "chart")

	// Dry run: the edit is computed, nothing is pushed.
	opts := testOptions()
	opts.DryRun = true
	opts.Secrets = func(_ context.Context, ns, name string) (map[string][]byte, error) {
		if ns+"/"+name != "argocd/git" {
			return nil, errors.New("no such secret")
		}
		return map[string][]byte{"username": []byte(pushUser), "password": []byte(pushPass)}, nil
	}
	helmApp := App{Name: "web", RepoURL: url, Path: "app", TargetRevision: "main", SourceType: SourceHelm, Credentials: pushCreds(),
		Images: []string{"old/app:0.9"},
		Annotations: ann("image-list", "web="+reg.host+"/team/app:1.0.x", "web.force-update", "true",
			"web.helm.image-name", "image.name", "web.helm.image-tag", "image.tag",
			"write-back-method", "git:secret:argocd/git", "write-back-target", "helmvalues:values.yaml",
			"git-branch", "main:image-updater-{{.AppName}}-{{.SHA256 | printf \"%.8s\"}}")}
	res, err := New(opts).Update(ctx, helmApp)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Files) != 1 || res.Files[0].Path != "app/values.yaml" || !strings.Contains(string(res.Files[0].After), `tag: "1.0.1"`) || res.Commit != "" {
		t.Fatalf("dry run: %+v", res)
	}
	if now, _ := gs.Head(ctx, "chart"); now != head {
		t.Fatal("the dry run moved the branch")
	}

	opts.DryRun = false
	helmApp.Credentials = nil // only the Secret can push
	res, err = New(opts).Update(ctx, helmApp)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(res.Branch, "image-updater-web-") || len(res.Branch) != len("image-updater-web-")+8 {
		t.Fatalf("branch %q", res.Branch)
	}
	got, _ := clone(t, url+"", "app/values.yaml")
	if got != values {
		t.Fatalf("main changed:\n%s", got)
	}
	got = cloneBranch(t, url, res.Branch, "app/values.yaml")
	for _, want := range []string{"# chart values", "replicaCount: 2", "name: " + reg.host + "/team/app", `tag: "1.0.1"`} {
		if !strings.Contains(got, want) {
			t.Errorf("values lack %q:\n%s", want, got)
		}
	}

	// image-spec into the override file of app "other", keeping its
	// parameter and listing the spec's (the file's list replaces the
	// spec's when Argo or the engine merges it).
	other := App{Name: "other", RepoURL: url, Path: "app", TargetRevision: "main", SourceType: SourceHelm, Credentials: pushCreds(),
		Images:       []string{reg.host + "/team/app:1.0.0"},
		Annotations:  ann("image-list", "web="+reg.host+"/team/app:~1.0", "web.helm.image-spec", "image.spec", "write-back-method", "git"),
		SpecOverride: Override{HelmParameters: []HelmParameter{{Name: "replicaCount", Value: "3"}}}}
	if res, err = New(testOptions()).Update(ctx, other); err != nil || res.Commit == "" {
		t.Fatalf("%+v, %v", res, err)
	}
	got, _ = clone(t, url, "app/.argocd-source-other.yaml")
	for _, want := range []string{"name: keep.me", "name: image.spec", "name: replicaCount", "value: " + reg.host + "/team/app:1.0.1", "forcestring: true"} {
		if !strings.Contains(got, want) {
			t.Errorf("override file lacks %q:\n%s", want, got)
		}
	}
}

// A push without credentials is refused by the server: ErrCredentials,
// and no secret in the message.
func TestPushWithoutCredentials(t *testing.T) {
	t.Parallel()
	reg := startRegistry(t, nil)
	pushVersions(t, reg)
	_, url := startGit(t, "auth", fstest.MapFS{"app/kustomization.yaml": {Data: []byte(kustomization)}})
	app := kustomizeApp(reg, url, ann("image-list", "web="+reg.host+"/team/app:~1.0", "write-back-method", "git"))
	app.Credentials = nil
	_, err := New(testOptions()).Update(context.Background(), app)
	if !errors.Is(err, ErrCredentials) {
		t.Fatalf("err = %v", err)
	}
	// A password written into the URL never reaches the message.
	app.RepoURL = strings.Replace(url, "http://", "http://updater:url-password@", 1)
	_, err = New(testOptions()).Update(context.Background(), app)
	if err == nil || strings.Contains(err.Error(), "url-password") {
		t.Fatalf("err = %v", err)
	}
	t.Logf("with a password in the URL: %v", err)
	app.RepoURL = url
	app.Credentials = pushCreds()
	app.Credentials.Password = "wrong-password"
	_, err = New(testOptions()).Update(context.Background(), app)
	if !errors.Is(err, ErrCredentials) || strings.Contains(err.Error(), "wrong-password") {
		t.Fatalf("err = %v", err)
	}
}

// A Git server that accepts the connection and never answers: ErrTimeout
// within the Git timeout, nothing returned.
func TestGitServerHangs(t *testing.T) {
	t.Parallel()
	reg := startRegistry(t, nil)
	pushVersions(t, reg)
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	t.Cleanup(hang.Close)
	opts := testOptions()
	opts.Git.Timeout = 300 * time.Millisecond
	app := kustomizeApp(reg, hang.URL+"/repo.git", ann("image-list", "web="+reg.host+"/team/app:~1.0", "write-back-method", "git"))
	start := time.Now()
	res, err := New(opts).Update(context.Background(), app)
	if !errors.Is(err, ErrTimeout) || res.Commit != "" || time.Since(start) > 10*time.Second {
		t.Fatalf("%+v, %v after %s", res, err, time.Since(start))
	}
}

// pull-secret env:NAME reads username:password from the environment (not
// parallel: it sets a variable).
func TestPullSecretFromEnvironment(t *testing.T) {
	const user, pass = "envuser", "env-registry-pass"
	reg := startRegistry(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if u, p, ok := r.BasicAuth(); !ok || u != user || p != pass {
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			h.ServeHTTP(w, r)
		})
	})
	ref, err := name.NewTag(reg.host + "/team/app:2.0.0")
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(ref, testImage(t, time.Unix(1, 0), "linux/amd64"), remote.WithAuth(&authn.Basic{Username: user, Password: pass})); err != nil {
		t.Fatal(err)
	}
	t.Setenv("IMAGEUPDATE_TEST_CREDS", user+":"+pass)
	a := ann("image-list", "web="+reg.host+"/team/app", "web.pull-secret", "env:IMAGEUPDATE_TEST_CREDS")
	res, err := New(testOptions()).Update(context.Background(), App{Name: "env", SourceType: SourceHelm, Annotations: a, Images: []string{reg.host + "/team/app:1"}})
	if err != nil || len(res.Changes) != 1 || res.Changes[0].NewTag != "2.0.0" {
		t.Fatalf("%+v, %v", res, err)
	}
	a[Prefix+"web.pull-secret"] = "env:IMAGEUPDATE_TEST_UNSET"
	if _, err := New(testOptions()).Update(context.Background(), App{Name: "env", SourceType: SourceHelm, Annotations: a, Images: []string{reg.host + "/team/app:1"}}); !errors.Is(err, ErrCredentials) {
		t.Fatalf("unset variable: %v", err)
	}
}
