package main

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// buildOperator builds examples/operator into dir, before anything is
// measured, in the library's module (the folder the bench module's
// replace points at), and returns the binary's path. race builds it with
// the race detector: the tiny-size test does, so that after make test's
// unit stage (which compiled every package with -race) the build is
// little more than a link; a measuring run does not.
func buildOperator(ctx context.Context, dir string, race bool) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Dir}}", "github.com/kubegitops/gitops").Output()
	if err != nil {
		return "", fmt.Errorf("find the library's folder (run from the bench module): %w", err)
	}
	root := strings.TrimSpace(string(out))
	bin := filepath.Join(dir, "operator")
	args := []string{"build", "-o", bin}
	if race {
		args = append(args, "-race")
	}
	cmd := exec.CommandContext(ctx, "go", append(args, "./examples/operator")...)
	cmd.Dir = root
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build examples/operator in %s: %w\n%s", root, err, msg)
	}
	return bin, nil
}

// operatorProc is one operator replica the operators section runs as a
// process of its own.
type operatorProc struct {
	id      string
	cmd     *exec.Cmd
	logPath string
	metrics string // host:port of its metrics endpoint
	done    chan error
}

// startOperator starts bin as replica id of the group serving ns, with
// the harness's common flags and extra.
func startOperator(bin, dir, kubeconfig, ns, id, redisAddr string, extra ...string) (*operatorProc, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	logPath := filepath.Join(dir, id+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	metrics := "127.0.0.1:" + strconv.Itoa(port)
	args := append([]string{"-kubeconfig", kubeconfig, "-namespace", ns, "-shard", "-id", id, "-redis-addr", redisAddr,
		"-metrics-bind-address", metrics, "-health-probe-bind-address", "0", "-applicationsets=false",
		"-notifications=false", "-image-update-interval", "0", "-hydrator-interval", "0"}, extra...)
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("start operator %s: %w", id, err)
	}
	p := &operatorProc{id: id, cmd: cmd, logPath: logPath, metrics: metrics, done: make(chan error, 1)}
	go func() { p.done <- cmd.Wait(); logFile.Close() }()
	return p, nil
}

// signal sends sig and waits (at most timeout) for the process to end.
func (p *operatorProc) signal(sig syscall.Signal, timeout time.Duration) error {
	if err := p.cmd.Process.Signal(sig); err != nil {
		return fmt.Errorf("operator %s: %w", p.id, err)
	}
	select {
	case <-p.done:
		return nil
	case <-time.After(timeout):
		_ = p.cmd.Process.Kill()
		<-p.done
		return fmt.Errorf("operator %s did not end within %s of %s", p.id, timeout, sig)
	}
}

// stop ends the process (SIGTERM, then SIGKILL), ignoring one already
// ended.
func (p *operatorProc) stop() {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.signal(syscall.SIGTERM, 30*time.Second)
}

// ended reports whether the process ended, with its error.
func (p *operatorProc) ended() (bool, error) {
	select {
	case err := <-p.done:
		p.done <- err
		return true, err
	default:
		return false, nil
	}
}

// tail is the last n lines of the replica's log.
func (p *operatorProc) tail(n int) string {
	data, err := os.ReadFile(p.logPath)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// ownedApps scrapes gitops_shard_apps, the apps the replica says it owns;
// ok is false when the endpoint does not answer (yet).
func (p *operatorProc) ownedApps(ctx context.Context) (n int, ok bool) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+p.metrics+"/metrics", nil)
	if err != nil {
		return 0, false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, false
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "gitops_shard_apps{") {
			continue
		}
		f := strings.Fields(line)
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err != nil {
			return 0, false
		}
		return int(v), true
	}
	return 0, false
}

// freePort is a free loopback TCP port.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
