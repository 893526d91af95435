package main

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
)

// lineSink is a logr sink that writes one line per entry:
// "15:04:05 message key=value ...". It is enough for a command-line tool
// and keeps gitopsctl free of a logging framework.
type lineSink struct {
	mu     *sync.Mutex
	w      io.Writer
	name   string
	values []any
}

func newLineLogger(w io.Writer) logr.Logger {
	return logr.New(&lineSink{mu: &sync.Mutex{}, w: w})
}

// Init implements logr.LogSink.
func (s *lineSink) Init(logr.RuntimeInfo) {}

// Enabled implements logr.LogSink.
func (s *lineSink) Enabled(level int) bool { return level <= 1 }

// Info implements logr.LogSink.
func (s *lineSink) Info(level int, msg string, kv ...any) {
	s.write("", msg, kv)
}

// Error implements error.
func (s *lineSink) Error(err error, msg string, kv ...any) {
	s.write("error: ", msg, append(kv, "error", err))
}

func (s *lineSink) write(prefix, msg string, kv []any) {
	var b strings.Builder
	b.WriteString(time.Now().Format("15:04:05 "))
	if s.name != "" {
		b.WriteString(s.name + ": ")
	}
	b.WriteString(prefix + msg)
	all := append(append([]any(nil), s.values...), kv...)
	for i := 0; i+1 < len(all); i += 2 {
		fmt.Fprintf(&b, " %v=%v", all[i], all[i+1])
	}
	b.WriteByte('\n')
	s.mu.Lock()
	defer s.mu.Unlock()
	_, _ = io.WriteString(s.w, b.String())
}

// WithValues implements logr.LogSink.
func (s *lineSink) WithValues(kv ...any) logr.LogSink {
	c := *s
	c.values = append(append([]any(nil), s.values...), kv...)
	return &c
}

// WithName implements logr.LogSink.
func (s *lineSink) WithName(name string) logr.LogSink {
	c := *s
	if c.name != "" {
		name = c.name + "/" + name
	}
	c.name = name
	return &c
}
