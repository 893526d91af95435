package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
)

// phaseProfiler writes pprof profiles of one phase of a section (CPU over
// the phase; heap, goroutines, blocking and mutex contention at its end)
// into a folder, so that what limits the fleet can be read with
// `go tool pprof`. A nil *phaseProfiler does nothing.
type phaseProfiler struct {
	dir   string
	phase string
	cpu   *os.File
}

// startPhase starts the CPU profile of a phase when dir is set, and turns
// on block and mutex sampling (every blocking event of 1 ms or more, one
// contention in 10).
func startPhase(dir, phase string) (*phaseProfiler, error) {
	if dir == "" {
		return nil, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	runtime.SetBlockProfileRate(1_000_000)
	runtime.SetMutexProfileFraction(10)
	f, err := os.Create(filepath.Join(dir, phase+".cpu.pprof"))
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("cpu profile of %s: %w", phase, err)
	}
	return &phaseProfiler{dir: dir, phase: phase, cpu: f}, nil
}

// stop ends the CPU profile and writes the phase's other profiles.
func (p *phaseProfiler) stop() error {
	if p == nil {
		return nil
	}
	pprof.StopCPUProfile()
	if err := p.cpu.Close(); err != nil {
		return err
	}
	for _, name := range []string{"heap", "goroutine", "block", "mutex"} {
		f, err := os.Create(filepath.Join(p.dir, p.phase+"."+name+".pprof"))
		if err != nil {
			return err
		}
		err = pprof.Lookup(name).WriteTo(f, 0)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("%s profile of %s: %w", name, p.phase, err)
		}
	}
	return nil
}

// writeHeapDump writes the runtime's heap dump (debug.WriteHeapDump) of
// the moment into dir/phase.heapdump when dir is set: every live object
// with its address and size, from which cmd/heapspans tells, per size
// class, the live bytes from the bytes of the spans they keep in use.
func writeHeapDump(dir, phase string) error {
	if dir == "" {
		return nil
	}
	f, err := os.Create(filepath.Join(dir, phase+".heapdump"))
	if err != nil {
		return err
	}
	debug.WriteHeapDump(f.Fd())
	return f.Close()
}
