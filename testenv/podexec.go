//go:build unix

package testenv

import (
	"fmt"
	"os"
	"path/filepath"
)

// podExecConfig is kwok's ClusterExec: an exec into any container of any
// Pod of a full cluster (pods/exec through the API server, with or without
// a TTY) runs the command on this machine, in the cluster's directory.
// Tests of exec clients (a terminal) thus reach a real process through the
// API server and kwok's kubelet endpoint; the command is the host's.
const podExecConfig = `apiVersion: kwok.x-k8s.io/v1alpha1
kind: ClusterExec
metadata:
  name: testenv-pod-exec
spec:
  execs:
  - local:
      workDir: %q
      envs:
      - {name: TERM, value: dumb}
      - {name: PS1, value: "$ "}
`

// writePodExecConfig writes kwok's ClusterExec config and returns its
// path.
func (c *Cluster) writePodExecConfig() (string, error) {
	path := filepath.Join(c.dir, "kwok-pod-exec.yaml")
	if err := os.WriteFile(path, []byte(fmt.Sprintf(podExecConfig, c.dir)), 0o644); err != nil {
		return "", fmt.Errorf("testenv: pod exec: %w", err)
	}
	return path, nil
}
