//go:build unix

package plugin

import (
	"os/exec"
	"syscall"
)

// setProcessGroup puts the plugin in its own process group and makes
// cancellation kill the whole group, so that children it spawned die too.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		if cmd.Process == nil {
			return nil
		}
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
