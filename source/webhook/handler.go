package webhook

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"

	"github.com/go-logr/logr"
)

// Options configure a Handler. Start from DefaultOptions.
type Options struct {
	// Secrets maps a provider to the secrets accepted from it (more than
	// one during a rotation): the HMAC key for GitHub, Gitea, Gogs and
	// Bitbucket, the X-Gitlab-Token for GitLab. Events from a provider
	// without secrets are refused with 401.
	Secrets Secrets
	// MaxBodyBytes caps the request body. Default 1 MiB.
	MaxBodyBytes int64
	// OnPush receives each hint of each verified push, on the request's
	// goroutine; keep it short (queue a refresh).
	OnPush func(ctx context.Context, h Hint)
	// OnEvent, when set, receives every verified event that is not a
	// push (a pull request, for the ApplicationSet pullRequest webhook):
	// its provider, event name and body, on the request's goroutine. The
	// answer is then 200 instead of 202.
	OnEvent func(ctx context.Context, p Provider, event string, body []byte)
	// Logger receives rejected requests at V(1), without their content.
	Logger logr.Logger
}

// Secrets are the webhook secrets of each provider. They never print or
// marshal: String, GoString, Format and MarshalJSON name the providers and
// how many secrets each has.
type Secrets map[Provider][]string

// String lists the providers and their secret counts, sorted, never a
// secret: "webhook secrets(github: 2, gitlab: 1)".
func (s Secrets) String() string {
	parts := make([]string, 0, len(s))
	for p, list := range s {
		parts = append(parts, fmt.Sprintf("%s: %d", p, len(list)))
	}
	sort.Strings(parts)
	return "webhook secrets(" + strings.Join(parts, ", ") + ")"
}

// GoString implements fmt.GoStringer without secrets.
func (s Secrets) GoString() string { return s.String() }

// Format implements fmt.Formatter: every verb prints String.
func (s Secrets) Format(f fmt.State, _ rune) { fmt.Fprint(f, s.String()) }

// MarshalJSON encodes String, never a secret.
func (s Secrets) MarshalJSON() ([]byte, error) { return json.Marshal(s.String()) }

// DefaultOptions returns a 1 MiB body cap and a discarding logger.
func DefaultOptions() Options {
	return Options{MaxBodyBytes: 1 << 20, Logger: logr.Discard()}
}

// Handler is an http.Handler that verifies and parses push webhooks.
type Handler struct {
	opts Options
}

var _ http.Handler = (*Handler)(nil)

// NewHandler returns a Handler; zero options take their defaults.
func NewHandler(opts Options) *Handler {
	def := DefaultOptions()
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = def.MaxBodyBytes
	}
	if opts.Logger.GetSink() == nil {
		opts.Logger = def.Logger
	}
	return &Handler{opts: opts}
}

// ServeHTTP implements http.Handler. Status codes: 405 for a method other
// than POST, 400 for an unknown provider or a malformed payload, 413 for a
// body over the cap, 401 for a missing or wrong signature, 202 for a
// verified event that is not a push, 200 for a push (after OnPush ran for
// each of its hints).
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		h.reject(w, http.StatusMethodNotAllowed, "method not allowed")
		return
	}
	provider, event := detect(r.Header)
	if provider == "" {
		h.reject(w, http.StatusBadRequest, "unknown webhook provider")
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.opts.MaxBodyBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			h.reject(w, http.StatusRequestEntityTooLarge, "body too large")
			return
		}
		h.reject(w, http.StatusBadRequest, "unreadable body")
		return
	}
	if !h.verify(provider, r.Header, body) {
		h.reject(w, http.StatusUnauthorized, "signature verification failed")
		return
	}
	hints, err := Parse(provider, event, body)
	switch {
	case errors.Is(err, ErrNotPush) && h.opts.OnEvent != nil:
		h.opts.OnEvent(r.Context(), provider, event, body)
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, "ok\n")
		return
	case errors.Is(err, ErrNotPush):
		w.WriteHeader(http.StatusAccepted)
		_, _ = io.WriteString(w, "ignored: not a push\n")
		return
	case err != nil:
		h.reject(w, http.StatusBadRequest, "malformed payload")
		return
	}
	if h.opts.OnPush != nil {
		for _, hint := range hints {
			h.opts.OnPush(r.Context(), hint)
		}
	}
	w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(w, "ok\n")
}

func (h *Handler) reject(w http.ResponseWriter, code int, msg string) {
	h.opts.Logger.V(1).Info("webhook rejected", "status", code, "reason", msg)
	http.Error(w, msg, code)
}

// detect names the provider from its event header.
func detect(hd http.Header) (Provider, string) {
	switch {
	case hd.Get("X-GitHub-Event") != "" && hd.Get("X-Gitea-Event") == "" && hd.Get("X-Gogs-Event") == "":
		return GitHub, hd.Get("X-GitHub-Event")
	case hd.Get("X-Gitea-Event") != "":
		return Gitea, hd.Get("X-Gitea-Event")
	case hd.Get("X-Gogs-Event") != "":
		return Gogs, hd.Get("X-Gogs-Event")
	case hd.Get("X-Gitlab-Event") != "":
		return GitLab, hd.Get("X-Gitlab-Event")
	case hd.Get("X-Event-Key") != "":
		// Bitbucket Server's event keys differ from Cloud's ("repo:push",
		// "pullrequest:*").
		key := hd.Get("X-Event-Key")
		if key == "repo:refs_changed" || key == "repo:modified" || key == "diagnostics:ping" || strings.HasPrefix(key, "pr:") {
			return BitbucketServer, key
		}
		return Bitbucket, key
	}
	return "", ""
}

// verify checks the request against every secret of provider in constant
// time per secret.
func (h *Handler) verify(p Provider, hd http.Header, body []byte) bool {
	secrets := h.opts.Secrets[p]
	if len(secrets) == 0 {
		return false
	}
	var given string
	switch p {
	case GitHub:
		given, _ = strings.CutPrefix(hd.Get("X-Hub-Signature-256"), "sha256=")
	case Gitea:
		given = hd.Get("X-Gitea-Signature")
	case Gogs:
		given = hd.Get("X-Gogs-Signature")
	case Bitbucket, BitbucketServer:
		given, _ = strings.CutPrefix(hd.Get("X-Hub-Signature"), "sha256=")
	case GitLab:
		token := hd.Get("X-Gitlab-Token")
		ok := 0
		for _, s := range secrets {
			ok |= equalToken(token, s)
		}
		return ok == 1
	}
	mac, err := hex.DecodeString(strings.TrimSpace(given))
	if err != nil || len(mac) != sha256.Size {
		return false
	}
	ok := false
	for _, s := range secrets {
		if s == "" {
			continue
		}
		m := hmac.New(sha256.New, []byte(s))
		m.Write(body)
		if hmac.Equal(m.Sum(nil), mac) {
			ok = true
		}
	}
	return ok
}

// equalToken compares two tokens in time independent of where they differ
// and of their lengths (both are hashed first). Empty secrets never match.
func equalToken(given, secret string) int {
	if secret == "" {
		return 0
	}
	a := sha256.Sum256([]byte(given))
	b := sha256.Sum256([]byte(secret))
	return subtle.ConstantTimeCompare(a[:], b[:])
}
