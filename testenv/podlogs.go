//go:build unix

package testenv

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// podLogsConfig is kwok's ClusterLogs: every container of every Pod
// serves the same two files as its current and previous logs.
const podLogsConfig = `apiVersion: kwok.x-k8s.io/v1alpha1
kind: ClusterLogs
metadata:
  name: testenv-pod-logs
spec:
  logs:
  - logsFile: %q
    previousLogsFile: %q
    follow: true
`

// writePodLogsConfig creates the (empty) log files and kwok's config
// pointing at them, and returns the config's path.
func (c *Cluster) writePodLogsConfig() (string, error) {
	current, previous := c.PodLogFiles()
	for _, f := range []string{current, previous} {
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			return "", fmt.Errorf("testenv: pod logs: %w", err)
		}
	}
	path := filepath.Join(c.dir, "kwok-pod-logs.yaml")
	if err := os.WriteFile(path, []byte(fmt.Sprintf(podLogsConfig, current, previous)), 0o644); err != nil {
		return "", fmt.Errorf("testenv: pod logs: %w", err)
	}
	return path, nil
}

// PodLogFiles returns the files kwok serves as the logs of every container
// of every Pod of a full cluster (pods/log through the API server):
// current for a request, previous for one with previous=true. Append to
// them with AppendPodLog; a following reader sees each line as it is
// written. Both are "" for an external cluster.
func (c *Cluster) PodLogFiles() (current, previous string) {
	if c.external || c.dir == "" {
		return "", ""
	}
	return filepath.Join(c.dir, "pod-current.log"), filepath.Join(c.dir, "pod-previous.log")
}

// AppendPodLog appends lines to a log file of PodLogFiles in the
// container runtime's log format (what kwok, like a kubelet, reads), each
// as written to stdout now.
func AppendPodLog(file string, lines ...string) error {
	if file == "" {
		return fmt.Errorf("testenv: no pod log file (external cluster)")
	}
	var b strings.Builder
	for _, l := range lines {
		fmt.Fprintf(&b, "%s stdout F %s\n", time.Now().UTC().Format(time.RFC3339Nano), l)
	}
	f, err := os.OpenFile(file, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("testenv: %w", err)
	}
	if _, err := f.WriteString(b.String()); err != nil {
		f.Close()
		return fmt.Errorf("testenv: %s: %w", file, err)
	}
	return f.Close()
}
