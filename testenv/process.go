//go:build unix

package testenv

import (
	"errors"
	"fmt"
	"github.com/kubegitops/gitops/internal/toolbuild"
	"os"
	"os/exec"
	"runtime"
	"sync"
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
	// restarts is how many unexpected exits are followed by a fresh start
	// of the same command. Only for stateless children that read all they
	// need from the API server (kwok: v0.8.0 can die of a data race in its
	// CEL library when its node and pod workers first meet a stage at the
	// same moment); zero for the others, whose exit ends the cluster.
	restarts int

	mu       sync.Mutex
	cmd      *exec.Cmd // the current run; replaced on a restart
	stopping bool      // set by stop and kill: an exit is then final
	exited   chan struct{}
	err      error // valid once exited is closed
}

func (p *process) start(s *spawner) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	cmd, logFile, err := p.launch(s)
	if err != nil {
		return err
	}
	p.cmd = cmd
	p.exited = make(chan struct{})
	go p.supervise(s, cmd, logFile)
	return nil
}

// launch starts one run of the command, its output appended to the log.
func (p *process) launch(s *spawner) (*exec.Cmd, *os.File, error) {
	logFile, err := os.OpenFile(p.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, nil, fmt.Errorf("testenv: %s log: %w", p.name, err)
	}
	cmd := exec.Command(p.path, p.args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	setProcAttr(cmd)
	if err := s.start(cmd); err != nil {
		logFile.Close()
		return nil, nil, fmt.Errorf("testenv: start %s: %w", p.name, err)
	}
	return cmd, logFile, nil
}

// supervise waits for each run to end and starts the next while restarts
// are left and nobody stopped the process; exited closes on the final exit.
// The next run is launched under the lock stop takes, so a stop either
// sees the new run (and ends it) or prevents it.
func (p *process) supervise(s *spawner, cmd *exec.Cmd, logFile *os.File) {
	for {
		err := cmd.Wait()
		p.mu.Lock()
		if p.stopping || p.restarts == 0 {
			logFile.Close()
			p.err = err
			p.mu.Unlock()
			close(p.exited)
			return
		}
		p.restarts--
		fmt.Fprintf(logFile, "\ntestenv: %s exited (%v); starting it again (%d restarts left)\n", p.name, err, p.restarts)
		logFile.Close()
		next, nextLog, lerr := p.launch(s)
		if lerr != nil {
			p.err = errors.Join(err, lerr)
			p.mu.Unlock()
			close(p.exited)
			return
		}
		p.cmd, cmd, logFile = next, next, nextLog
		p.mu.Unlock()
	}
}

func (p *process) running() bool {
	if p.exited == nil {
		return false
	}
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// pid is the process ID of the current run (0 before the first start).
func (p *process) pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return 0
	}
	return p.cmd.Process.Pid
}

// halt marks the process as stopping (no restart follows) and returns the
// current run's process ID.
func (p *process) halt() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stopping = true
	return p.cmd.Process.Pid
}

// stop sends SIGTERM to the process group, waits up to grace, then kills it.
func (p *process) stop(grace time.Duration) {
	if !p.running() {
		return
	}
	pid := p.halt()
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
	_ = syscall.Kill(-p.halt(), syscall.SIGKILL)
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
