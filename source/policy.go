package source

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
)

// URLPolicy restricts which repositories a Source may reach, against
// server-side request forgery through a user-supplied repository URL. A nil
// *URLPolicy allows everything.
//
// Rules, in order:
//  1. The scheme must be in AllowedSchemes (when set).
//  2. The host must not match DeniedHosts, and must match AllowedHosts (when
//     set). A pattern is a host name compared whole and case-insensitively,
//     or "*.example.com", which matches any subdomain of example.com but
//     not example.com itself nor "evil-example.com".
//  3. Every address the host resolves to, checked at connect time (so DNS
//     rebinding cannot slip past), must not be link-local (169.254.0.0/16,
//     fe80::/10; this covers the 169.254.169.254 metadata service), a
//     known cloud metadata address (fd00:ec2::254, 100.100.100.200),
//     unspecified or multicast; nor loopback when DenyLoopback, nor private
//     (RFC 1918, fc00::/7) when DenyPrivate.
type URLPolicy struct {
	// AllowedSchemes lists the schemes allowed ("https", "ssh", "http",
	// "file"); empty allows all schemes the source supports.
	AllowedSchemes []string
	// AllowedHosts lists host patterns allowed; empty allows every host
	// not denied.
	AllowedHosts []string
	// DeniedHosts lists host patterns refused.
	DeniedHosts []string
	// DenyLoopback refuses loopback addresses (127.0.0.0/8, ::1).
	DenyLoopback bool
	// DenyPrivate refuses private addresses (RFC 1918, fc00::/7, 100.64/10).
	DenyPrivate bool
}

// metadataAddrs are cloud metadata endpoints outside the link-local range.
var metadataAddrs = [...]netip.Addr{
	netip.MustParseAddr("fd00:ec2::254"),   // AWS IMDS over IPv6
	netip.MustParseAddr("100.100.100.200"), // Alibaba Cloud
}

// CheckURL applies rules 1 and 2 (and rule 3 when the host is an IP
// literal) to a parsed URL. The error wraps ErrURLNotAllowed and names only
// the scheme and host.
func (p *URLPolicy) CheckURL(u *url.URL) error {
	if p == nil {
		return nil
	}
	scheme := strings.ToLower(u.Scheme)
	if len(p.AllowedSchemes) > 0 && !containsFold(p.AllowedSchemes, scheme) {
		return fmt.Errorf("scheme %q: %w", scheme, ErrURLNotAllowed)
	}
	if scheme == "file" {
		return nil
	}
	host := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	if host == "" {
		return fmt.Errorf("empty host: %w", ErrURLNotAllowed)
	}
	for _, pat := range p.DeniedHosts {
		if hostMatches(pat, host) {
			return fmt.Errorf("host %q: %w", host, ErrURLNotAllowed)
		}
	}
	if len(p.AllowedHosts) > 0 {
		ok := false
		for _, pat := range p.AllowedHosts {
			ok = ok || hostMatches(pat, host)
		}
		if !ok {
			return fmt.Errorf("host %q: %w", host, ErrURLNotAllowed)
		}
	}
	if ip, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		return p.CheckAddr(ip)
	}
	return nil
}

// CheckAddr applies rule 3 to one address.
func (p *URLPolicy) CheckAddr(ip netip.Addr) error {
	if p == nil {
		return nil
	}
	ip = ip.Unmap()
	refused := ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() || ip.IsUnspecified() ||
		ip.IsMulticast() || ip.IsInterfaceLocalMulticast() ||
		(p.DenyLoopback && ip.IsLoopback()) ||
		(p.DenyPrivate && (ip.IsPrivate() || netip.MustParsePrefix("100.64.0.0/10").Contains(ip)))
	for _, m := range metadataAddrs {
		refused = refused || ip == m
	}
	if refused {
		return fmt.Errorf("address %s: %w", ip, ErrURLNotAllowed)
	}
	return nil
}

// Control is a net.Dialer Control function that applies CheckAddr to the
// address actually being connected to. Use it on every dialer that serves
// a policed URL so that a host name resolving to a refused address is
// caught after resolution.
func (p *URLPolicy) Control(_, address string, _ syscall.RawConn) error {
	if p == nil {
		return nil
	}
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("address %q: %w", address, ErrURLNotAllowed)
	}
	return p.CheckAddr(ap.Addr())
}

// DialContext dials like net.Dialer.DialContext with Control set to the
// policy's check. dialer may be nil.
func (p *URLPolicy) DialContext(ctx context.Context, dialer *net.Dialer, network, address string) (net.Conn, error) {
	d := net.Dialer{}
	if dialer != nil {
		d = *dialer
	}
	if p != nil {
		d.Control = p.Control
	}
	return d.DialContext(ctx, network, address)
}

func hostMatches(pattern, host string) bool {
	pattern = strings.ToLower(strings.TrimSuffix(pattern, "."))
	if rest, ok := strings.CutPrefix(pattern, "*."); ok {
		return strings.HasSuffix(host, "."+rest)
	}
	return pattern == host
}

func containsFold(list []string, s string) bool {
	for _, v := range list {
		if strings.EqualFold(v, s) {
			return true
		}
	}
	return false
}
