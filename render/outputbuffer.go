package render

import (
	"bytes"
	"sync"
)

// OutputBuffer collects a tool's output up to a bound: renderers that run
// a program (config-management plugins, named kustomize binaries) read its
// standard output and error through one, so a program that prints without
// end fails the render instead of filling memory.
type OutputBuffer struct {
	mu       sync.Mutex
	buf      bytes.Buffer
	max      int64
	overflow bool
	onFull   func()
}

// NewOutputBuffer returns a buffer that keeps at most max bytes. onFull,
// when set, is called once, on the first write past max (a renderer
// cancels the program's context there).
func NewOutputBuffer(max int64, onFull func()) *OutputBuffer {
	return &OutputBuffer{max: max, onFull: onFull}
}

// Write implements io.Writer. A write past the bound keeps nothing of it
// and returns ErrTooLarge, as does every later write.
func (b *OutputBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.overflow {
		return 0, ErrTooLarge
	}
	if int64(b.buf.Len()+len(p)) > b.max {
		b.overflow = true
		if b.onFull != nil {
			b.onFull()
		}
		return 0, ErrTooLarge
	}
	return b.buf.Write(p)
}

// Overflowed reports whether a write went past the bound.
func (b *OutputBuffer) Overflowed() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.overflow
}

// Bytes returns what was kept.
func (b *OutputBuffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Bytes()
}

// String returns what was kept, as a string.
func (b *OutputBuffer) String() string { return string(b.Bytes()) }
