//go:build linux

package testenv

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

const envOrphanHelper = "GITOPS_TESTENV_ORPHAN_HELPER"

// orphanHelper runs in a child copy of the test binary: it starts a cluster,
// prints the PIDs of its processes and waits to be killed.
func orphanHelper() int {
	opts := DefaultOptions()
	opts.APIServerOnly = true
	c, err := Start(context.Background(), opts)
	if err != nil {
		fmt.Println("ERROR", err)
		return 1
	}
	fmt.Printf("PIDS %d %d\n", c.etcd.pid(), c.apiserver.pid())
	select {}
}

// A test binary killed outright (as go test does on a timeout) must not leave
// etcd or kube-apiserver running.
func TestChildrenDieWithTestBinary(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envOrphanHelper+"=1")
	cmd.Env = append(cmd.Env, EnvKubeconfig+"=") // a real start, even when attached
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := bufio.NewScanner(out)
	var pids []int
	for lines.Scan() {
		f := strings.Fields(lines.Text())
		if len(f) > 0 && f[0] == "ERROR" {
			t.Fatal(lines.Text())
		}
		if len(f) == 3 && f[0] == "PIDS" {
			for _, s := range f[1:] {
				pid, _ := strconv.Atoi(s)
				pids = append(pids, pid)
			}
			break
		}
	}
	if len(pids) != 2 {
		t.Fatalf("helper printed no PIDs")
	}
	for _, pid := range pids {
		if !alive(pid) {
			t.Fatalf("pid %d not running before the kill", pid)
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	waitUntil(t, 20*time.Second, "etcd and kube-apiserver to die", func(context.Context) (bool, error) {
		for _, pid := range pids {
			if alive(pid) {
				return false, nil
			}
		}
		return true, nil
	})
}

// alive reports whether pid runs and is not a zombie awaiting its reaper.
func alive(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] != 'Z'
}
