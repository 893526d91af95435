package main

import (
	"io"
	gosync "sync"
)

// lockedWriter serialises writes to one output shared by the command's
// goroutine and the engine's (notifications, sync progress, webhooks), so
// lines never interleave and the writer needs no locking of its own.
type lockedWriter struct {
	mu gosync.Mutex
	w  io.Writer
}

func newLockedWriter(w io.Writer) *lockedWriter { return &lockedWriter{w: w} }

// Write writes p whole under the lock.
func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
