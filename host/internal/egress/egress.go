// Package egress is the only way a plugin reaches the network: HTTP
// requests to the hosts its config allows, checked on every redirect, with
// addresses on the host's own networks (loopback, private, link-local —
// cloud metadata included — CGNAT, unspecified, multicast) refused when
// the connection is dialled, so a name that resolves to one does not pass.
//
// Extism's own http_request is not used: it checks only the first host,
// follows redirects anywhere, and dials private addresses. A module that
// imports it (hyper-mcp's plugins, Extism PDKs' HTTP clients) is answered
// by this package instead (see plugin's imports.go and hostfn's compat.go).
package egress

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcphost/mcphost/host/internal/telemetry"
)

// Policy says where a plugin may send HTTP requests.
type Policy struct {
	// AllowedHosts are host names: "api.example.com", "*.example.com"
	// (any subdomain, not the domain itself) or "*" (any host).
	AllowedHosts []string
	// AllowPrivate lets connections reach loopback, private and
	// link-local addresses.
	AllowPrivate bool
	// MaxResponseBytes caps a response body.
	MaxResponseBytes int64
	// Timeout bounds a request (the plugin call's deadline bounds it too).
	Timeout time.Duration
	// Network resolves names and dials addresses; nil is the real network.
	// Tests and embedders may substitute their own.
	Network *Network
}

// Network is how egress reaches the outside: a resolver and a dialer.
type Network struct {
	// Resolve returns the addresses of a host name.
	Resolve func(ctx context.Context, host string) ([]netip.Addr, error)
	// Dial connects to an address ("ip:port") that the policy has checked.
	Dial func(ctx context.Context, network, address string) (net.Conn, error)
	// RootCAs, if set, are the certificate authorities HTTPS trusts
	// instead of the system's.
	RootCAs *x509.CertPool
}

// SystemNetwork is the host's resolver and a dialer that refuses, once more
// at connect time, any address on the host's own networks unless allowed.
func SystemNetwork(allowPrivate bool) *Network {
	d := &net.Dialer{Timeout: 10 * time.Second, Control: func(_, address string, _ syscall.RawConn) error {
		return checkAddress(address, allowPrivate)
	}}
	return &Network{
		Resolve: func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		},
		Dial: d.DialContext,
	}
}

// MaxRedirects is how many redirects a request may follow.
const MaxRedirects = 5

// Request is what a plugin asks for.
type Request struct {
	Method  string            `json:"method"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers,omitempty"`
	Body    []byte            `json:"body,omitempty"` // base64 in JSON
}

// Response is what the plugin gets back.
type Response struct {
	Status  int               `json:"status"`
	Headers map[string]string `json:"headers,omitempty"`
	Body    []byte            `json:"body,omitempty"` // base64 in JSON
}

// Allowed reports whether host matches the policy's allowed hosts.
func (p *Policy) Allowed(host string) bool {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	for _, pattern := range p.AllowedHosts {
		pattern = strings.ToLower(pattern)
		switch {
		case pattern == "*", pattern == host:
			return true
		case strings.HasPrefix(pattern, "*.") && strings.HasSuffix(host, pattern[1:]):
			return true
		}
	}
	return false
}

// ErrRefused marks a request the policy refuses.
var ErrRefused = errors.New("refused")

// Do sends req under the policy.
func (p *Policy) Do(ctx context.Context, req Request) (*Response, error) {
	u, err := url.Parse(req.URL)
	if err != nil {
		return nil, fmt.Errorf("url %q: %w", req.URL, err)
	}
	if err := p.check(u); err != nil {
		return nil, err
	}
	method := strings.ToUpper(req.Method)
	if method == "" {
		method = http.MethodGet
	}
	ctx, span := telemetry.Start(ctx, "HTTP "+method, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(
		attribute.String("http.request.method", method), attribute.String("server.address", u.Hostname()),
		attribute.String("url.full", (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String())))
	defer span.End()
	hreq, err := http.NewRequestWithContext(ctx, method, u.String(), bytes.NewReader(req.Body))
	if err != nil {
		return nil, err
	}
	for k, v := range req.Headers {
		hreq.Header.Set(k, v)
	}
	// The called API joins the call's trace (a plugin's own traceparent
	// is replaced by the host's span, its child).
	telemetry.Inject(ctx, hreq.Header)
	resp, err := p.client().Do(hreq)
	if err != nil {
		span.SetStatus(codes.Error, err.Error())
		span.SetAttributes(attribute.String("error.type", "_OTHER"))
		return nil, err
	}
	defer resp.Body.Close()
	span.SetAttributes(attribute.Int("http.response.status_code", resp.StatusCode))
	if resp.StatusCode >= 500 {
		span.SetStatus(codes.Error, resp.Status)
		span.SetAttributes(attribute.String("error.type", strconv.Itoa(resp.StatusCode)))
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, p.MaxResponseBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read response: %w", err)
	}
	if int64(len(body)) > p.MaxResponseBytes {
		return nil, fmt.Errorf("response body exceeds %d bytes: %w", p.MaxResponseBytes, ErrRefused)
	}
	out := &Response{Status: resp.StatusCode, Headers: map[string]string{}, Body: body}
	for k := range resp.Header {
		out.Headers[k] = resp.Header.Get(k)
	}
	return out, nil
}

func (p *Policy) check(u *url.URL) error {
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("scheme %q: only http and https: %w", u.Scheme, ErrRefused)
	}
	if !p.Allowed(u.Hostname()) {
		return fmt.Errorf("host %q is not in allowed_hosts: %w", u.Hostname(), ErrRefused)
	}
	return nil
}

func (p *Policy) client() *http.Client {
	return &http.Client{
		Timeout: p.Timeout,
		Transport: &http.Transport{
			Proxy:                  nil, // never through the host's proxy settings
			DialContext:            p.dial,
			TLSClientConfig:        p.tlsConfig(),
			TLSHandshakeTimeout:    10 * time.Second,
			ResponseHeaderTimeout:  p.Timeout,
			MaxResponseHeaderBytes: 64 << 10,
			DisableKeepAlives:      true,
		},
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= MaxRedirects {
				return fmt.Errorf("more than %d redirects: %w", MaxRedirects, ErrRefused)
			}
			if err := p.check(req.URL); err != nil {
				return fmt.Errorf("redirect to %s: %w", req.URL, err)
			}
			return nil
		},
	}
}

// tlsConfig trusts the network's roots when it names some, else the
// system's.
func (p *Policy) tlsConfig() *tls.Config {
	if p.Network == nil || p.Network.RootCAs == nil {
		return nil
	}
	return &tls.Config{RootCAs: p.Network.RootCAs, MinVersion: tls.VersionTLS12}
}

// dial resolves the host once, refuses it if any of its addresses is on
// the host's own networks (unless allowed), and connects to a checked
// address — never to the name, so a second DNS answer cannot differ from
// the one checked. Nothing is dialled when the check fails.
func (p *Policy) dial(ctx context.Context, network, address string) (net.Conn, error) {
	nw := p.Network
	if nw == nil {
		nw = SystemNetwork(p.AllowPrivate)
	}
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	var addrs []netip.Addr
	if ip, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{ip}
	} else if addrs, err = nw.Resolve(ctx, host); err != nil {
		return nil, fmt.Errorf("resolve %s: %w", host, err)
	}
	if len(addrs) == 0 {
		return nil, fmt.Errorf("resolve %s: no address", host)
	}
	for _, a := range addrs {
		if err := checkAddress(netip.AddrPortFrom(a, 0).String(), p.AllowPrivate); err != nil {
			return nil, fmt.Errorf("%s resolves to %s: %w", host, a.Unmap(), err)
		}
	}
	var lastErr error
	for _, a := range addrs {
		conn, err := nw.Dial(ctx, network, net.JoinHostPort(a.Unmap().String(), port))
		if err == nil {
			return conn, nil
		}
		lastErr = err
	}
	return nil, lastErr
}

// checkAddress refuses an "ip:port" on the host's own networks unless
// allowPrivate.
func checkAddress(address string, allowPrivate bool) error {
	if allowPrivate {
		return nil
	}
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("dial %s: %w", address, ErrRefused)
	}
	if addr := ap.Addr().Unmap(); internal(addr) {
		return fmt.Errorf("address %s is on a private, loopback or link-local network (allow_private_network): %w", addr, ErrRefused)
	}
	return nil
}

var cgnat = netip.MustParsePrefix("100.64.0.0/10")

// internal reports whether addr is not a public unicast address.
func internal(addr netip.Addr) bool {
	return addr.IsLoopback() || addr.IsPrivate() || addr.IsLinkLocalUnicast() ||
		addr.IsLinkLocalMulticast() || addr.IsInterfaceLocalMulticast() || addr.IsMulticast() ||
		addr.IsUnspecified() || cgnat.Contains(addr) || !addr.IsGlobalUnicast()
}
