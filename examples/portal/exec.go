package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	gosync "sync"
	"time"

	"github.com/gorilla/websocket"
	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/rbac"
	"github.com/kubegitops/gitops/resource"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/remotecommand"
)

// The bounds of a terminal session.
const (
	// execMaxSession ends a terminal after this long; the page offers to
	// connect again.
	execMaxSession = 30 * time.Minute
	// execWriteTimeout bounds one write to the page.
	execWriteTimeout = 10 * time.Second
	// execMaxMessage bounds one message from the page (keystrokes, a
	// paste).
	execMaxMessage = 64 << 10
)

// terminalMessage is a message of the terminal's WebSocket in Argo CD's
// shape. The page sends "stdin" (data) and "resize" (rows, cols); the
// portal sends the shell's output as binary messages and, as text,
// "shell" (the shell that started) and "end" (why the session ended).
type terminalMessage struct {
	Operation string `json:"operation"`
	Data      string `json:"data,omitempty"`
	Rows      uint16 `json:"rows,omitempty"`
	Cols      uint16 `json:"cols,omitempty"`
}

// apiExec opens a terminal into a container of one of the app's Pods: a
// WebSocket (same origin only) bridged to the Pod's exec subresource with
// a TTY, running the first shell of argocd-cm's exec.shells that starts.
// As in Argo CD it is refused (403) while argocd-cm's exec.enabled is not
// "true", and without "exec, create" on the app; each opening, refusal
// and end is audited (action "exec").
func (s *server) apiExec(w http.ResponseWriter, r *http.Request, c caller) {
	a, _, err := s.appFor(r, c, rbac.ResourceApplications, rbac.ActionGet)
	if err != nil {
		deny(w, err)
		return
	}
	q := r.URL.Query()
	details := map[string]any{"key": q.Get("key"), "container": q.Get("container")}
	refuse := func(code int, msg string) {
		s.audit.write(c.identity, "exec", a, details, refusedPrefix+msg)
		apiError(w, code, msg)
	}
	st := s.opts.Exec.get()
	if !st.Enabled {
		refuse(http.StatusForbidden, fmt.Sprintf("the Pod terminal is off: argocd-cm %s is not \"true\"", execEnabledKey))
		return
	}
	if err := s.opts.Authz.decide(c.identity, rbac.ResourceExec, rbac.ActionCreate, appObject(a)); err != nil {
		refuse(http.StatusForbidden, fmt.Sprintf("application %s: %v", a.Name, err))
		return
	}
	key, err := resource.ParseKey(q.Get("key"))
	if err != nil || !isPod(key) {
		refuse(http.StatusBadRequest, fmt.Sprintf("key %q: a terminal opens into a Pod", q.Get("key")))
		return
	}
	if s.opts.Kube == nil || s.opts.KubeConfig == nil {
		apiError(w, http.StatusServiceUnavailable, "exec: the portal has no cluster client")
		return
	}
	lctx, cancel := context.WithTimeout(r.Context(), kubeTimeout)
	obj, err := s.opts.Engine.LiveObject(lctx, a, key)
	cancel()
	switch {
	case errors.Is(err, gitops.ErrNotInApp):
		refuse(http.StatusNotFound, fmt.Sprintf("application %s: no Pod %s", a.Name, key))
		return
	case err != nil:
		apiError(w, http.StatusBadGateway, err.Error())
		return
	}
	p := podOf(key, obj)
	container := q.Get("container")
	if container == "" && len(p.Containers) > 0 {
		container = p.Containers[0]
	}
	if !slices.Contains(p.Containers, container) {
		refuse(http.StatusBadRequest, fmt.Sprintf("%s has no container %q", key, container))
		return
	}
	details["container"] = container
	up := websocket.Upgrader{} // its CheckOrigin refuses another origin's page
	conn, err := up.Upgrade(w, r, nil)
	if err != nil {
		return // the upgrader answered
	}
	defer conn.Close()
	s.audit.write(c.identity, "exec", a, details, "opened")
	ctx, stop := context.WithTimeout(context.WithoutCancel(r.Context()), execMaxSession)
	defer stop()
	outcome := runTerminal(ctx, newWSTerminal(conn, stop), s.execStream(key, container), fmt.Sprintf("%s/%s", key, container), st.Shells)
	s.audit.write(c.identity, "exec", a, details, outcome)
}

// shellStream runs one shell with the terminal's streams until it ends.
type shellStream func(ctx context.Context, shell string, opts remotecommand.StreamOptions) error

// execStream runs a shell in the Pod's container through the API server's
// pods/exec with a TTY.
func (s *server) execStream(key resource.Key, container string) shellStream {
	return func(ctx context.Context, sh string, opts remotecommand.StreamOptions) error {
		req := s.opts.Kube.CoreV1().RESTClient().Post().Resource("pods").Namespace(key.Namespace).Name(key.Name).SubResource("exec").
			VersionedParams(&corev1.PodExecOptions{Container: container, Command: []string{sh}, Stdin: true, Stdout: true, TTY: true}, scheme.ParameterCodec)
		exe, err := remotecommand.NewSPDYExecutor(s.opts.KubeConfig, "POST", req.URL())
		if err != nil {
			return err
		}
		return exe.StreamWithContext(ctx, opts)
	}
}

// runTerminal runs the first of shells that starts in where (the Pod's
// container) through stream, its input and output on t, until it exits,
// the page goes or ctx ends, and returns the session's audited outcome.
//
// A shell started when it wrote to the page: on a TTY a shell writes its
// prompt and the echo of what is typed before it ends. A stream that ends
// without output did not run a shell, with or without an error: the
// refusal of a missing shell is the exec stream's last frame, and the API
// server's proxy drops it when the client's last write (a resize) crosses
// the closing connection, so such a stream can end with no error at all
// (seen on the local cluster: 17 of 320 TTY execs of a missing command).
// Either way the next shell is tried.
func runTerminal(ctx context.Context, t *wsTerminal, stream shellStream, where string, shells []string) string {
	go t.readLoop()
	defer func() { t.input().CloseWithError(io.EOF) }() // frees a keystroke waiting for a shell
	var last error
	for _, sh := range shells {
		t.control(terminalMessage{Operation: "shell", Data: sh})
		err := stream(ctx, sh, remotecommand.StreamOptions{Stdin: t.newInput(), Stdout: t, Tty: true, TerminalSizeQueue: t})
		switch {
		case ctx.Err() != nil:
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				t.control(terminalMessage{Operation: "end", Data: fmt.Sprintf("ended after %s (the session limit)", execMaxSession)})
			}
			return "ended: closed"
		case !t.wrote():
			if err == nil {
				err = fmt.Errorf("%s ended without output", sh)
			}
			last = err // the shell did not start: try the next
			continue
		case err == nil:
			t.control(terminalMessage{Operation: "end", Data: sh + " exited"})
			return "ended: " + sh + " exited"
		default:
			t.control(terminalMessage{Operation: "end", Data: sh + ": " + err.Error()})
			return "ended: " + sh + ": " + err.Error()
		}
	}
	msg := fmt.Sprintf("no shell of %s (%v) starts in %s: %v", execShellsKey, shells, where, last)
	t.control(terminalMessage{Operation: "end", Data: msg})
	return "error: " + msg
}

// wsTerminal is a terminal page's WebSocket as the exec stream's stdin
// (the page's "stdin" messages, newInput), stdout (binary messages) and terminal
// size queue (its "resize" messages).
type wsTerminal struct {
	conn *websocket.Conn
	stop context.CancelFunc
	// in is the current shell's stdin: each shell tried gets its own, so
	// the input copier of one that failed to start takes no keystroke.
	inMu  gosync.Mutex
	in    *io.PipeReader
	inW   *io.PipeWriter
	sizes chan remotecommand.TerminalSize
	done  chan struct{}
	mu    gosync.Mutex // writes
	out   bool
}

func newWSTerminal(conn *websocket.Conn, stop context.CancelFunc) *wsTerminal {
	conn.SetReadLimit(execMaxMessage)
	t := &wsTerminal{conn: conn, stop: stop, sizes: make(chan remotecommand.TerminalSize, 4), done: make(chan struct{})}
	t.newInput()
	return t
}

// newInput gives the next shell a stdin of its own and ends the last
// one's.
func (t *wsTerminal) newInput() io.Reader {
	pr, pw := io.Pipe()
	t.inMu.Lock()
	defer t.inMu.Unlock()
	if t.inW != nil {
		t.inW.CloseWithError(io.EOF)
	}
	t.in, t.inW = pr, pw
	select {
	case <-t.done:
		pw.CloseWithError(io.EOF)
	default:
	}
	return pr
}

// input is the current shell's stdin writer.
func (t *wsTerminal) input() *io.PipeWriter {
	t.inMu.Lock()
	defer t.inMu.Unlock()
	return t.inW
}

// readLoop reads the page's messages until it goes, then ends the
// session.
func (t *wsTerminal) readLoop() {
	defer func() {
		close(t.done)
		t.input().CloseWithError(io.EOF)
		t.stop()
	}()
	for {
		_, b, err := t.conn.ReadMessage()
		if err != nil {
			return
		}
		var m terminalMessage
		if json.Unmarshal(b, &m) != nil {
			continue // not ours: ignored, as a terminal ignores noise
		}
		switch m.Operation {
		case "stdin":
			// A closed stdin (a shell that ended, or the next one
			// starting) drops the keystroke; the page stays.
			_, _ = t.input().Write([]byte(m.Data))
		case "resize":
			if m.Rows > 0 && m.Cols > 0 {
				select {
				case t.sizes <- remotecommand.TerminalSize{Width: m.Cols, Height: m.Rows}:
				default: // a newer size follows
				}
			}
		}
	}
}

// Write sends the shell's output to the page.
func (t *wsTerminal) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.out = true
	_ = t.conn.SetWriteDeadline(time.Now().Add(execWriteTimeout))
	if err := t.conn.WriteMessage(websocket.BinaryMessage, p); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Next is the terminal's next size; nil once the page has gone.
func (t *wsTerminal) Next() *remotecommand.TerminalSize {
	select {
	case sz := <-t.sizes:
		return &sz
	case <-t.done:
		return nil
	}
}

// wrote tells whether the shell has written anything (it started).
func (t *wsTerminal) wrote() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.out
}

// control sends the page a text message about the session.
func (t *wsTerminal) control(m terminalMessage) {
	b, _ := json.Marshal(m)
	t.mu.Lock()
	defer t.mu.Unlock()
	_ = t.conn.SetWriteDeadline(time.Now().Add(execWriteTimeout))
	_ = t.conn.WriteMessage(websocket.TextMessage, b)
}
