package egress

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"
)

func TestAllowed(t *testing.T) {
	p := &Policy{AllowedHosts: []string{"api.example.com", "*.cdn.example.org"}}
	for host, want := range map[string]bool{
		"api.example.com": true, "API.example.com.": true, "evil.com": false,
		"a.cdn.example.org": true, "x.y.cdn.example.org": true, "cdn.example.org": false,
		"api.example.com.evil.com": false,
	} {
		if got := p.Allowed(host); got != want {
			t.Errorf("Allowed(%q) = %v, want %v", host, got, want)
		}
	}
	if (&Policy{}).Allowed("example.com") {
		t.Error("an empty policy allows a host")
	}
}

func TestInternalAddresses(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1": true, "10.1.2.3": true, "172.16.0.1": true, "192.168.1.1": true,
		"169.254.169.254": true, "100.64.0.1": true, "0.0.0.0": true, "::1": true,
		"fd00:ec2::254": true, "fe80::1": true, "::ffff:127.0.0.1": true, "224.0.0.1": true,
		"93.184.216.34": false, "2606:4700::1111": false,
	} {
		if got := internal(netip.MustParseAddr(addr).Unmap()); got != want {
			t.Errorf("internal(%s) = %v, want %v", addr, got, want)
		}
	}
}

func TestDo(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/hello":
			w.Header().Set("X-Test", "yes")
			w.Write([]byte("hello " + r.Header.Get("X-Name")))
		case "/big":
			w.Write([]byte(strings.Repeat("x", 2048)))
		case "/redirect-away":
			// Same server, but under a name the policy does not allow.
			http.Redirect(w, r, strings.Replace("http://"+r.Host+"/hello", "127.0.0.1", "localhost", 1), http.StatusFound)
		case "/loop":
			http.Redirect(w, r, "/loop", http.StatusFound)
		}
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	get := func(p *Policy, path string) (*Response, error) {
		return p.Do(ctx, Request{URL: srv.URL + path, Headers: map[string]string{"X-Name": "ada"}})
	}

	// The test server is on loopback: refused unless private networks are allowed.
	if _, err := get(&Policy{AllowedHosts: []string{u.Hostname()}, MaxResponseBytes: 1024, Timeout: 5 * time.Second}, "/hello"); !errors.Is(err, ErrRefused) {
		t.Errorf("loopback without allow_private_network: %v", err)
	}
	// A name that resolves to loopback is refused at dial time too.
	p := &Policy{AllowedHosts: []string{"localhost"}, MaxResponseBytes: 1024, Timeout: 5 * time.Second}
	if _, err := p.Do(ctx, Request{URL: strings.Replace(srv.URL, "127.0.0.1", "localhost", 1) + "/hello"}); !errors.Is(err, ErrRefused) {
		t.Errorf("a name resolving to loopback: %v", err)
	}

	open := &Policy{AllowedHosts: []string{u.Hostname()}, AllowPrivate: true, MaxResponseBytes: 1024, Timeout: 5 * time.Second}
	resp, err := get(open, "/hello")
	if err != nil || resp.Status != 200 || string(resp.Body) != "hello ada" || resp.Headers["X-Test"] != "yes" {
		t.Errorf("allowed request = %+v, %v", resp, err)
	}
	if _, err := get(open, "/redirect-away"); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "localhost") {
		t.Errorf("redirect to a host not allowed: %v", err)
	}
	if _, err := get(open, "/loop"); !errors.Is(err, ErrRefused) {
		t.Errorf("redirect loop: %v", err)
	}
	if _, err := get(open, "/big"); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "exceeds 1024 bytes") {
		t.Errorf("oversized response: %v", err)
	}
	if _, err := open.Do(ctx, Request{URL: "file:///etc/passwd"}); !errors.Is(err, ErrRefused) {
		t.Errorf("file URL: %v", err)
	}
	if _, err := (&Policy{}).Do(ctx, Request{URL: srv.URL + "/hello"}); !errors.Is(err, ErrRefused) {
		t.Errorf("no allowed hosts: %v", err)
	}
}
