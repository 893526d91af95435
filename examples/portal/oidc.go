package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	gosync "sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/kubegitops/gitops/rbac"
)

const (
	oidcStateCookie = "portal_oidc_state"
	oidcLoginTTL    = 10 * time.Minute
	oidcTimeout     = 15 * time.Second
)

// oidcOptions configure login through an OpenID Connect issuer.
type oidcOptions struct {
	Issuer       string
	ClientID     string
	ClientSecret string
	// RedirectURL is this portal's /oidc/callback as the issuer knows it.
	RedirectURL string
	// GroupsClaim names the ID token claim holding the groups. Default
	// "groups". Ignored when Scopes is set.
	GroupsClaim string
	// Scopes are the claims whose values are groups, read as Argo CD reads
	// argocd-rbac-cm's scopes (rbac.GroupsFromClaims); nil: [GroupsClaim].
	Scopes []string
}

// oidcLogin runs the authorization code flow with PKCE, a state bound to
// the browser by a cookie, and a nonce checked in the ID token.
type oidcLogin struct {
	opts     oidcOptions
	client   *http.Client
	oauth    oauth2.Config
	verifier *oidc.IDTokenVerifier

	mu      gosync.Mutex
	pending map[string]pendingLogin
}

type pendingLogin struct {
	nonce, pkce string
	expires     time.Time
}

// newOIDCLogin discovers the issuer (with a timeout).
func newOIDCLogin(ctx context.Context, opts oidcOptions) (*oidcLogin, error) {
	if opts.ClientID == "" || opts.RedirectURL == "" {
		return nil, fmt.Errorf("oidc issuer %s: --oidc-client-id and --oidc-redirect-url are required", opts.Issuer)
	}
	if opts.GroupsClaim == "" {
		opts.GroupsClaim = "groups"
	}
	if opts.Scopes == nil {
		opts.Scopes = []string{opts.GroupsClaim}
	}
	scopes := []string{oidc.ScopeOpenID, "profile", "email"}
	for _, sc := range opts.Scopes {
		if !slices.Contains(scopes, sc) {
			scopes = append(scopes, sc)
		}
	}
	client := &http.Client{Timeout: oidcTimeout}
	dctx, cancel := context.WithTimeout(oidc.ClientContext(ctx, client), oidcTimeout)
	defer cancel()
	p, err := oidc.NewProvider(dctx, opts.Issuer)
	if err != nil {
		return nil, fmt.Errorf("oidc issuer %s: %w", opts.Issuer, err)
	}
	return &oidcLogin{
		opts:   opts,
		client: client,
		oauth: oauth2.Config{ClientID: opts.ClientID, ClientSecret: opts.ClientSecret, Endpoint: p.Endpoint(),
			RedirectURL: opts.RedirectURL, Scopes: scopes},
		verifier: p.Verifier(&oidc.Config{ClientID: opts.ClientID}),
		pending:  map[string]pendingLogin{},
	}, nil
}

// start redirects the browser to the issuer.
func (o *oidcLogin) start(w http.ResponseWriter, r *http.Request) {
	state, nonce, pkce := randomString(), randomString(), oauth2.GenerateVerifier()
	now := time.Now()
	o.mu.Lock()
	for k, p := range o.pending {
		if now.After(p.expires) {
			delete(o.pending, k)
		}
	}
	o.pending[state] = pendingLogin{nonce: nonce, pkce: pkce, expires: now.Add(oidcLoginTTL)}
	o.mu.Unlock()
	http.SetCookie(w, &http.Cookie{Name: oidcStateCookie, Value: state, Path: "/oidc/", HttpOnly: true,
		Secure: isHTTPS(r), SameSite: http.SameSiteLaxMode, MaxAge: int(oidcLoginTTL.Seconds())})
	http.Redirect(w, r, o.oauth.AuthCodeURL(state, oidc.Nonce(nonce), oauth2.S256ChallengeOption(pkce)), http.StatusFound)
}

// errOIDCLogin is a login the portal refuses; its message is safe to show.
var errOIDCLogin = errors.New("oidc login refused")

// finish checks the callback and returns who logged in.
func (o *oidcLogin) finish(r *http.Request) (identity, error) {
	q := r.URL.Query()
	if e := q.Get("error"); e != "" {
		return identity{}, fmt.Errorf("%w: the issuer answered %q", errOIDCLogin, e)
	}
	state := q.Get("state")
	c, err := r.Cookie(oidcStateCookie)
	if err != nil || !sameToken(c.Value, state) {
		return identity{}, fmt.Errorf("%w: the state does not match this browser's login", errOIDCLogin)
	}
	o.mu.Lock()
	p, ok := o.pending[state]
	delete(o.pending, state)
	o.mu.Unlock()
	if !ok || time.Now().After(p.expires) {
		return identity{}, fmt.Errorf("%w: the login expired; start again", errOIDCLogin)
	}
	ctx, cancel := context.WithTimeout(r.Context(), oidcTimeout)
	defer cancel()
	ctx = context.WithValue(oidc.ClientContext(ctx, o.client), oauth2.HTTPClient, o.client)
	tok, err := o.oauth.Exchange(ctx, q.Get("code"), oauth2.VerifierOption(p.pkce))
	if err != nil {
		return identity{}, fmt.Errorf("%w: code exchange with %s failed", errOIDCLogin, o.opts.Issuer)
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return identity{}, fmt.Errorf("%w: the token response of %s has no id_token", errOIDCLogin, o.opts.Issuer)
	}
	idt, err := o.verifier.Verify(ctx, raw)
	if err != nil {
		return identity{}, fmt.Errorf("%w: id_token: %v", errOIDCLogin, err)
	}
	if !sameToken(idt.Nonce, p.nonce) {
		return identity{}, fmt.Errorf("%w: id_token nonce does not match", errOIDCLogin)
	}
	var claims map[string]any
	if err := idt.Claims(&claims); err != nil {
		return identity{}, fmt.Errorf("%w: id_token claims: %v", errOIDCLogin, err)
	}
	id := identity{User: idt.Subject, Via: "oidc"}
	if email, _ := claims["email"].(string); email != "" {
		id.User = email
	}
	for _, g := range rbac.GroupsFromClaims(claims, o.opts.Scopes) {
		if g != "" && !slices.Contains(id.Groups, g) {
			id.Groups = append(id.Groups, g)
		}
	}
	return id, nil
}
