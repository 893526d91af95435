package notify

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/smtp"
	"strconv"
	"strings"
	"time"
)

// emailConfig is service.email[.<name>], as Argo CD writes it.
type emailConfig struct {
	Host               string `json:"host"`
	Port               int    `json:"port"`
	From               string `json:"from"`
	Username           string `json:"username,omitempty"`
	Password           string `json:"password,omitempty"`
	HTML               bool   `json:"html,omitempty"`
	InsecureSkipVerify bool   `json:"insecure_skip_verify,omitempty"`
}

// email sends over SMTP: implicit TLS on port 465, STARTTLS when the
// server offers it, PLAIN authentication when a username is set (which
// net/smtp allows only over TLS or to localhost). The recipient is one
// address or several separated by commas; the subject is the template's
// email.subject, the body its message.
type email struct {
	name string
	cfg  emailConfig
}

func newEmail(name string, config map[string]any) (Service, error) {
	var c emailConfig
	if err := decodeStrict(config, &c); err != nil {
		return nil, err
	}
	if c.Host == "" || c.Port == 0 || c.From == "" {
		return nil, fmt.Errorf("host, port and from are required")
	}
	return &email{name: name, cfg: c}, nil
}

// Send implements Service.
func (e *email) Send(ctx context.Context, msg Message, to Destination) error {
	var rcpts []string
	for _, r := range strings.Split(to.Recipient, ",") {
		if r = strings.TrimSpace(r); r != "" {
			rcpts = append(rcpts, r)
		}
	}
	if len(rcpts) == 0 {
		return fmt.Errorf("service %s: no recipient address", e.name)
	}
	if err := e.send(ctx, rcpts, msg); err != nil {
		return fmt.Errorf("service %s: %w", e.name, err)
	}
	return nil
}

func (e *email) send(ctx context.Context, rcpts []string, msg Message) error {
	addr := net.JoinHostPort(e.cfg.Host, strconv.Itoa(e.cfg.Port))
	d := net.Dialer{Timeout: sendTimeout}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(sendTimeout)
	if dl, ok := ctx.Deadline(); ok && dl.Before(deadline) {
		deadline = dl
	}
	_ = conn.SetDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	tlsConf := &tls.Config{ServerName: e.cfg.Host, InsecureSkipVerify: e.cfg.InsecureSkipVerify}
	if e.cfg.Port == 465 {
		conn = tls.Client(conn, tlsConf)
	}
	c, err := smtp.NewClient(conn, e.cfg.Host)
	if err != nil {
		conn.Close()
		return err
	}
	defer c.Close()
	if ok, _ := c.Extension("STARTTLS"); ok && e.cfg.Port != 465 {
		if err := c.StartTLS(tlsConf); err != nil {
			return err
		}
	}
	if e.cfg.Username != "" {
		if err := c.Auth(smtp.PlainAuth("", e.cfg.Username, e.cfg.Password, e.cfg.Host)); err != nil {
			return fmt.Errorf("authentication failed")
		}
	}
	if err := c.Mail(e.cfg.From); err != nil {
		return err
	}
	for _, r := range rcpts {
		if err := c.Rcpt(r); err != nil {
			return err
		}
	}
	w, err := c.Data()
	if err != nil {
		return err
	}
	ctype := "text/plain"
	if e.cfg.HTML {
		ctype = "text/html"
	}
	fmt.Fprintf(w, "From: %s\r\nTo: %s\r\nSubject: %s\r\nMIME-Version: 1.0\r\nContent-Type: %s; charset=utf-8\r\n\r\n%s\r\n",
		e.cfg.From, strings.Join(rcpts, ", "), oneLine(msg.EmailSubject), ctype, strings.ReplaceAll(msg.Body, "\n", "\r\n"))
	if err := w.Close(); err != nil {
		return err
	}
	return c.Quit()
}

// oneLine keeps a header value on one line (no header injection).
func oneLine(s string) string {
	return strings.NewReplacer("\r", " ", "\n", " ").Replace(strings.TrimSpace(s))
}
