package egress

import (
	"errors"
	"strings"
	"testing"
)

func TestParseSourceRefusesWhatIsNotAnOrigin(t *testing.T) {
	for _, s := range []string{
		"'self'", "'unsafe-eval'", "https:", "data:", "blob:", "*", "api.example.com",
		"ftp://example.com", "javascript://x", "https://", "https://a.com; script-src *",
		"https://a.com b.com", "https://a.com,b.com", "https://user@a.com", "https://a.com?x",
		"https://a.com#x", "https://[::1]", "https://a.com.", "https://a..com", "https://a*.com",
		"https://*.*.com", "https://a.com:0", "https://a.com:65536", "https://a.com:08",
		"https://a.com:x", "https://exa\u200bmple.com", "https://a.com\\", "https://" + strings.Repeat("a", 600),
	} {
		if src, err := ParseSource(s); err == nil {
			t.Errorf("ParseSource(%q) = %+v, want an error", s, src)
		}
	}
}

func TestCoversIsBoundedByAllowedHosts(t *testing.T) {
	p := &Policy{AllowedHosts: []string{"api.example.com", "*.cdn.example.org", "Static.Example.net"}}
	for _, c := range []struct {
		source string
		ok     bool
	}{
		{"https://api.example.com", true},
		{"HTTPS://API.example.com:8443/v1", true},
		{"wss://api.example.com", true},
		{"http://api.example.com:*", true},
		{"https://static.example.net", true},
		{"https://example.com", false},
		{"https://evil.api.example.com", false},
		{"https://*.api.example.com", false},
		{"https://x.cdn.example.org", true},
		{"https://*.cdn.example.org", true},
		{"https://*.a.cdn.example.org", true},
		{"https://cdn.example.org", false},
		{"https://*.example.org", false},
		{"https://*", false},
		{"http://localhost:3000", false},
		{"http://127.0.0.1", false},
		{"http://10.0.0.1", false},
	} {
		src, err := ParseSource(c.source)
		if err != nil {
			t.Fatalf("ParseSource(%q): %v", c.source, err)
		}
		err = p.Covers(src)
		if (err == nil) != c.ok {
			t.Errorf("Covers(%q) = %v, want ok=%v", c.source, err, c.ok)
		}
		if err != nil && !errors.Is(err, ErrNotGranted) {
			t.Errorf("Covers(%q) = %v, not ErrNotGranted", c.source, err)
		}
	}

	any := &Policy{AllowedHosts: []string{"*"}}
	for _, s := range []string{"https://anything.example", "https://*.example.com"} {
		src, _ := ParseSource(s)
		if err := any.Covers(src); err != nil {
			t.Errorf(`allowed_hosts ["*"]: Covers(%q) = %v`, s, err)
		}
	}
	for _, s := range []string{"https://*", "http://localhost", "http://192.168.1.1"} {
		src, _ := ParseSource(s)
		if err := any.Covers(src); err == nil {
			t.Errorf(`allowed_hosts ["*"] without allow_private_network: Covers(%q) passes`, s)
		}
	}
	private := &Policy{AllowedHosts: []string{"*", "localhost"}, AllowPrivate: true}
	for _, s := range []string{"https://*", "http://localhost:8080", "http://192.168.1.1"} {
		src, _ := ParseSource(s)
		if err := private.Covers(src); err != nil {
			t.Errorf("with allow_private_network: Covers(%q) = %v", s, err)
		}
	}
}
