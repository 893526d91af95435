package testenv

import (
	"os/exec"
	"syscall"
)

// setProcAttr makes the child a process-group leader (so a stop reaches
// anything it forks) and asks the kernel to kill it when the OS thread that
// started it dies; the spawner keeps that thread alive as long as the
// cluster and the test binary.
func setProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
