package notify

import (
	"bufio"
	"context"
	"net"
	"strings"
	gosync "sync"
	"testing"
)

// smtpServer is a small SMTP server on loopback that accepts every message
// (and PLAIN auth, which net/smtp sends to localhost without TLS).
type smtpServer struct {
	ln   net.Listener
	mu   gosync.Mutex
	mail []string // "from|to,to|auth|data"
}

func newSMTPServer(t *testing.T) *smtpServer {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &smtpServer{ln: ln}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go s.serve(conn)
		}
	}()
	return s
}

func (s *smtpServer) serve(conn net.Conn) {
	defer conn.Close()
	r := bufio.NewReader(conn)
	say := func(line string) { _, _ = conn.Write([]byte(line + "\r\n")) }
	say("220 localhost ready")
	var from, auth string
	var to []string
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		line = strings.TrimRight(line, "\r\n")
		cmd := strings.ToUpper(line)
		switch {
		case strings.HasPrefix(cmd, "EHLO"):
			say("250-localhost")
			say("250 AUTH PLAIN")
		case strings.HasPrefix(cmd, "AUTH PLAIN"):
			auth = strings.TrimSpace(line[len("AUTH PLAIN"):])
			say("235 ok")
		case strings.HasPrefix(cmd, "MAIL FROM:"):
			from = strings.Trim(line[len("MAIL FROM:"):], "<> ")
			say("250 ok")
		case strings.HasPrefix(cmd, "RCPT TO:"):
			to = append(to, strings.Trim(line[len("RCPT TO:"):], "<> "))
			say("250 ok")
		case cmd == "DATA":
			say("354 go on")
			var data strings.Builder
			for {
				l, err := r.ReadString('\n')
				if err != nil {
					return
				}
				if l == ".\r\n" {
					break
				}
				data.WriteString(l)
			}
			s.mu.Lock()
			s.mail = append(s.mail, from+"|"+strings.Join(to, ",")+"|"+auth+"|"+data.String())
			s.mu.Unlock()
			say("250 queued")
		case cmd == "QUIT":
			say("221 bye")
			return
		default:
			say("250 ok")
		}
	}
}

func TestEmailOverSMTP(t *testing.T) {
	srv := newSMTPServer(t)
	host, port, _ := net.SplitHostPort(srv.ln.Addr().String())
	c := mustLoad(t, map[string]string{
		"service.email.ops": "host: " + host + "\nport: " + port + "\nfrom: gitops@example.com\nusername: $email-user\npassword: $email-password",
	}, map[string]string{"email-user": "bot", "email-password": "mail-pass-123"})
	msg, err := c.RenderFor("app-sync-succeeded", testApp("web", nil, succeeded("abc", "Healthy")), Destination{Service: "ops", Recipient: "a@example.com, b@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.services["ops"].svc.Send(context.Background(), msg, Destination{Service: "ops", Recipient: "a@example.com, b@example.com"}); err != nil {
		t.Fatal(err)
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if len(srv.mail) != 1 {
		t.Fatalf("%d mails", len(srv.mail))
	}
	parts := strings.SplitN(srv.mail[0], "|", 4)
	b, _ := decodeBase64(parts[2])
	if parts[0] != "gitops@example.com" || parts[1] != "a@example.com,b@example.com" || string(b) != "\x00bot\x00mail-pass-123" {
		t.Errorf("envelope %q %q auth %q", parts[0], parts[1], b)
	}
	if !strings.Contains(parts[3], "Subject: Application web synced\r\n") || !strings.Contains(parts[3], "synced revision abc") {
		t.Errorf("data %q", parts[3])
	}
}
