package sops

import (
	"context"
	"encoding/base64"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubegitops/gitops/cache/store/redisstore"
	"github.com/kubegitops/gitops/internal/redistest"
	"github.com/kubegitops/gitops/internal/testfiles"
	"github.com/kubegitops/gitops/render"
	"github.com/kubegitops/gitops/render/helm"
	"github.com/kubegitops/gitops/render/kustomize"
	"github.com/kubegitops/gitops/render/plain"
)

const plaintext = "hunter2-plaintext"

func tools() render.Tools {
	return render.Tools{
		render.KindPlain:     plain.New(plain.DefaultOptions()),
		render.KindKustomize: kustomize.New(kustomize.DefaultOptions()),
		render.KindHelm:      helm.New(helm.DefaultOptions()),
	}
}

// encryptedRepo is a tree with one app of each kind, every secret in it
// encrypted for rcp.
func encryptedRepo(t testing.TB, rcp string) string {
	k8s := "^(data|stringData)$"
	return testfiles.Tree(t, map[string]string{
		"plain/secret.yaml": encryptFile(t, "secret.yaml", secretYAML, k8s, rcp),
		"plain/cm.yaml":     "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\ndata: {a: b}\n",

		"kust/kustomization.yaml": `resources: [secret.enc.yaml]
secretGenerator:
- name: app-env
  envs: [app.enc.env]
- name: app-files
  files: [token.json]
generatorOptions: {disableNameSuffixHash: true}
`,
		"kust/secret.enc.yaml": encryptFile(t, "secret.yaml", secretYAML, k8s, rcp),
		"kust/app.enc.env":     encryptFile(t, "app.env", "API_KEY="+plaintext+"-env\n", "", rcp),
		"kust/token.json":      encryptFile(t, "token.json", `{"token": "`+plaintext+`-json"}`, "", rcp),

		"chart/Chart.yaml":       "apiVersion: v2\nname: app\nversion: 1.0.0\n",
		"chart/values.yaml":      "password: default\n",
		"chart/templates/s.yaml": "apiVersion: v1\nkind: Secret\nmetadata: {name: chart-secret}\nstringData: {password: {{ .Values.password | quote }}}\n",
		"chart/secrets.yaml":     encryptFile(t, "secrets.yaml", "password: "+plaintext+"-helm\n", "", rcp),
		"chart/plain.yaml":       "password: not-encrypted\n",
	})
}

func secretValue(t testing.TB, objs []*unstructured.Unstructured, name, key string) string {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() != "Secret" || o.GetName() != name {
			continue
		}
		if v, ok, _ := unstructured.NestedString(o.Object, "stringData", key); ok {
			return v
		}
		if v, ok, _ := unstructured.NestedString(o.Object, "data", key); ok {
			b, err := base64.StdEncoding.DecodeString(v)
			if err != nil {
				t.Fatal(err)
			}
			return string(b)
		}
	}
	t.Fatalf("no Secret %s with %s in %d objects", name, key, len(objs))
	return ""
}

func TestRendersDecryptPlainKustomizeAndHelm(t *testing.T) {
	id, rcp := newIdentity(t)
	fsys := os.DirFS(encryptedRepo(t, rcp))
	r := render.Decrypting(tools(), newDecryptor(t, id))
	ctx := context.Background()

	objs, err := r.Render(ctx, render.Input{FS: fsys, Path: "plain", Namespace: "ns"})
	if err != nil {
		t.Fatal(err)
	}
	if got := secretValue(t, objs, "db", "password"); got != plaintext {
		t.Fatalf("plain: %q", got)
	}
	objs, err = r.Render(ctx, render.Input{FS: fsys, Path: "kust", Namespace: "ns"})
	if err != nil {
		t.Fatal(err)
	}
	if secretValue(t, objs, "db", "password") != plaintext || secretValue(t, objs, "app-env", "API_KEY") != plaintext+"-env" ||
		!strings.Contains(secretValue(t, objs, "app-files", "token.json"), plaintext+"-json") {
		t.Fatalf("kustomize: %v", objs)
	}
	helmIn := render.Input{FS: fsys, Path: "chart", AppName: "app", Namespace: "ns", Helm: &render.HelmSource{ValueFiles: []string{"secrets://secrets.yaml"}}}
	objs, err = r.Render(ctx, helmIn)
	if err != nil {
		t.Fatal(err)
	}
	if got := secretValue(t, objs, "chart-secret", "password"); got != plaintext+"-helm" {
		t.Fatalf("helm: %q", got)
	}
	// secrets:// on a file that is not encrypted fails naming it, as
	// helm-secrets does.
	helmIn.Helm = &render.HelmSource{ValueFiles: []string{"secrets://plain.yaml"}}
	_, err = r.Render(ctx, helmIn)
	var derr *render.DecryptError
	if !errors.As(err, &derr) || derr.Path != "chart/plain.yaml" {
		t.Fatalf("secrets:// of a plain file: %v", err)
	}
	// Without the decryptor the helm-secrets prefix is an unknown scheme.
	helmIn.Helm = &render.HelmSource{ValueFiles: []string{"secrets://secrets.yaml"}}
	if _, err := tools().Render(ctx, helmIn); !errors.Is(err, render.ErrSchemeNotAllowed) {
		t.Fatalf("secrets:// without a decryptor: %v", err)
	}
}

func TestBadFilesFailTheRenderNamingTheFile(t *testing.T) {
	id, rcp := newIdentity(t)
	other, _ := newIdentity(t)
	dir := encryptedRepo(t, rcp)
	enc, _ := os.ReadFile(dir + "/kust/app.enc.env")
	tampered := strings.Replace(string(enc), "API_KEY=ENC[AES256_GCM,data:", "API_KEY=ENC[AES256_GCM,data:AA", 1)
	testfiles.Write(t, dir, map[string]string{"tampered/kustomization.yaml": "secretGenerator:\n- name: s\n  envs: [app.enc.env]\n", "tampered/app.enc.env": tampered})
	fsys := os.DirFS(dir)
	cases := []struct {
		what, path, file string
		d                *Decryptor
		want             error
	}{
		{"tampered secretGenerator source", "tampered", "tampered/app.enc.env", newDecryptor(t, id), ErrTampered},
		{"unknown key, plain", "plain", "plain/secret.yaml", newDecryptor(t, other), ErrNoMatchingKey},
		{"unknown key, kustomize resource", "kust", "kust/secret.enc.yaml", newDecryptor(t, other), ErrNoMatchingKey},
		{"no key", "plain", "plain/secret.yaml", newDecryptor(t), ErrNoKeys},
	}
	for _, c := range cases {
		_, err := render.Decrypting(tools(), c.d).Render(context.Background(), render.Input{FS: fsys, Path: c.path})
		var derr *render.DecryptError
		if !errors.As(err, &derr) || derr.Path != c.file || !errors.Is(err, c.want) || !errors.Is(err, render.ErrDecrypt) {
			t.Fatalf("%s: %v", c.what, err)
		}
		if !strings.Contains(err.Error(), c.file) || strings.Contains(err.Error(), plaintext) {
			t.Fatalf("%s: the error does not name the file or reveals the plaintext: %v", c.what, err)
		}
	}
}

// Renders through a cache whose shared store is Redis: the decrypted
// outputs stay in the process, Redis holds no plaintext (raw or base64),
// the second render is served from the process, and a plain app still
// goes to Redis.
func TestRedisHoldsNoPlaintext(t *testing.T) {
	srv := redistest.Start(t)
	client := redis.NewClient(&redis.Options{Addr: srv.Addr})
	t.Cleanup(func() { client.Close() })
	id, rcp := newIdentity(t)
	dir := encryptedRepo(t, rcp)
	testfiles.Write(t, dir, map[string]string{"clear/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: clear}\ndata: {a: visible-value}\n"})
	fsys := os.DirFS(dir)
	inner := &counting{next: render.Decrypting(tools(), newDecryptor(t, id))}
	c := render.Cached(inner, redisstore.New(client, redisstore.Options{}), render.CacheOptions{DecodedEntries: -1})
	ctx := context.Background()
	inputs := []render.Input{
		{FS: fsys, Path: "plain", Namespace: "ns"},
		{FS: fsys, Path: "kust", Namespace: "ns"},
		{FS: fsys, Path: "chart", AppName: "app", Namespace: "ns", Helm: &render.HelmSource{ValueFiles: []string{"secrets://secrets.yaml"}}},
		{FS: fsys, Path: "clear", Namespace: "ns"},
	}
	for round := 0; round < 2; round++ {
		for _, in := range inputs {
			if _, err := c.Render(ctx, in); err != nil {
				t.Fatal(err)
			}
		}
	}
	if inner.n != len(inputs) {
		t.Fatalf("%d renders for %d inputs rendered twice: the second round missed", inner.n, len(inputs))
	}
	keys, err := client.Keys(ctx, "*").Result()
	if err != nil || len(keys) == 0 {
		t.Fatalf("redis keys: %v %v", keys, err)
	}
	needles := []string{plaintext}
	for _, s := range []string{plaintext, plaintext + "-env", plaintext + "-helm", plaintext + "-json"} {
		needles = append(needles, base64.StdEncoding.EncodeToString([]byte(s)))
	}
	sawClear := false
	for _, k := range keys {
		v, err := client.Get(ctx, k).Bytes()
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range needles {
			if strings.Contains(string(v), n) || strings.Contains(k, n) {
				t.Fatalf("redis key %s holds plaintext %q", k, n)
			}
		}
		sawClear = sawClear || strings.Contains(string(v), "visible-value")
	}
	if !sawClear {
		t.Fatal("the output of an app without secrets did not reach Redis: the test would not see a leak")
	}
}

type counting struct {
	next *render.DecryptingRenderer
	n    int
}

func (c *counting) Render(ctx context.Context, in render.Input) ([]*unstructured.Unstructured, error) {
	c.n++
	return c.next.Render(ctx, in)
}

func (c *counting) Identity(in render.Input) (render.Identity, error) { return c.next.Identity(in) }
