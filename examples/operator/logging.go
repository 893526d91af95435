package main

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"

	"github.com/kubegitops/gitops/argocdcm"
)

// Log components: the parts of the operator whose levels argocd-cmd-params-cm
// sets apart, as it sets the levels of Argo CD's programs.
const (
	logController    = "controller"     // controller.log.level
	logAppSets       = "applicationset" // applicationsetcontroller.log.level, .debug
	logNotifications = "notifications"  // notificationscontroller.log.level
)

// logs is the operator's log: one stream, in one format
// (controller.log.format, text or json) with one time format
// (log.format.timestamp), and a level per component (controller.log.level,
// applicationsetcontroller.log.level, notificationscontroller.log.level).
// Set changes them while the operator runs; -v, when given, fixes every
// level at its verbosity.
type logs struct {
	out       io.Writer
	verbosity *int // -v, when given
	base      atomic.Pointer[slog.Handler]
	levels    map[string]*slog.LevelVar
}

// newLogs returns the log writing to out, in text at info level (at -v's
// verbosity when verbosity is set).
func newLogs(out io.Writer, verbosity *int) *logs {
	l := &logs{out: out, verbosity: verbosity, levels: map[string]*slog.LevelVar{}}
	for _, c := range []string{logController, logAppSets, logNotifications} {
		l.levels[c] = &slog.LevelVar{}
	}
	l.Set(argocdcm.Params{})
	return l
}

// Logger returns the logger of a component, at its level (callers name
// it).
func (l *logs) Logger(component string) logr.Logger {
	return logr.FromSlogHandler(&liveHandler{logs: l, level: l.levels[component]})
}

// Set applies the log keys of argocd-cmd-params-cm; keys not set take
// Argo CD's defaults (info), but the format, whose default here is text.
func (l *logs) Set(p argocdcm.Params) {
	opts := &slog.HandlerOptions{Level: slog.Level(-127)} // levels are liveHandler's
	if ts := p.LogTimestamp; ts != "" {
		opts.ReplaceAttr = func(groups []string, a slog.Attr) slog.Attr {
			if len(groups) == 0 && a.Key == slog.TimeKey && a.Value.Kind() == slog.KindTime {
				return slog.String(slog.TimeKey, a.Value.Time().Format(ts))
			}
			return a
		}
	} else {
		opts.ReplaceAttr = func(groups []string, a slog.Attr) slog.Attr {
			if len(groups) == 0 && a.Key == slog.TimeKey && a.Value.Kind() == slog.KindTime {
				return slog.String(slog.TimeKey, a.Value.Time().Format(time.RFC3339))
			}
			return a
		}
	}
	var h slog.Handler
	if p.Log.Format == "json" {
		h = slog.NewJSONHandler(l.out, opts)
	} else {
		h = slog.NewTextHandler(l.out, opts)
	}
	l.base.Store(&h)
	appsets := p.AppSets.Log.Level
	if p.AppSets.Debug {
		appsets = "debug" // Argo CD: debug takes precedence over the level
	}
	for c, level := range map[string]string{logController: p.Log.Level, logAppSets: appsets, logNotifications: p.Notifications.Log.Level} {
		l.levels[c].Set(slogLevel(level))
		if l.verbosity != nil {
			l.levels[c].Set(slog.Level(-*l.verbosity))
		}
	}
}

// slogLevel is the slog level of an Argo CD log level; logr's V(n) is
// slog level -n, so debug shows V(1) to V(4).
func slogLevel(level string) slog.Level {
	switch level {
	case "debug":
		return slog.LevelDebug
	case "warn":
		return slog.LevelWarn
	case "error":
		return slog.LevelError
	}
	return slog.LevelInfo
}

// liveHandler is a slog.Handler whose level is its component's and whose
// format is the log's, as Set last made them: attributes and groups given
// to it are replayed on the handler in force.
type liveHandler struct {
	logs  *logs
	level *slog.LevelVar
	steps []step
}

// step is one WithAttrs or WithGroup.
type step struct {
	attrs []slog.Attr
	group string
}

// Enabled implements slog.Handler.
func (h *liveHandler) Enabled(_ context.Context, level slog.Level) bool {
	return level >= h.level.Level()
}

// Handle implements slog.Handler.
func (h *liveHandler) Handle(ctx context.Context, r slog.Record) error {
	base := *h.logs.base.Load()
	for _, s := range h.steps {
		if s.group != "" {
			base = base.WithGroup(s.group)
		} else {
			base = base.WithAttrs(s.attrs)
		}
	}
	return base.Handle(ctx, r)
}

// WithAttrs implements slog.Handler.
func (h *liveHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &liveHandler{logs: h.logs, level: h.level, steps: append(slices.Clip(h.steps), step{attrs: attrs})}
}

// WithGroup implements slog.Handler.
func (h *liveHandler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	return &liveHandler{logs: h.logs, level: h.level, steps: append(slices.Clip(h.steps), step{group: name})}
}
