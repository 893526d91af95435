package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/rbac"
	"github.com/kubegitops/gitops/resource"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The bounds of a logs request (the caller may ask for less, never more).
const (
	// defaultTailLines is how many of the last lines a request without
	// tailLines gets (Argo CD's UI asks for 1000 too).
	defaultTailLines = 1000
	// maxTailLines is the most lines a request may ask for.
	maxTailLines = 10000
	// maxLogBytes bounds the bytes of one request (limitBytes).
	maxLogBytes = 4 << 20
	// maxLogLine bounds one line; longer lines are cut.
	maxLogLine = 64 << 10
	// maxPodsListed bounds the Pods a workload's logs view lists.
	maxPodsListed = 50
	// defaultFollowMax bounds how long one follow runs; the page offers to
	// follow again.
	defaultFollowMax = 30 * time.Minute
)

// podView is one Pod a logs view can show, with its containers.
type podView struct {
	Key        string   `json:"key"`
	Name       string   `json:"name"`
	Containers []string `json:"containers"`
	// InitContainers are listed apart: their logs are read the same way.
	InitContainers []string `json:"initContainers,omitempty"`
}

// apiPods lists the Pods of key (the Pod itself, or the Pods below a
// workload in the engine's tree) with their containers, for the logs tab.
// It needs "logs, get".
func (s *server) apiPods(w http.ResponseWriter, r *http.Request, c caller) {
	a, _, err := s.appFor(r, c, rbac.ResourceLogs, rbac.ActionGet)
	if err != nil {
		deny(w, err)
		return
	}
	key, err := resource.ParseKey(r.URL.Query().Get("key"))
	if err != nil {
		apiError(w, http.StatusBadRequest, "key: "+err.Error())
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), kubeTimeout)
	defer cancel()
	var keys []resource.Key
	if isPod(key) {
		keys = []resource.Key{key}
	} else {
		lt := s.liveTreeOf(ctx, a)
		keys = lt.podsBelow(key, map[resource.Key]bool{}, 1)
	}
	out := []podView{}
	for _, k := range keys {
		if len(out) == maxPodsListed {
			break
		}
		obj, err := s.opts.Engine.LiveObject(ctx, a, k)
		if err != nil {
			continue // gone since the tree was read
		}
		out = append(out, podOf(k, obj))
	}
	writeJSON(w, http.StatusOK, out)
}

// podsBelow returns the Pods under key in the tree, sorted.
func (lt liveTree) podsBelow(key resource.Key, seen map[resource.Key]bool, depth int) []resource.Key {
	if depth > maxTreeDepth {
		return nil
	}
	var out []resource.Key
	for _, k := range lt.children[key] {
		if seen[k] {
			continue
		}
		seen[k] = true
		if isPod(k) {
			out = append(out, k)
		}
		out = append(out, lt.podsBelow(k, seen, depth+1)...)
	}
	slices.SortFunc(out, func(x, y resource.Key) int { return cmpString(x.Name, y.Name) })
	return out
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func isPod(k resource.Key) bool { return k.Group == "" && k.Kind == "Pod" }

// podOf lists a live Pod's containers.
func podOf(k resource.Key, obj *unstructured.Unstructured) podView {
	p := podView{Key: k.String(), Name: k.Name, Containers: []string{}}
	names := func(field string) []string {
		list, _, _ := unstructured.NestedSlice(obj.Object, "spec", field)
		var out []string
		for _, c := range list {
			if m, ok := c.(map[string]any); ok {
				if n, ok := m["name"].(string); ok {
					out = append(out, n)
				}
			}
		}
		return out
	}
	p.Containers = append(p.Containers, names("containers")...)
	p.InitContainers = names("initContainers")
	return p
}

// logsRequest is a checked logs request.
type logsRequest struct {
	key  resource.Key
	opts corev1.PodLogOptions
	// download: the log as a text file (downloadLogs), not as events.
	download bool
}

// parseLogsRequest checks the query of a logs request and applies the
// bounds: tailLines (default 1000, at most 10000), limitBytes (at most
// 4 MiB), sinceSeconds (above 0), follow, previous, timestamps and
// download (true or false), container (required). A download is the whole
// log (every line unless tailLines is given, up to maxDownloadBytes) and
// never follows.
func parseLogsRequest(q url.Values) (logsRequest, error) {
	var lr logsRequest
	key, err := resource.ParseKey(q.Get("key"))
	if err != nil {
		return lr, fmt.Errorf("key: %w", err)
	}
	if !isPod(key) {
		return lr, fmt.Errorf("key %s: logs are read from a Pod", key)
	}
	lr.key = key
	lr.opts.Container = q.Get("container")
	if lr.opts.Container == "" {
		return lr, errors.New("container: required")
	}
	num := func(name string, def, max int64) (int64, error) {
		v := q.Get(name)
		if v == "" {
			return def, nil
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			return 0, fmt.Errorf("%s: %q is not a number above 0", name, v)
		}
		return min(n, max), nil
	}
	flags := map[string]*bool{"follow": &lr.opts.Follow, "previous": &lr.opts.Previous,
		"timestamps": &lr.opts.Timestamps, "download": &lr.download}
	for name, dst := range flags {
		switch v := q.Get(name); v {
		case "", "false":
		case "true":
			*dst = true
		default:
			return lr, fmt.Errorf("%s: %q, want true or false", name, v)
		}
	}
	tailDef, limitMax := int64(defaultTailLines), int64(maxLogBytes)
	if lr.download {
		tailDef, limitMax = 0, maxDownloadBytes
		lr.opts.Follow = false
	}
	tail, err := num("tailLines", tailDef, maxTailLines)
	if err != nil {
		return lr, err
	}
	limit, err := num("limitBytes", limitMax, limitMax)
	if err != nil {
		return lr, err
	}
	since, err := num("sinceSeconds", 0, 1<<31)
	if err != nil {
		return lr, err
	}
	lr.opts.LimitBytes = &limit
	if tail > 0 {
		lr.opts.TailLines = &tail
	}
	if since > 0 {
		lr.opts.SinceSeconds = &since
	}
	return lr, nil
}

// apiLogs streams a Pod's container logs as server-sent events: a "line"
// event per line, then one "end" event saying why it ended (the end of
// the logs, the byte or time bound, or an error); with download=true, the
// log as a text file instead (downloadLogs). It needs "logs, get" on
// the app, and the Pod must be one of the app's (the engine's tree).
func (s *server) apiLogs(w http.ResponseWriter, r *http.Request, c caller) {
	a, _, err := s.appFor(r, c, rbac.ResourceLogs, rbac.ActionGet)
	if err != nil {
		deny(w, err)
		return
	}
	lr, err := parseLogsRequest(r.URL.Query())
	if err != nil {
		apiError(w, http.StatusBadRequest, err.Error())
		return
	}
	if s.opts.Kube == nil {
		apiError(w, http.StatusServiceUnavailable, "logs: the portal has no cluster client")
		return
	}
	lctx, cancel := context.WithTimeout(r.Context(), kubeTimeout)
	obj, err := s.opts.Engine.LiveObject(lctx, a, lr.key)
	cancel()
	switch {
	case errors.Is(err, gitops.ErrNotInApp):
		apiError(w, http.StatusNotFound, fmt.Sprintf("application %s: no Pod %s", a.Name, lr.key))
		return
	case err != nil:
		apiError(w, http.StatusBadGateway, err.Error())
		return
	}
	p := podOf(lr.key, obj)
	if !slices.Contains(p.Containers, lr.opts.Container) && !slices.Contains(p.InitContainers, lr.opts.Container) {
		apiError(w, http.StatusBadRequest, fmt.Sprintf("%s has no container %q", lr.key, lr.opts.Container))
		return
	}
	ctx, stop := context.WithTimeout(r.Context(), s.opts.LogsFollowMax)
	defer stop()
	rc, err := s.opts.Kube.CoreV1().Pods(lr.key.Namespace).GetLogs(lr.key.Name, &lr.opts).Stream(ctx)
	if err != nil {
		apiError(w, http.StatusBadGateway, fmt.Sprintf("logs of %s/%s: %v", lr.key, lr.opts.Container, err))
		return
	}
	defer rc.Close()
	if lr.download {
		downloadLogs(w, lr, io.LimitReader(rc, *lr.opts.LimitBytes))
		return
	}
	s.streamLines(ctx, w, io.LimitReader(rc, *lr.opts.LimitBytes))
}

// streamLines writes each line of rd as a "line" event, flushing when no
// more is buffered, and ends with an "end" event.
func (s *server) streamLines(ctx context.Context, w http.ResponseWriter, rd io.Reader) {
	fl, ok := w.(http.Flusher)
	if !ok {
		apiError(w, http.StatusInternalServerError, "streaming unsupported")
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	fl.Flush()
	br := bufio.NewReaderSize(rd, maxLogLine)
	reason := "end of the logs"
	for {
		line, err := br.ReadSlice('\n')
		if len(line) > 0 {
			text := string(trimEOL(line))
			if werr := writeEvent(w, streamEvent{Name: "line", Data: text}); werr != nil {
				return // the page went away
			}
			if br.Buffered() == 0 {
				fl.Flush()
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue // a long line: the rest follows as its own event
		}
		if err != nil {
			switch {
			case errors.Is(ctx.Err(), context.DeadlineExceeded):
				reason = fmt.Sprintf("stopped after %s (the follow limit)", s.opts.LogsFollowMax)
			case ctx.Err() != nil:
				return
			case err != io.EOF:
				reason = "error: " + err.Error()
			}
			break
		}
	}
	_ = writeEvent(w, streamEvent{Name: "end", Data: map[string]string{"reason": reason}})
	fl.Flush()
}

func trimEOL(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}
