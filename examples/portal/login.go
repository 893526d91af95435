package main

import (
	"net/http"
)

const loginCSRFCookie = "portal_login_csrf"

// loginPage offers the token form and, when configured, OIDC. The form
// carries a double-submit token against login CSRF.
func (s *server) loginPage(w http.ResponseWriter, r *http.Request) {
	tok := randomString()
	http.SetCookie(w, &http.Cookie{Name: loginCSRFCookie, Value: tok, Path: "/login", HttpOnly: true,
		Secure: isHTTPS(r), SameSite: http.SameSiteStrictMode, MaxAge: 600})
	s.render(w, http.StatusOK, "login.html", map[string]any{"CSRF": tok, "OIDC": s.opts.OIDC != nil, "Error": r.URL.Query().Get("error")})
}

// loginToken turns a token of the token file into a session.
func (s *server) loginToken(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxBody)
	c, err := r.Cookie(loginCSRFCookie)
	if err != nil || !sameToken(c.Value, r.PostFormValue("csrf")) {
		apiError(w, http.StatusForbidden, "CSRF token missing or wrong: reload the login page")
		return
	}
	id, ok := s.opts.Tokens.lookup(r.PostFormValue("token"))
	if !ok {
		http.Redirect(w, r, "/login?error=unknown+token", http.StatusSeeOther)
		return
	}
	s.sessions.create(w, r, id)
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

func (s *server) loginOIDC(w http.ResponseWriter, r *http.Request) {
	if s.opts.OIDC == nil {
		http.NotFound(w, r)
		return
	}
	s.opts.OIDC.start(w, r)
}

func (s *server) oidcCallback(w http.ResponseWriter, r *http.Request) {
	if s.opts.OIDC == nil {
		http.NotFound(w, r)
		return
	}
	id, err := s.opts.OIDC.finish(r)
	if err != nil {
		apiError(w, http.StatusUnauthorized, err.Error())
		return
	}
	s.sessions.create(w, r, id)
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

func (s *server) logout(w http.ResponseWriter, r *http.Request, _ caller) {
	s.sessions.end(w, r)
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}
