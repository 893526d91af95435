package main

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
	"strings"
	gosync "sync"
	"time"
)

const (
	sessionCookie = "portal_session"
	csrfHeader    = "X-CSRF-Token"
	sessionTTL    = 8 * time.Hour
)

// session is a logged-in browser.
type session struct {
	id      identity
	csrf    string
	expires time.Time
}

// sessions keeps browser sessions in memory (a restart logs everyone out)
// and derives the CSRF token of bearer-token clients.
type sessions struct {
	key []byte // HMAC key for bearer clients' CSRF tokens

	mu   gosync.Mutex
	byID map[string]*session
	now  func() time.Time
}

func newSessions() *sessions {
	return &sessions{key: []byte(randomString()), byID: map[string]*session{}, now: time.Now}
}

// randomString returns 256 random bits as text (crypto/rand.Text twice).
func randomString() string { return rand.Text() + rand.Text() }

// create starts a session for id and sets its cookie.
func (s *sessions) create(w http.ResponseWriter, r *http.Request, id identity) {
	sid := randomString()
	s.mu.Lock()
	s.byID[sid] = &session{id: id, csrf: randomString(), expires: s.now().Add(sessionTTL)}
	s.mu.Unlock()
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: sid, Path: "/", HttpOnly: true,
		Secure: isHTTPS(r), SameSite: http.SameSiteStrictMode, MaxAge: int(sessionTTL.Seconds())})
}

// end removes the session of r and clears its cookie.
func (s *sessions) end(w http.ResponseWriter, r *http.Request) {
	if c, err := r.Cookie(sessionCookie); err == nil {
		s.mu.Lock()
		delete(s.byID, c.Value)
		s.mu.Unlock()
	}
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: "", Path: "/", HttpOnly: true, MaxAge: -1, Secure: isHTTPS(r), SameSite: http.SameSiteStrictMode})
}

// fromCookie returns the live session of r's cookie.
func (s *sessions) fromCookie(r *http.Request) (*session, bool) {
	c, err := r.Cookie(sessionCookie)
	if err != nil {
		return nil, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	se, ok := s.byID[c.Value]
	if !ok {
		return nil, false
	}
	if s.now().After(se.expires) {
		delete(s.byID, c.Value)
		return nil, false
	}
	return se, true
}

// bearerCSRF is the CSRF token of a bearer-token client: an HMAC of the
// token, so it needs no storage and is worthless without the token.
func (s *sessions) bearerCSRF(token string) string {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(token))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// bearerToken returns the token of an "Authorization: Bearer" header.
func bearerToken(r *http.Request) string {
	h := r.Header.Get("Authorization")
	if t, ok := strings.CutPrefix(h, "Bearer "); ok {
		return strings.TrimSpace(t)
	}
	return ""
}

// sameToken compares two CSRF tokens in constant time.
func sameToken(a, b string) bool {
	return a != "" && subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}
