package main

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"k8s.io/client-go/tools/remotecommand"
)

// lostRefusal is a pods/exec stream whose shells are missing except
// "bash", and whose refusals are lost on the way, as the API server's proxy
// loses them when a resize crosses the closing connection: a missing
// shell's stream ends at once with no error and no output. bash writes a
// prompt and runs until it reads "exit".
func lostRefusal(_ context.Context, sh string, opts remotecommand.StreamOptions) error {
	if sh != "bash" {
		return nil
	}
	if _, err := opts.Stdout.Write([]byte("$ ")); err != nil {
		return err
	}
	in := bufio.NewReader(opts.Stdin)
	for {
		line, err := in.ReadString('\r')
		if err != nil {
			return err
		}
		if strings.TrimSpace(line) == "exit" {
			return nil
		}
	}
}

// terminalSession runs runTerminal over a real WebSocket with stream and
// shells, types keys once a shell has written, and returns the page's
// text messages and the audited outcome.
func terminalSession(t *testing.T, stream shellStream, shells []string, keys string) ([]terminalMessage, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	outcome := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, err := (&websocket.Upgrader{}).Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer conn.Close()
		sctx, stop := context.WithCancel(ctx)
		defer stop()
		outcome <- runTerminal(sctx, newWSTerminal(conn, stop), stream, "ns/Pod/p/main", shells)
	}))
	defer srv.Close()
	conn, _, err := websocket.DefaultDialer.DialContext(ctx, "ws"+strings.TrimPrefix(srv.URL, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var msgs []terminalMessage
	for {
		_ = conn.SetReadDeadline(time.Now().Add(time.Minute))
		kind, b, err := conn.ReadMessage()
		if err != nil {
			t.Fatalf("reading the terminal: %v (messages so far %+v)", err, msgs)
		}
		if kind == websocket.BinaryMessage {
			m, _ := json.Marshal(terminalMessage{Operation: "stdin", Data: keys})
			if err := conn.WriteMessage(websocket.TextMessage, m); err != nil {
				t.Fatal(err)
			}
			continue
		}
		var m terminalMessage
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, m)
		if m.Operation == "end" {
			return msgs, <-outcome
		}
	}
}

// TestTerminalTriesTheNextShellWhenARefusalIsLost: a shell whose exec
// stream ends without output did not start, even when the stream reports
// no error (its refusal lost), so the next shell of exec.shells runs; the
// flake this pins made the portal's terminal say "no-such-shell exited".
func TestTerminalTriesTheNextShellWhenARefusalIsLost(t *testing.T) {
	msgs, outcome := terminalSession(t, lostRefusal, []string{"no-such-shell", "bash"}, "exit\r")
	want := []terminalMessage{{Operation: "shell", Data: "no-such-shell"}, {Operation: "shell", Data: "bash"}, {Operation: "end", Data: "bash exited"}}
	if len(msgs) != len(want) {
		t.Fatalf("messages %+v, want %+v", msgs, want)
	}
	for i := range want {
		if msgs[i] != want[i] {
			t.Fatalf("messages %+v, want %+v", msgs, want)
		}
	}
	if outcome != "ended: bash exited" {
		t.Errorf("outcome %q, want %q", outcome, "ended: bash exited")
	}
}

// TestTerminalNoShellStarts: when every shell's stream ends without
// output, the session ends naming exec.shells, the container and the last
// shell's failure.
func TestTerminalNoShellStarts(t *testing.T) {
	msgs, outcome := terminalSession(t, lostRefusal, []string{"no-such-shell", "zsh"}, "")
	want := "no shell of exec.shells ([no-such-shell zsh]) starts in ns/Pod/p/main: zsh ended without output"
	if last := msgs[len(msgs)-1]; last.Operation != "end" || last.Data != want {
		t.Errorf("last message %+v, want end %q", last, want)
	}
	if outcome != "error: "+want {
		t.Errorf("outcome %q, want %q", outcome, "error: "+want)
	}
}
