package egress

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
)

// The sources of a Content Security Policy that an MCP App (SEP-1865)
// declares in its resource's _meta.ui.csp (connectDomains,
// resourceDomains, frameDomains, baseUriDomains) are origins its page may
// reach from the client's browser. A plugin's page may reach only what the
// plugin itself may: Covers checks a source against the same allowed_hosts
// (and allow_private_network) that bound the plugin's http_request.

// ErrNotGranted marks a source that is well formed but outside the
// plugin's allowed_hosts (or private without allow_private_network): the
// grant decides, not the source's form.
var ErrNotGranted = errors.New("not granted")

// maxSourceBytes bounds one source: a host name is at most 253 bytes.
const maxSourceBytes = 512

// Source is one CSP source an app declares, as the host checks it:
// scheme://host[:port][/path], host possibly "*" or "*.domain".
type Source struct {
	// Scheme is http, https, ws or wss.
	Scheme string
	// Host is the host in lower case: a name, an IPv4 address, "*" (any
	// host) or "*.domain" (any subdomain of domain, not domain itself).
	Host string
	// Port is the port as written ("" for the scheme's, "*" for any).
	Port string
}

// ParseSource parses a CSP source as an MCP App declares it. Only an
// origin with an explicit scheme is accepted: "https://api.example.com",
// "wss://live.example.com:8443", "https://*.example.com". A CSP keyword
// ('self', 'unsafe-eval'), a scheme alone ("https:", "data:"), a bare host,
// user info, a query or a fragment, and anything that could end the
// directive it is put in (white space, ';', ',', quotes) are refused, so
// that what the host checked is exactly what a client puts in the policy.
func ParseSource(s string) (Source, error) {
	if len(s) > maxSourceBytes {
		return Source{}, fmt.Errorf("is %d bytes (at most %d)", len(s), maxSourceBytes)
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || c == ';' || c == ',' || c == '\'' || c == '"' || c == '\\' {
			return Source{}, fmt.Errorf("has the character %q at byte %d: a source is scheme://host[:port], in ASCII, with nothing that could end the CSP directive", rune(c), i)
		}
	}
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok {
		return Source{}, errors.New(`is not an origin: want scheme://host[:port], e.g. "https://api.example.com" (a CSP keyword, a scheme alone or a bare host is not accepted)`)
	}
	scheme = strings.ToLower(scheme)
	switch scheme {
	case "http", "https", "ws", "wss":
	default:
		return Source{}, fmt.Errorf("has the scheme %q: only http, https, ws and wss", scheme)
	}
	if strings.ContainsAny(rest, "?#@[]") {
		return Source{}, errors.New("has user info, a query, a fragment or an IPv6 literal: want scheme://host[:port][/path]")
	}
	authority, _, _ := strings.Cut(rest, "/")
	host, port, hasPort := strings.Cut(authority, ":")
	if hasPort {
		if port != "*" {
			n, err := strconv.Atoi(port)
			if err != nil || n < 1 || n > 65535 || port[0] == '0' {
				return Source{}, fmt.Errorf("has the port %q: want 1 to 65535 or *", port)
			}
		}
	}
	host = strings.ToLower(host)
	name := strings.TrimPrefix(host, "*.")
	if host != "*" {
		if err := checkHostName(name); err != nil {
			return Source{}, err
		}
	}
	return Source{Scheme: scheme, Host: host, Port: port}, nil
}

// checkHostName checks a host name or IPv4 address of a source: labels of
// letters, digits and '-', none empty (no trailing dot) and none with a
// '*' (a wildcard is only a whole first label).
func checkHostName(name string) error {
	if name == "" {
		return errors.New("has no host")
	}
	if len(name) > 253 {
		return fmt.Errorf("has a host of %d bytes (at most 253)", len(name))
	}
	for _, label := range strings.Split(name, ".") {
		if label == "" || len(label) > 63 {
			return fmt.Errorf("has the host %q: a label is empty or longer than 63 bytes", name)
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
				return fmt.Errorf("has the host %q: %q is not allowed in a host name (a wildcard is only a first label, as in *.example.com)", name, rune(c))
			}
		}
	}
	return nil
}

// private reports whether host names the client's own machine or network:
// localhost, *.localhost, or a loopback, private, link-local or
// unspecified IPv4 address. An allowed name that resolves to such an
// address is not caught: the client's browser resolves it, not the host.
func private(host string) bool {
	name := strings.TrimPrefix(host, "*.")
	if name == "localhost" || strings.HasSuffix(name, ".localhost") {
		return true
	}
	if addr, err := netip.ParseAddr(name); err == nil {
		return internal(addr)
	}
	return false
}

// Covers reports whether the policy lets a plugin's app reach src: its
// host must be one allowed_hosts allows (an exact pattern or "*.domain"
// for a name, "*.domain" or a wider wildcard for "*.sub.domain", only "*"
// for "*"), and a private one needs AllowPrivate too. Every scheme and
// port of an allowed host is allowed, as for http_request. The error,
// wrapping ErrNotGranted, says which grant is missing.
func (p *Policy) Covers(src Source) error {
	if private(src.Host) && !p.AllowPrivate && src.Host != "*" {
		return fmt.Errorf("host %q is on the client's own machine or network, which needs allow_private_network = true: %w", src.Host, ErrNotGranted)
	}
	switch {
	case src.Host == "*":
		if !slices.Contains(p.AllowedHosts, "*") {
			return fmt.Errorf(`any host ("*") needs allowed_hosts = ["*"]: %w`, ErrNotGranted)
		}
		if !p.AllowPrivate {
			return fmt.Errorf(`any host ("*") includes the client's own machine and network, which needs allow_private_network = true: %w`, ErrNotGranted)
		}
		return nil
	case strings.HasPrefix(src.Host, "*."):
		domain := src.Host[2:]
		for _, pattern := range p.AllowedHosts {
			pattern = strings.ToLower(pattern)
			if pattern == "*" {
				return nil
			}
			if base, ok := strings.CutPrefix(pattern, "*."); ok && (domain == base || strings.HasSuffix(domain, "."+base)) {
				return nil
			}
		}
		return fmt.Errorf("every subdomain of %q needs allowed_hosts to hold %q or a wider wildcard: %w", domain, src.Host, ErrNotGranted)
	default:
		if p.Allowed(src.Host) {
			return nil
		}
		return fmt.Errorf("host %q is not in allowed_hosts: %w", src.Host, ErrNotGranted)
	}
}
