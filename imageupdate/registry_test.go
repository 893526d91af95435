package imageupdate

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// The digest strategy follows a mutable tag: the override pins latest to
// its digest; the tag is pushed again and, once the interval's cache is
// gone, the next update pins the new digest. Within the interval the
// cached scan is reused.
func TestDigestFollowsRepushedTag(t *testing.T) {
	t.Parallel()
	reg := startRegistry(t, nil)
	first := reg.push(t, "team/app", "latest", testImage(t, time.Unix(1, 0), "linux/amd64"))
	opts := testOptions()
	u := New(opts)
	app := App{Name: "dig", SourceType: SourceKustomize, Images: []string{reg.host + "/team/app:latest"},
		Annotations: ann("image-list", "web="+reg.host+"/team/app:latest", "web.update-strategy", "digest")}
	res, err := u.Update(context.Background(), app)
	if err != nil {
		t.Fatal(err)
	}
	want := reg.host + "/team/app:latest@" + first
	if res.Override == nil || len(res.Override.KustomizeImages) != 1 || res.Override.KustomizeImages[0] != want {
		t.Fatalf("override = %+v, want %s", res.Override, want)
	}
	second := reg.push(t, "team/app", "latest", testImage(t, time.Unix(2, 0), "linux/amd64"))
	if second == first {
		t.Fatal("the re-pushed image has the same digest")
	}
	app.Images = []string{want}
	// Same interval: the cached digest, so nothing to change.
	if res, err = u.Update(context.Background(), app); err != nil || len(res.Changes) != 0 {
		t.Fatalf("within the interval: %+v, %v", res, err)
	}
	// Next interval (a fresh cache): the new digest.
	res, err = New(opts).Update(context.Background(), app)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Changes) != 1 || res.Changes[0].NewDigest != second || res.Override.KustomizeImages[0] != reg.host+"/team/app:latest@"+second {
		t.Fatalf("after re-push: %+v", res)
	}
}

// Twenty apps on one image, updated concurrently: one tag listing.
func TestOneScanPerImageAndInterval(t *testing.T) {
	t.Parallel()
	var lists atomic.Int64
	reg := startRegistry(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.URL.Path, "/tags/list") {
				lists.Add(1)
			}
			h.ServeHTTP(w, r)
		})
	})
	pushVersions(t, reg)
	u := New(testOptions())
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			app := App{Name: fmt.Sprintf("app-%d", i), SourceType: SourceHelm, Images: []string{reg.host + "/team/app:1.0.0"},
				Annotations: ann("image-list", "web="+reg.host+"/team/app:~1.0")}
			res, err := u.Update(context.Background(), app)
			if err == nil && (len(res.Changes) != 1 || res.Changes[0].NewTag != "1.0.1") {
				err = fmt.Errorf("%s: %+v", app.Name, res)
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n, s := lists.Load(), u.Registry().Stats().TagLists; n != 1 || s != 1 {
		t.Fatalf("registry saw %d tag listings (stats %d), want 1", n, s)
	}
}

// newest-build reads config blobs for creation dates; platforms filter
// multi-arch indexes; alphabetical sorts names; allow-tags and ignore-tags
// filter first.
func TestStrategiesAgainstRegistry(t *testing.T) {
	t.Parallel()
	reg := startRegistry(t, nil)
	day := func(d int) time.Time { return time.Date(2026, 3, d, 0, 0, 0, 0, time.UTC) }
	reg.push(t, "team/app", "main-aaa", testImage(t, day(3), "linux/amd64"))
	reg.push(t, "team/app", "main-bbb", testImage(t, day(1), "linux/amd64"))
	reg.push(t, "team/app", "dev-ccc", testImage(t, day(9), "linux/amd64"))
	reg.pushIndex(t, "team/app", "main-arm", day(5), "linux/arm64")
	reg.pushIndex(t, "team/app", "main-multi", day(4), "linux/amd64", "linux/arm64")
	reg.push(t, "team/app", "2026.03.10", testImage(t, day(2), "linux/amd64"))
	reg.push(t, "team/app", "2026.04.01", testImage(t, day(2), "linux/amd64"))
	u := New(testOptions())
	for name, c := range map[string]struct {
		ann  map[string]string
		want string
	}{
		"newest-build":           {ann("web.update-strategy", "newest-build", "web.allow-tags", "regexp:^main-"), "main-arm"},
		"latest is newest-build": {ann("web.update-strategy", "latest", "web.allow-tags", "regexp:^main-", "web.ignore-tags", "main-arm"), "main-multi"},
		"platform filter":        {ann("web.update-strategy", "newest-build", "web.allow-tags", "regexp:^main-", "web.platforms", "linux/amd64"), "main-multi"},
		"alphabetical":           {ann("web.update-strategy", "alphabetical", "web.allow-tags", "regexp:^[0-9.]+$"), "2026.04.01"},
		"name is alphabetical":   {ann("web.update-strategy", "name", "web.ignore-tags", "main-*, dev-*, 2026.04.*"), "2026.03.10"},
		"app-wide default + any": {ann("update-strategy", "newest-build", "allow-tags", "any"), "dev-ccc"},
	} {
		t.Run(name, func(t *testing.T) {
			a := c.ann
			a[Prefix+"image-list"] = "web=" + reg.host + "/team/app"
			res, err := u.Update(context.Background(), App{Name: "s", SourceType: SourceHelm, Annotations: a, Images: []string{reg.host + "/team/app:old"}})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Changes) != 1 || res.Changes[0].NewTag != c.want {
				t.Fatalf("changes %+v skipped %+v, want %s", res.Changes, res.Skipped, c.want)
			}
			p := res.Override.HelmParameters
			if len(p) != 2 || p[0] != (HelmParameter{Name: "image.name", Value: reg.host + "/team/app", ForceString: true}) || p[1].Value != c.want {
				t.Fatalf("helm parameters %+v", p)
			}
		})
	}
}

// A registry that hangs, one that answers garbage, and one with more tags
// than allowed: typed errors, each within its bound.
func TestHostileRegistries(t *testing.T) {
	t.Parallel()
	hang := startRegistry(t, func(http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/v2/" {
				w.WriteHeader(http.StatusOK)
				return
			}
			<-r.Context().Done()
		})
	})
	garbage := startRegistry(t, func(http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte("<html>definitely not JSON"))
		})
	})
	many := startRegistry(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !strings.HasSuffix(r.URL.Path, "/tags/list") {
				h.ServeHTTP(w, r)
				return
			}
			var b strings.Builder
			b.WriteString(`{"name":"team/app","tags":[`)
			for i := range 100000 {
				if i > 0 {
					b.WriteByte(',')
				}
				fmt.Fprintf(&b, `"1.%d.%d"`, i/1000, i%1000)
			}
			b.WriteString(`]}`)
			_, _ = w.Write([]byte(b.String()))
		})
	})
	app := func(r *testRegistry) App {
		return App{Name: "hostile", SourceType: SourceHelm, Images: []string{r.host + "/team/app:1.0.0"},
			Annotations: ann("image-list", "web="+r.host+"/team/app")}
	}
	opts := testOptions()
	opts.Registry.Timeout = 300 * time.Millisecond
	start := time.Now()
	_, err := New(opts).Update(context.Background(), app(hang))
	if !errors.Is(err, ErrTimeout) || time.Since(start) > 10*time.Second {
		t.Fatalf("hanging registry: %v after %s", err, time.Since(start))
	}
	if _, err := New(opts).Update(context.Background(), app(garbage)); !errors.Is(err, ErrRegistry) {
		t.Fatalf("garbage registry: %v", err)
	}
	// 100k tags: fine within the default bound (the highest wins), an error
	// past a smaller one.
	res, err := New(testOptions()).Update(context.Background(), app(many))
	if err != nil || len(res.Changes) != 1 || res.Changes[0].NewTag != "1.99.999" {
		t.Fatalf("100k tags: %+v, %v", res, err)
	}
	small := testOptions()
	small.Registry.MaxTags = 1000
	if _, err := New(small).Update(context.Background(), app(many)); !errors.Is(err, ErrTooManyTags) {
		t.Fatalf("MaxTags 1000: %v", err)
	}
}

// Credentials from a pull Secret, a Secret field, an external command and
// a Docker config: a registry behind basic auth is listed with each, and
// refused without. The password appears in no error.
func TestRegistryCredentials(t *testing.T) {
	t.Parallel()
	const user, pass = "robot", "hunter2-registry"
	reg := startRegistry(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if u, p, ok := r.BasicAuth(); !ok || u != user || p != pass {
				w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			h.ServeHTTP(w, r)
		})
	})
	ref, err := name.NewTag(reg.host + "/team/app:1.0.1")
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(ref, testImage(t, time.Unix(1, 0), "linux/amd64"), remote.WithAuth(&authn.Basic{Username: user, Password: pass})); err != nil {
		t.Fatal(err)
	}
	dockerCfg := fmt.Sprintf(`{"auths":{"http://%s":{"auth":"%s"}}}`, reg.host, base64.StdEncoding.EncodeToString([]byte(user+":"+pass)))
	script := t.TempDir() + "/creds.sh"
	writeExecutable(t, script, "#!/bin/sh\necho '"+user+":"+pass+"'\n")
	secrets := func(_ context.Context, ns, name string) (map[string][]byte, error) {
		switch ns + "/" + name {
		case "argocd/pull":
			return map[string][]byte{".dockerconfigjson": []byte(dockerCfg)}, nil
		case "argocd/field":
			return map[string][]byte{"creds": []byte(user + ":" + pass)}, nil
		}
		return nil, errors.New("not found")
	}
	for name, c := range map[string]struct {
		pullSecret string
		docker     bool
		wantErr    error
	}{
		"pullsecret":    {pullSecret: "pullsecret:argocd/pull"},
		"secret field":  {pullSecret: "secret:argocd/field#creds"},
		"ext command":   {pullSecret: "ext:" + script},
		"docker config": {docker: true},
		"anonymous":     {wantErr: ErrRegistry},
		"missing":       {pullSecret: "pullsecret:argocd/none", wantErr: ErrCredentials},
	} {
		t.Run(name, func(t *testing.T) {
			opts := testOptions()
			opts.Secrets = secrets
			if c.docker {
				opts.DockerConfig = []byte(dockerCfg)
			}
			a := ann("image-list", "web="+reg.host+"/team/app")
			if c.pullSecret != "" {
				a[Prefix+"web.pull-secret"] = c.pullSecret
			}
			res, err := New(opts).Update(context.Background(), App{Name: "creds", SourceType: SourceHelm, Annotations: a, Images: []string{reg.host + "/team/app:1.0.0"}})
			if c.wantErr != nil {
				if !errors.Is(err, c.wantErr) || strings.Contains(err.Error(), pass) {
					t.Fatalf("err = %v, want %v without the password", err, c.wantErr)
				}
				return
			}
			if err != nil || len(res.Changes) != 1 || res.Changes[0].NewTag != "1.0.1" {
				t.Fatalf("%+v, %v", res, err)
			}
		})
	}
}

// Requests to one registry host wait for its rate limit; a wait that would
// outlast the call's deadline fails at once with ErrTimeout rather than
// hammering the registry. Another host has its own budget.
func TestRateLimitPerRegistry(t *testing.T) {
	t.Parallel()
	slow, other := startRegistry(t, nil), startRegistry(t, nil)
	pushVersions(t, slow)
	pushVersions(t, other)
	opts := testOptions()
	opts.Registry.RequestsPerSecond = 0.001 // one request per 1000 s
	opts.Registry.Burst = 3                 // the ping (https, then http on loopback) and one listing
	u := New(opts)
	app := func(r *testRegistry, name string) App {
		return App{Name: name, SourceType: SourceHelm, Images: []string{r.host + "/team/app:1.0.0"},
			Annotations: ann("image-list", "web="+r.host+"/team/app:~1.0", "web.platforms", "linux/amd64")}
	}
	start := time.Now()
	// The listing fits the burst; describing the first tag does not.
	_, err := u.Update(context.Background(), app(slow, "limited"))
	if !errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), "rate limit of "+slow.host) {
		t.Fatalf("err = %v", err)
	}
	if time.Since(start) > 5*time.Second {
		t.Fatalf("the limited call took %s: it waited instead of failing", time.Since(start))
	}
	// The other registry has its own budget: it lists within its burst and
	// runs out only when describing.
	_, err = u.Update(context.Background(), app(other, "other"))
	if !errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), "rate limit of "+other.host) {
		t.Fatalf("other registry: %v", err)
	}
	// Each registry's listing succeeded (a tag was then described): the
	// first registry's exhausted budget did not starve the second.
	if st := u.Registry().Stats(); st.TagLists != 2 || st.Manifests != 2 {
		t.Fatalf("stats %+v, want one listing and one description per registry", st)
	}
}
