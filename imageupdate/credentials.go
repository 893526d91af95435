package imageupdate

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
)

// SecretGetter returns the data of a Kubernetes Secret. The engine glue
// passes one backed by the cluster; tests pass a map.
type SecretGetter func(ctx context.Context, namespace, name string) (map[string][]byte, error)

// credentialsFor resolves the registry credentials of an image. Order: the
// image's pull-secret annotation, else Options.DockerConfig, else
// anonymous. Rules of pull-secret, as Argo CD Image Updater reads it:
//   - pullsecret:ns/name: a Secret of type dockerconfigjson; the entry of
//     the image's registry host.
//   - secret:ns/name#field: a Secret field holding "username:password".
//   - env:NAME: an environment variable holding "username:password".
//   - ext:/path: a command run without arguments (bounded by
//     Options.CommandTimeout) printing "username:password".
func (u *Updater) credentialsFor(ctx context.Context, img Image) (*RegistryCredentials, error) {
	repo, err := name.NewRepository(img.Repository)
	if err != nil {
		return nil, errorf(ErrAnnotation, "%q is not an image name", img.Repository)
	}
	host := repo.RegistryStr()
	ref := img.PullSecret
	switch {
	case ref == "":
		if len(u.opts.DockerConfig) == 0 {
			return nil, nil
		}
		return dockerConfigEntry(u.opts.DockerConfig, host, "Options.DockerConfig")
	case strings.HasPrefix(ref, "pullsecret:"):
		data, err := u.secret(ctx, strings.TrimPrefix(ref, "pullsecret:"))
		if err != nil {
			return nil, err
		}
		cfg, ok := data[".dockerconfigjson"]
		if !ok {
			return nil, errorf(ErrCredentials, "pull secret %s has no .dockerconfigjson", strings.TrimPrefix(ref, "pullsecret:"))
		}
		return dockerConfigEntry(cfg, host, "pull secret "+strings.TrimPrefix(ref, "pullsecret:"))
	case strings.HasPrefix(ref, "secret:"):
		nsName, field, ok := strings.Cut(strings.TrimPrefix(ref, "secret:"), "#")
		if !ok || field == "" {
			return nil, errorf(ErrAnnotation, "pull-secret %q: want secret:<namespace>/<name>#<field>", ref)
		}
		data, err := u.secret(ctx, nsName)
		if err != nil {
			return nil, err
		}
		v, ok := data[field]
		if !ok {
			return nil, errorf(ErrCredentials, "secret %s has no field %q", nsName, field)
		}
		return userPass(string(v), "secret "+nsName+"#"+field)
	case strings.HasPrefix(ref, "env:"):
		v, ok := os.LookupEnv(strings.TrimPrefix(ref, "env:"))
		if !ok {
			return nil, errorf(ErrCredentials, "environment variable %s is not set", strings.TrimPrefix(ref, "env:"))
		}
		return userPass(v, "environment variable "+strings.TrimPrefix(ref, "env:"))
	case strings.HasPrefix(ref, "ext:"):
		path := strings.TrimPrefix(ref, "ext:")
		cctx, cancel := context.WithTimeout(ctx, u.opts.CommandTimeout)
		defer cancel()
		var out bytes.Buffer
		cmd := exec.CommandContext(cctx, path)
		cmd.Stdout = &out
		cmd.WaitDelay = time.Second
		if err := cmd.Run(); err != nil {
			// The command's output is never quoted: it may hold a secret.
			return nil, errorf(ErrCredentials, "credential command %s failed: %v", path, err)
		}
		return userPass(strings.TrimSpace(out.String()), "credential command "+path)
	}
	return nil, errorf(ErrAnnotation, "pull-secret %q is not understood", ref)
}

func (u *Updater) secret(ctx context.Context, nsName string) (map[string][]byte, error) {
	ns, n, ok := strings.Cut(nsName, "/")
	if !ok || ns == "" || n == "" {
		return nil, errorf(ErrAnnotation, "secret reference %q: want <namespace>/<name>", nsName)
	}
	if u.opts.Secrets == nil {
		return nil, errorf(ErrCredentials, "secret %s: no SecretGetter configured (Options.Secrets)", nsName)
	}
	data, err := u.opts.Secrets(ctx, ns, n)
	if err != nil {
		return nil, errorf(ErrCredentials, "secret %s: %v", nsName, err)
	}
	return data, nil
}

func userPass(v, what string) (*RegistryCredentials, error) {
	user, pass, ok := strings.Cut(v, ":")
	if !ok {
		return nil, errorf(ErrCredentials, "%s does not hold username:password", what)
	}
	return &RegistryCredentials{Username: user, Password: pass}, nil
}

// dockerConfigEntry finds host in a Docker config JSON ({"auths": {...}}).
// Keys may carry a scheme and path ("https://index.docker.io/v1/"); Docker
// Hub is matched under its aliases.
func dockerConfigEntry(raw []byte, host, what string) (*RegistryCredentials, error) {
	var cfg struct {
		Auths map[string]struct {
			Auth          string `json:"auth"`
			Username      string `json:"username"`
			Password      string `json:"password"`
			IdentityToken string `json:"identitytoken"`
		} `json:"auths"`
	}
	if err := json.Unmarshal(raw, &cfg); err != nil {
		return nil, errorf(ErrCredentials, "%s is not a Docker config JSON", what)
	}
	norm := func(h string) string {
		h = strings.TrimPrefix(strings.TrimPrefix(h, "https://"), "http://")
		h, _, _ = strings.Cut(h, "/")
		switch h {
		case "index.docker.io", "registry-1.docker.io", "docker.io":
			return name.DefaultRegistry
		}
		return h
	}
	for k, e := range cfg.Auths {
		if norm(k) != norm(host) {
			continue
		}
		c := &RegistryCredentials{Username: e.Username, Password: e.Password, IdentityToken: e.IdentityToken}
		if e.Auth != "" {
			dec, err := base64.StdEncoding.DecodeString(e.Auth)
			if err != nil {
				return nil, errorf(ErrCredentials, "%s: the auth of %s is not base64", what, k)
			}
			u, p, ok := strings.Cut(string(dec), ":")
			if !ok {
				return nil, errorf(ErrCredentials, "%s: the auth of %s is not username:password", what, k)
			}
			c.Username, c.Password = u, p
		}
		return c, nil
	}
	return nil, nil
}
