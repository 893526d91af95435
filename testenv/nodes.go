//go:build unix

package testenv

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
)

// startNodeSide starts the controller manager, the scheduler and kwok,
// registers the fake nodes and waits until they are Ready and the controller
// manager is at work.
func (c *Cluster) startNodeSide(ctx context.Context, bins Binaries) error {
	ports, err := freePorts(1)
	if err != nil {
		return err
	}
	kc := c.kubeconfig
	logsConfig, err := c.writePodLogsConfig()
	if err != nil {
		return err
	}
	execConfig, err := c.writePodExecConfig()
	if err != nil {
		return err
	}
	var kcmTuning, clientTuning []string
	if q := c.opts.ControllerQPS; q > 0 {
		clientTuning = []string{"--kube-api-qps=" + strconv.Itoa(q), "--kube-api-burst=" + strconv.Itoa(2*q)}
		kcmTuning = append(slices.Clone(clientTuning), "--concurrent-deployment-syncs=20", "--concurrent-replicaset-syncs=20")
	}
	c.others = []*process{
		{
			name: "kube-controller-manager", path: bins.ControllerManager,
			logPath: filepath.Join(c.dir, "kube-controller-manager.log"),
			args: append([]string{
				"--kubeconfig=" + kc, "--leader-elect=false", "--secure-port=0",
				"--controllers=*,-serviceaccount-token",
				"--service-cluster-ip-range=10.96.0.0/16",
				// Fast garbage collection and namespace finalisation make
				// tests that delete things quick.
				"--concurrent-gc-syncs=10", "--concurrent-namespace-syncs=4",
				// kwok renews its fake nodes' leases itself; on a loaded
				// machine a renewal can come later than the default 50 s,
				// and the node lifecycle controller would then mark every
				// Pod not ready at once. Fake nodes never really fail.
				"--node-monitor-grace-period=1h", "--node-startup-grace-period=1h",
			}, kcmTuning...),
		},
		{
			name: "kube-scheduler", path: bins.Scheduler,
			logPath: filepath.Join(c.dir, "kube-scheduler.log"),
			args:    append([]string{"--kubeconfig=" + kc, "--leader-elect=false", "--secure-port=0"}, clientTuning...),
		},
		{
			name: "kwok", path: bins.Kwok,
			logPath: filepath.Join(c.dir, "kwok.log"),
			// kwok keeps no state of its own; a crash (see process.restarts)
			// is survived by starting it again.
			restarts: 3,
			args: []string{
				"--kubeconfig=" + kc, "--manage-all-nodes=true",
				// The nodes' kubelet endpoint is kwok's server, over TLS
				// (the API server proxies pods/log there).
				"--node-ip=127.0.0.1", "--node-port=" + strconv.Itoa(ports[0]),
				"--server-address=127.0.0.1:" + strconv.Itoa(ports[0]),
				"--tls-cert-file=" + c.servingCert, "--tls-private-key-file=" + c.servingKey,
				"--config=" + bins.KwokStages, "--config=" + logsConfig, "--config=" + execConfig,
			},
		},
	}
	for _, p := range c.others {
		if err := p.start(c.spawner); err != nil {
			return err
		}
	}
	cs, err := kubernetes.NewForConfig(c.admin)
	if err != nil {
		return fmt.Errorf("testenv: %w", err)
	}
	for i := 0; i < c.opts.Nodes; i++ {
		if err := createNode(ctx, cs, fmt.Sprintf("kwok-node-%d", i)); err != nil {
			return err
		}
	}
	return c.waitFor(ctx, "nodes Ready and the default service account", func(ctx context.Context) (bool, error) {
		nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		ready := 0
		for _, n := range nodes.Items {
			for _, cond := range n.Status.Conditions {
				if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue {
					ready++
				}
			}
		}
		if ready < c.opts.Nodes {
			return false, nil
		}
		_, err = cs.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	})
}

func createNode(ctx context.Context, cs kubernetes.Interface, name string) error {
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Annotations: map[string]string{"kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0"},
			Labels: map[string]string{
				"type": "kwok", "kubernetes.io/hostname": name,
				"kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
			},
		},
	}
	_, err := cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("testenv: create node %s: %w", name, err)
	}
	return nil
}

// waitFor polls cond until it holds, a component exits, or ctx ends.
func (c *Cluster) waitFor(ctx context.Context, what string, cond wait.ConditionWithContextFunc) error {
	err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		for _, p := range append([]*process{c.etcd, c.apiserver}, c.others...) {
			if p != nil && p.exited != nil && !p.running() {
				return false, p.exitError()
			}
		}
		return cond(ctx)
	})
	if err != nil {
		return fmt.Errorf("testenv: waiting for %s: %w (logs in %s)", what, err, c.dir)
	}
	return nil
}
