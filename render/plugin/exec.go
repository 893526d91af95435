package plugin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/kubegitops/gitops/render"
)

// ErrOutputTooLarge is returned when a plugin writes more than its
// MaxOutputBytes.
var ErrOutputTooLarge = fmt.Errorf("%w: plugin output", render.ErrTooLarge)

// ErrTimeout is returned when a plugin runs past its Timeout.
var ErrTimeout = errors.New("plugin timed out")

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// environment builds the plugin's environment from scratch.
func environment(p Plugin, in render.Input, w *workDir) ([]string, error) {
	env := map[string]string{"PATH": "/usr/local/bin:/usr/bin:/bin"}
	for _, name := range p.Env {
		if v, ok := os.LookupEnv(name); ok {
			env[name] = v
		}
	}
	env["HOME"] = w.home
	env["TMPDIR"] = w.home
	env["ARGOCD_APP_NAME"] = in.AppName
	env["ARGOCD_APP_NAMESPACE"] = in.Namespace
	env["ARGOCD_APP_SOURCE_PATH"] = in.Path
	env["KUBE_VERSION"] = in.KubeVersion
	env["KUBE_API_VERSIONS"] = strings.Join(in.APIVersions, ",")
	for k, v := range in.Plugin.BuildEnv {
		if !envName.MatchString(k) {
			return nil, fmt.Errorf("%w: build env name %q", render.ErrInvalidInput, k)
		}
		env[k] = v
	}
	if len(in.Plugin.Parameters) > 0 {
		data, err := json.Marshal(in.Plugin.Parameters)
		if err != nil {
			return nil, err
		}
		env["ARGOCD_APP_PARAMETERS"] = string(data)
		for k, v := range parameterEnv(in.Plugin.Parameters) {
			env[k] = v
		}
	}
	for k, v := range in.Plugin.Env {
		if !envName.MatchString(k) {
			return nil, fmt.Errorf("%w: plugin env name %q", render.ErrInvalidInput, k)
		}
		env["ARGOCD_ENV_"+k] = v
	}
	if p.GrantCredentials {
		for k, v := range p.Credentials {
			env[k] = v
		}
	}
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out, nil
}

// parameterEnv spells plugin parameters as Argo CD's config management
// plugins receive them: PARAM_<NAME> for a string, PARAM_<NAME>_<i> for
// an array's items, PARAM_<NAME>_<KEY> for a map's entries; names upper
// case, every character other than a letter or a digit an underscore.
func parameterEnv(params []render.PluginParameter) map[string]string {
	out := map[string]string{}
	name := func(parts ...string) string {
		s := strings.ToUpper(strings.Join(append([]string{"PARAM"}, parts...), "_"))
		return nonAlnum.ReplaceAllString(s, "_")
	}
	for _, p := range params {
		if p.String != nil {
			out[name(p.Name)] = *p.String
		}
		for i, v := range p.Array {
			out[name(p.Name, strconv.Itoa(i))] = v
		}
		for k, v := range p.Map {
			out[name(p.Name, k)] = v
		}
	}
	return out
}

var nonAlnum = regexp.MustCompile(`[^A-Z0-9_]`)

// run executes the plugin in dir and returns its standard output.
func run(ctx context.Context, p Plugin, dir string, env []string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, p.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, p.Command[0], p.Command[1:]...)
	cmd.Dir = dir
	cmd.Env = env
	setProcessGroup(cmd)
	cmd.WaitDelay = 2 * time.Second
	stdout := render.NewOutputBuffer(p.MaxOutputBytes, cancel)
	stderr := render.NewOutputBuffer(64<<10, nil)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	err := cmd.Run()
	switch {
	case stdout.Overflowed():
		return nil, fmt.Errorf("%w of %d bytes", ErrOutputTooLarge, p.MaxOutputBytes)
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return nil, fmt.Errorf("%w after %s", ErrTimeout, p.Timeout)
	case err != nil:
		return nil, fmt.Errorf("plugin %s: %w: %s", p.Command[0], err, mask(tail(stderr.String(), 2048), p.Credentials))
	}
	return stdout.Bytes(), nil
}

func tail(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

// mask replaces every credential value in s.
func mask(s string, creds map[string]string) string {
	for _, v := range creds {
		if v != "" {
			s = strings.ReplaceAll(s, v, "***")
		}
	}
	return s
}
