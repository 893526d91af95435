//go:build unix

package testenv

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// ErrExternal is returned by operations that need to own the cluster's
// processes (RestartAPIServer and friends) when the cluster was attached
// through GITOPS_TESTENV_KUBECONFIG.
var ErrExternal = errors.New("testenv: the cluster is external; its processes are not ours to control")

// Cluster is a running local cluster (or an attached external one).
type Cluster struct {
	opts       Options
	dir        string
	external   bool
	kubeconfig string
	server     string
	caPEM      []byte
	adminToken string
	userTokens map[string]string
	admin      *rest.Config
	// servingCert and servingKey are the loopback serving pair (the API
	// server's, reused by kwok's kubelet endpoint).
	servingCert, servingKey string

	mu        sync.Mutex // guards the processes and stopped
	spawner   *spawner
	etcd      *process
	apiserver *process
	others    []*process // controller-manager, scheduler, kwok
	stopped   bool
}

// Start builds what is missing, starts the cluster and returns when it is
// ready: the API server answers /readyz and, for a full cluster, every
// kwok node is Ready and the controller manager has created the default
// service account. When GITOPS_TESTENV_KUBECONFIG is set it attaches to that
// cluster instead. On error nothing is left running.
func Start(ctx context.Context, opts Options) (*Cluster, error) {
	if path := os.Getenv(EnvKubeconfig); path != "" {
		return attach(path)
	}
	opts = opts.withDefaults()
	if opts.Build.Log == nil {
		opts.Build.Log = func(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }
	}
	bins, err := EnsureBinaries(ctx, !opts.APIServerOnly, opts.Build)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "testenv-")
	if err != nil {
		return nil, fmt.Errorf("testenv: %w", err)
	}
	c := &Cluster{opts: opts, dir: dir, spawner: newSpawner()}
	ok := false
	defer func() {
		if !ok {
			c.Stop()
		}
	}()
	ctx, cancel := context.WithTimeout(ctx, opts.StartTimeout)
	defer cancel()
	if err := c.startControlPlane(ctx, bins); err != nil {
		return nil, err
	}
	if !opts.APIServerOnly {
		if err := c.startNodeSide(ctx, bins); err != nil {
			return nil, err
		}
	}
	ok = true
	return c, nil
}

func attach(path string) (*Cluster, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return nil, fmt.Errorf("testenv: %s=%s: %w", EnvKubeconfig, path, err)
	}
	return &Cluster{external: true, kubeconfig: path, server: cfg.Host, admin: cfg}, nil
}

func (c *Cluster) startControlPlane(ctx context.Context, bins Binaries) error {
	pki, err := newPKI(c.dir, c.opts.Users)
	if err != nil {
		return fmt.Errorf("testenv: certificates: %w", err)
	}
	c.caPEM, c.adminToken, c.userTokens = pki.caPEM, pki.adminToken, pki.userTokens
	c.servingCert, c.servingKey = pki.certFile, pki.keyFile
	ports, err := freePorts(3)
	if err != nil {
		return err
	}
	etcdClient, etcdPeer, apiPort := ports[0], ports[1], ports[2]
	c.server = "https://127.0.0.1:" + strconv.Itoa(apiPort)
	c.etcd = &process{
		name: "etcd", path: bins.Etcd, logPath: filepath.Join(c.dir, "etcd.log"),
		args: []string{
			"--data-dir=" + filepath.Join(c.dir, "etcd"),
			"--listen-client-urls=http://127.0.0.1:" + strconv.Itoa(etcdClient),
			"--advertise-client-urls=http://127.0.0.1:" + strconv.Itoa(etcdClient),
			"--listen-peer-urls=http://127.0.0.1:" + strconv.Itoa(etcdPeer),
			"--initial-advertise-peer-urls=http://127.0.0.1:" + strconv.Itoa(etcdPeer),
			"--initial-cluster=default=http://127.0.0.1:" + strconv.Itoa(etcdPeer),
			"--unsafe-no-fsync", // test data: durability buys nothing, fsync costs seconds
		},
	}
	c.apiserver = &process{
		name: "kube-apiserver", path: bins.APIServer, logPath: filepath.Join(c.dir, "kube-apiserver.log"),
		args: []string{
			"--etcd-servers=http://127.0.0.1:" + strconv.Itoa(etcdClient),
			"--secure-port=" + strconv.Itoa(apiPort),
			"--bind-address=127.0.0.1",
			"--advertise-address=127.0.0.1",
			"--endpoint-reconciler-type=none", // loopback may not back the kubernetes Service; nothing here needs it
			"--cert-dir=" + filepath.Join(c.dir, "certs"),
			"--tls-cert-file=" + pki.certFile,
			"--tls-private-key-file=" + pki.keyFile,
			"--service-account-issuer=https://kubernetes.default.svc",
			"--service-account-key-file=" + pki.saPublic,
			"--service-account-signing-key-file=" + pki.saPrivate,
			"--token-auth-file=" + pki.tokenFile,
			"--authorization-mode=RBAC",
			"--service-cluster-ip-range=10.96.0.0/16",
			"--disable-admission-plugins=ServiceAccount",
			"--allow-privileged=true",
		},
	}
	if err := c.etcd.start(c.spawner); err != nil {
		return err
	}
	if err := c.apiserver.start(c.spawner); err != nil {
		return err
	}
	if err := c.waitReady(ctx); err != nil {
		return err
	}
	c.admin = c.configForToken(c.adminToken)
	c.kubeconfig = filepath.Join(c.dir, "kubeconfig")
	return writeKubeconfig(c.kubeconfig, c.server, c.caPEM, "admin", c.adminToken)
}

// waitReady polls /readyz until it answers 200, the API server exits, or
// ctx ends.
func (c *Cluster) waitReady(ctx context.Context) error {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(c.caPEM)
	client := &http.Client{
		Timeout:   2 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}},
	}
	defer client.CloseIdleConnections()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, c.server+"/readyz", nil)
		req.Header.Set("Authorization", "Bearer "+c.adminToken)
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = fmt.Errorf("/readyz answered %s", resp.Status)
		} else {
			last = err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("testenv: kube-apiserver not ready (last: %v): %w; logs in %s", last, ctx.Err(), c.dir)
		case <-c.etcd.exited:
			return c.etcd.exitError()
		case <-c.apiserver.exited:
			return c.apiserver.exitError()
		case <-tick.C:
		}
	}
}

func (c *Cluster) configForToken(token string) *rest.Config {
	return &rest.Config{
		Host:            c.server,
		BearerToken:     token,
		TLSClientConfig: rest.TLSClientConfig{CAData: c.caPEM},
		QPS:             200,
		Burst:           400,
	}
}

func writeKubeconfig(path, server string, ca []byte, user, token string) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["testenv"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: ca}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts["testenv"] = &clientcmdapi.Context{Cluster: "testenv", AuthInfo: user}
	cfg.CurrentContext = "testenv"
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return fmt.Errorf("testenv: write kubeconfig: %w", err)
	}
	return os.Chmod(path, 0o600)
}

// freePorts asks the kernel for n free loopback ports. Another process may
// take one before the component binds it; Start then fails with the
// component's log, which is rare enough on loopback to leave at that.
func freePorts(n int) ([]int, error) {
	var ports []int
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for i := 0; i < n; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("testenv: free port: %w", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// Config returns a copy of the admin's client configuration.
func (c *Cluster) Config() *rest.Config { return rest.CopyConfig(c.admin) }

// UserConfig returns the client configuration of an extra user named in
// Options.Users.
func (c *Cluster) UserConfig(name string) (*rest.Config, error) {
	if c.external {
		return nil, ErrExternal
	}
	tok, ok := c.userTokens[name]
	if !ok {
		return nil, fmt.Errorf("testenv: no user %q (add it to Options.Users)", name)
	}
	return c.configForToken(tok), nil
}

// Kubeconfig returns the path of a kubeconfig file for the admin.
func (c *Cluster) Kubeconfig() string { return c.kubeconfig }

// Server returns the API server's URL.
func (c *Cluster) Server() string { return c.server }

// Dir returns the cluster's folder (data, certificates, component logs), or
// "" for an external cluster.
func (c *Cluster) Dir() string { return c.dir }

// External reports whether the cluster was attached, not started.
func (c *Cluster) External() bool { return c.external }

// StopAPIServer kills the API server, as a crash would; the rest of the
// cluster keeps running. Clients see connection errors until StartAPIServer.
func (c *Cluster) StopAPIServer() error {
	if c.external {
		return ErrExternal
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.apiserver.kill()
	return nil
}

// StartAPIServer starts the API server again with the same flags, port and
// data, and returns when it is ready.
func (c *Cluster) StartAPIServer(ctx context.Context) error {
	if c.external {
		return ErrExternal
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		return errors.New("testenv: cluster stopped")
	}
	if c.apiserver.running() {
		return nil
	}
	if err := c.apiserver.start(c.spawner); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, c.opts.StartTimeout)
	defer cancel()
	return c.waitReady(ctx)
}

// RestartAPIServer kills the API server and starts it again, returning when
// it is ready. Clients built from Config keep working afterwards.
func (c *Cluster) RestartAPIServer(ctx context.Context) error {
	if err := c.StopAPIServer(); err != nil {
		return err
	}
	return c.StartAPIServer(ctx)
}

// Stop stops every component (node side first, etcd last) and removes the
// cluster's folder unless Options.KeepDir. It is safe to call more than once.
func (c *Cluster) Stop() error {
	if c.external {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		return nil
	}
	c.stopped = true
	for i := len(c.others) - 1; i >= 0; i-- {
		c.others[i].stop(5 * time.Second)
	}
	for _, p := range []*process{c.apiserver, c.etcd} {
		if p != nil {
			p.stop(10 * time.Second)
		}
	}
	c.spawner.close()
	if !c.opts.KeepDir {
		return os.RemoveAll(c.dir)
	}
	return nil
}

// String names the cluster by its server URL, never its tokens.
func (c *Cluster) String() string { return "testenv cluster at " + c.server }

// GoString implements fmt.GoStringer without tokens.
func (c *Cluster) GoString() string { return c.String() }

// Format implements fmt.Formatter: every verb prints String, so that %+v
// never reaches the admin and user tokens.
func (c *Cluster) Format(f fmt.State, _ rune) { fmt.Fprint(f, c.String()) }
