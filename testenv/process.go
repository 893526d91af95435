//go:build unix

package testenv

import (
	"errors"
	"fmt"
	"github.com/kubegitops/gitops/internal/toolbuild"
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"time"
)

// spawner starts child processes from one locked OS thread. Linux delivers a
// parent-death signal when the thread that forked a child exits, not the
// process, and Go may retire idle threads; a thread locked by a goroutine
// that stays blocked is never retired, so the signal fires exactly when the
// test binary ends (or when the spawner is closed, after every child has been
// stopped).
type spawner struct {
	reqs chan spawnRequest
}

type spawnRequest struct {
	cmd    *exec.Cmd
	result chan error
}

func newSpawner() *spawner {
	s := &spawner{reqs: make(chan spawnRequest)}
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with this goroutine
		for req := range s.reqs {
			req.result <- req.cmd.Start()
		}
	}()
	return s
}

func (s *spawner) start(cmd *exec.Cmd) error {
	res := make(chan error, 1)
	s.reqs <- spawnRequest{cmd: cmd, result: res}
	return <-res
}

func (s *spawner) close() { close(s.reqs) }

// process is one supervised child: its command line, log file and exit.
type process struct {
	name    string
	path    string
	args    []string
	logPath string

	cmd    *exec.Cmd
	exited chan struct{}
	err    error // valid once exited is closed
}

func (p *process) start(s *spawner) error {
	logFile, err := os.OpenFile(p.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("testenv: %s log: %w", p.name, err)
	}
	cmd := exec.Command(p.path, p.args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	setProcAttr(cmd)
	if err := s.start(cmd); err != nil {
		logFile.Close()
		return fmt.Errorf("testenv: start %s: %w", p.name, err)
	}
	p.cmd = cmd
	p.exited = make(chan struct{})
	go func() {
		p.err = cmd.Wait()
		logFile.Close()
		close(p.exited)
	}()
	return nil
}

func (p *process) running() bool {
	if p.cmd == nil {
		return false
	}
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// stop sends SIGTERM to the process group, waits up to grace, then kills it.
func (p *process) stop(grace time.Duration) {
	if !p.running() {
		return
	}
	pid := p.cmd.Process.Pid
	_ = syscall.Kill(-pid, syscall.SIGTERM)
	select {
	case <-p.exited:
		return
	case <-time.After(grace):
	}
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	<-p.exited
}

// kill stops the process at once, as a crash would.
func (p *process) kill() {
	if !p.running() {
		return
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	<-p.exited
}

// exitError describes an early exit with the end of the process's log.
func (p *process) exitError() error {
	data, _ := os.ReadFile(p.logPath)
	err := p.err
	if err == nil {
		err = errors.New("exited")
	}
	return fmt.Errorf("testenv: %s exited early: %v; log %s ends with:\n%s", p.name, err, p.logPath, toolbuild.Tail(data, 3000))
}
