//go:build unix

package testenv

import "time"

// ProcessCPU returns the CPU time (user and system) each of the cluster's
// running processes has used so far, by program name ("etcd",
// "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok").
// The difference of two readings is what the cluster spent on the work
// between them: benchmarks use it to tell the API server's share of a
// client's time. It fails with ErrExternal for an attached cluster, and on
// systems without /proc.
func (c *Cluster) ProcessCPU() (map[string]time.Duration, error) {
	if c.external {
		return nil, ErrExternal
	}
	c.mu.Lock()
	procs := append([]*process{c.etcd, c.apiserver}, c.others...)
	pids := map[string]int{}
	for _, p := range procs {
		if p != nil && p.running() {
			pids[p.name] = p.pid()
		}
	}
	c.mu.Unlock()
	out := make(map[string]time.Duration, len(pids))
	for name, pid := range pids {
		d, err := processCPU(pid)
		if err != nil {
			return nil, err
		}
		out[name] = d
	}
	return out, nil
}
