//go:build unix && !linux

package testenv

import (
	"os/exec"
	"syscall"
)

// setProcAttr makes the child a process-group leader. Outside Linux there is
// no parent-death signal; Stop (and RunMain) still stop every child.
func setProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}
