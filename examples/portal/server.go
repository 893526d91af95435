package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"net/http"
	"net/netip"
	"strings"
	gosync "sync"
	"sync/atomic"
	"time"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/rbac"
	"github.com/kubegitops/gitops/source"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// serverOptions are what a portal serves and whom it lets in.
type serverOptions struct {
	Engine *gitops.Engine
	Hooks  *engineHooks
	Apps   []*gitops.Application
	// AppsDir, when set, is the --apps folder Apps were read from: edits,
	// creates and deletes made in the portal are written to its files
	// (appFolder).
	AppsDir string
	// Kube reads Events (the engine's caches leave them out).
	Kube kubernetes.Interface
	// KubeConfig is Kube's configuration (a Pod terminal's exec stream).
	KubeConfig *rest.Config
	// Exec holds argocd-cm's terminal settings (nil: the terminal is off).
	Exec *execState
	// KubeDynamic deletes an app's resources (on Kube's cluster).
	KubeDynamic dynamic.Interface
	Tokens      tokenFile
	OIDC        *oidcLogin
	// Policy is the role file; used when Authz is nil.
	Policy policy
	// Authz authorises every request (argocd-rbac-cm); nil: Policy.
	Authz authorizer
	// TrustedProxies are the peers whose X-Forwarded-Proto, -For and
	// -Host headers are believed.
	TrustedProxies []netip.Prefix
	// Audit receives one JSON line per state-changing request, refused or
	// started, and one when an operation ends.
	Audit io.Writer
	// ClusterNames are the clusters' names by server URL (clusterNames):
	// the pages show a destination by its cluster's name.
	ClusterNames map[string]string
	// PageSize is the list page's length. Default 50.
	PageSize int
	// LogsFollowMax bounds how long one logs request streams. Default 30
	// minutes.
	LogsFollowMax time.Duration
}

// server is the portal's HTTP handler.
type server struct {
	opts serverOptions
	// apps is the served apps (appSet), guarded by appsMu; an edit
	// replaces an app whole, never changing one in place.
	appsMu   gosync.RWMutex
	apps     appSet
	sessions *sessions
	audit    *auditLog
	pages    *template.Template
	mux      *http.ServeMux
	// ops are the sync operations the portal runs, by app.
	opsMu gosync.Mutex
	ops   map[string]context.CancelFunc
	// bg is the lifetime of operations (they outlive their request).
	bg     context.Context
	stopBg context.CancelFunc
	wg     gosync.WaitGroup
	// commits caches the metadata of the commits shown.
	commits *commitCache
	// ns is the namespace the apps are read from and written to
	// (--namespace); nil: a folder's apps, run by the portal's engine.
	ns *nsBackend
	// folder is the --apps folder the portal writes (AppsDir); nil: none.
	folder *appFolder
	// folderSets are the --apps folder's ApplicationSets
	// (appsetfolder.go), set before the portal serves; nil: none.
	folderSets *folderSets
	// nudges are the apps whose pages are due a push (watchPages).
	nudges *pageNudges
	// clusterNames are ClusterNames, replaced whole when the cluster
	// Secrets of the namespace change.
	clusterNames atomic.Pointer[map[string]string]
	// charts is the portal's own chart source (parameter tables), made
	// at first use when the engine has none.
	chartsOnce gosync.Once
	charts     source.Source
	chartsErr  error
}

// newServer checks the apps and builds the routes.
func newServer(opts serverOptions) (*server, error) {
	if opts.PageSize <= 0 {
		opts.PageSize = 50
	}
	if opts.LogsFollowMax <= 0 {
		opts.LogsFollowMax = defaultFollowMax
	}
	if opts.Audit == nil {
		opts.Audit = io.Discard
	}
	if opts.Authz == nil {
		opts.Authz = opts.Policy
	}
	pages, err := parsePages()
	if err != nil {
		return nil, err
	}
	s := &server{opts: opts, apps: appSet{byName: map[string]*gitops.Application{}}, sessions: newSessions(),
		audit: &auditLog{w: opts.Audit}, pages: pages, ops: map[string]context.CancelFunc{},
		commits: &commitCache{m: map[string]commitMeta{}}}
	names := opts.ClusterNames
	s.clusterNames.Store(&names)
	if opts.AppsDir != "" {
		s.folder = &appFolder{dir: opts.AppsDir}
	}
	for _, a := range opts.Apps {
		if err := s.addApp(a); err != nil {
			return nil, fmt.Errorf("application %s: given twice", a.Name)
		}
	}
	s.bg, s.stopBg = context.WithCancel(context.Background())
	if opts.Hooks != nil && opts.Engine != nil {
		nudges := newPageNudges()
		s.nudges = nudges
		opts.Hooks.broker.onJoin(nudges.joined)
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.watchPages(s.bg, nudges)
		}()
	}
	s.routes()
	return s, nil
}

// close cancels running operations and waits for them.
func (s *server) close() {
	s.stopBg()
	s.wg.Wait()
}

func (s *server) routes() {
	m := http.NewServeMux()
	m.Handle("GET /static/", staticHandler())
	m.HandleFunc("GET /login", s.loginPage)
	m.HandleFunc("POST /login", s.loginToken)
	m.HandleFunc("GET /login/oidc", s.loginOIDC)
	m.HandleFunc("GET /oidc/callback", s.oidcCallback)
	m.Handle("POST /logout", s.authed(s.logout))
	m.Handle("GET /{$}", s.authed(s.listPage))
	m.Handle("GET /apps/{name}", s.authed(s.appPage))
	m.Handle("GET /applicationsets", s.authed(s.appSetsPage))
	m.Handle("GET /api/v1/applicationsets", s.authed(s.apiAppSets))
	m.Handle("GET /api/v1/session", s.authed(s.apiSession))
	m.Handle("GET /api/v1/apps", s.authed(s.apiList))
	m.Handle("POST /api/v1/sync", s.authed(s.apiBulkSync))
	m.Handle("POST /api/v1/refresh", s.authed(s.apiBulkRefresh))
	m.Handle("POST /api/v1/delete", s.authed(s.apiBulkDelete))
	m.Handle("POST /api/v1/apps", s.authed(s.apiCreate))
	m.Handle("GET /api/v1/stream", s.authed(s.apiListStream))
	m.Handle("POST /api/v1/apps/{name}/delete", s.authed(s.apiDeleteApp))
	m.Handle("POST /api/v1/apps/{name}/resource/delete", s.authed(s.apiDeleteResource))
	m.Handle("GET /api/v1/apps/{name}", s.authed(s.apiApp))
	m.Handle("GET /api/v1/apps/{name}/resource", s.authed(s.apiResource))
	m.Handle("GET /api/v1/apps/{name}/events", s.authed(s.apiEvents))
	m.Handle("GET /api/v1/apps/{name}/actions", s.authed(s.apiActions))
	m.Handle("GET /api/v1/apps/{name}/stream", s.authed(s.apiStream))
	m.Handle("GET /api/v1/apps/{name}/permissions", s.authed(s.apiPermissions))
	m.Handle("GET /api/v1/apps/{name}/pods", s.authed(s.apiPods))
	m.Handle("GET /api/v1/apps/{name}/logs", s.authed(s.apiLogs))
	m.Handle("GET /api/v1/apps/{name}/exec", s.authed(s.apiExec))
	m.Handle("GET /api/v1/apps/{name}/network", s.authed(s.apiNetwork))
	m.Handle("GET /api/v1/apps/{name}/diff", s.authed(s.apiAppDiff))
	m.Handle("GET /api/v1/apps/{name}/details", s.authed(s.apiDetails))
	m.Handle("POST /api/v1/apps/{name}/details", s.authed(s.apiEditDetails))
	m.Handle("GET /api/v1/apps/{name}/parameters", s.authed(s.apiParameters))
	m.Handle("POST /api/v1/apps/{name}/refresh", s.authed(s.apiRefresh))
	m.Handle("POST /api/v1/apps/{name}/sync", s.authed(s.apiSync))
	m.Handle("POST /api/v1/apps/{name}/rollback", s.authed(s.apiRollback))
	m.Handle("POST /api/v1/apps/{name}/terminate", s.authed(s.apiTerminate))
	m.Handle("POST /api/v1/apps/{name}/action", s.authed(s.apiAction))
	s.settingsRoutes(m)
	s.mux = m
}

// contentSecurityPolicy allows only this origin's script and style: no
// inline script, no eval, no framing.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; " +
	"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// ServeHTTP sets the security headers of every response (HSTS when the
// request came over HTTPS, see forwarded) and marks the request HTTPS for
// the cookies it sets.
func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	r, https := s.forwarded(r)
	if https {
		h.Set("Strict-Transport-Security", hstsValue)
		r = r.WithContext(context.WithValue(r.Context(), httpsKey{}, true))
	}
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	s.mux.ServeHTTP(w, r)
}

// caller is an authenticated request's identity and CSRF token.
type caller struct {
	identity
	csrf string
}

type callerKey struct{}

// authed authenticates r (bearer token, else session cookie), checks the
// CSRF token of every POST, and calls h with the caller.
func (s *server) authed(h func(http.ResponseWriter, *http.Request, caller)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var c caller
		if tok := bearerToken(r); tok != "" {
			id, err := s.bearerIdentity(tok)
			if err != nil {
				apiError(w, http.StatusUnauthorized, err.Error())
				return
			}
			c = caller{identity: id, csrf: s.sessions.bearerCSRF(tok)}
		} else if se, ok := s.sessions.fromCookie(r); ok {
			c = caller{identity: se.id, csrf: se.csrf}
		} else {
			if strings.HasPrefix(r.URL.Path, "/api/") {
				apiError(w, http.StatusUnauthorized, "log in first: a bearer token or a session")
				return
			}
			http.Redirect(w, r, "/login", http.StatusSeeOther)
			return
		}
		if r.Method == http.MethodPost && !sameToken(r.Header.Get(csrfHeader), c.csrf) && !sameToken(r.PostFormValue("csrf"), c.csrf) {
			msg := "CSRF token missing or wrong: send the session's token in " + csrfHeader
			if r.PathValue("name") != "" {
				s.refused(r, c.identity, msg)
			} else if op, ok := settingsWriteOf(r); ok {
				s.finishSettingAudit(c, op, refusedPrefix+msg)
			}
			apiError(w, http.StatusForbidden, msg)
			return
		}
		h(w, r, c)
	})
}

// projectTokens authenticate Argo CD project tokens (argoRBAC).
type projectTokens interface {
	projectToken(token string) (identity, error)
}

// bearerIdentity is the identity of a bearer token: a token of the token
// file, else, with argocd-rbac-cm, an Argo CD project token checked at
// each request (a revoked one is refused from the next request on). The
// error never holds the token.
func (s *server) bearerIdentity(tok string) (identity, error) {
	if id, ok := s.opts.Tokens.lookup(tok); ok {
		return id, nil
	}
	pt, ok := s.opts.Authz.(projectTokens)
	if !ok {
		return identity{}, errors.New("the bearer token is not known")
	}
	id, err := pt.projectToken(tok)
	if errors.Is(err, rbac.ErrNotProjectToken) {
		return identity{}, errors.New("the bearer token is not known")
	}
	if err != nil {
		return identity{}, fmt.Errorf("the bearer token is not honoured: %w", err)
	}
	return id, nil
}

// accessError answers a request for an app the caller may not see (404,
// the same answer as for no such app, so names of other projects' apps do
// not leak) or may see but not change (403).
type accessError struct {
	code int
	msg  string
	// err is the refusal's reason (an *rbac.DeniedError), when one is.
	err error
}

// Error implements error.
func (e *accessError) Error() string { return e.msg }

// Unwrap returns the refusal's reason.
func (e *accessError) Unwrap() error { return e.err }

func projectOf(a *gitops.Application) string {
	if a.Spec.Project == "" {
		return "default"
	}
	return a.Spec.Project
}

// writeJSON answers v as JSON.
func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// apiError answers {"error": msg}.
func apiError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, map[string]string{"error": msg})
}

// deny answers an appFor error.
func deny(w http.ResponseWriter, err error) {
	var ae *accessError
	if errors.As(err, &ae) {
		apiError(w, ae.code, ae.msg)
		return
	}
	apiError(w, http.StatusInternalServerError, err.Error())
}

func (s *server) apiSession(w http.ResponseWriter, r *http.Request, c caller) {
	writeJSON(w, http.StatusOK, map[string]any{"user": c.User, "groups": c.Groups, "via": c.Via,
		"role": s.opts.Authz.roleName(c.identity), "csrfToken": c.csrf})
}
