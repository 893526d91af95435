package gitserver

import (
	"crypto/subtle"
	"crypto/tls"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
)

// mayRead reports whether r may fetch; when not, it answers 401 with a
// challenge, or 404 without one (Options.NoChallenge).
func (s *Server) mayRead(w http.ResponseWriter, r *http.Request) bool {
	o := s.opts
	if o.ReadPassword == "" && o.ReadBearerToken == "" && o.ReadCheck == nil {
		return true
	}
	if o.ReadCheck != nil && o.ReadCheck(r) {
		return true
	}
	if o.ReadPassword != "" {
		u, p, ok := r.BasicAuth()
		if ok && subtle.ConstantTimeCompare([]byte(u), []byte(o.ReadUsername)) == 1 && subtle.ConstantTimeCompare([]byte(p), []byte(o.ReadPassword)) == 1 {
			return true
		}
	}
	if o.ReadBearerToken != "" {
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if ok && subtle.ConstantTimeCompare([]byte(tok), []byte(o.ReadBearerToken)) == 1 {
			return true
		}
	}
	if o.NoChallenge {
		http.Error(w, "Repository not found", http.StatusNotFound)
		return false
	}
	w.Header().Set("WWW-Authenticate", `Basic realm="gitserver"`)
	http.Error(w, "authentication required", http.StatusUnauthorized)
	return false
}

// serveTLS makes the server speak HTTPS with httptest's certificate.
func (s *Server) serveTLS() error {
	ts := httptest.NewUnstartedServer(http.NotFoundHandler())
	ts.StartTLS() // only to have httptest make its certificate
	cfg := ts.TLS.Clone()
	cert := ts.Certificate()
	ts.Close()
	if cert == nil || len(cfg.Certificates) == 0 {
		return fmt.Errorf("gitserver: no TLS certificate")
	}
	s.caPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw})
	s.ln = tls.NewListener(s.ln, &tls.Config{Certificates: cfg.Certificates, MinVersion: tls.VersionTLS12})
	s.tls = true
	return nil
}
