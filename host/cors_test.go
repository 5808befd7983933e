package host_test

import (
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/internal/testutil"
)

// corsRequest sends method to url with the given headers and returns the
// response (body read and closed).
func corsRequest(t *testing.T, method, url, body string, headers map[string]string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(b)
}

// TestCORSForAllowedOrigins: a page of an origin in allowed_origins gets
// its preflight answered (204, the methods, the MCP request headers it
// asked for and nothing else) and Access-Control-Allow-Origin on its
// requests, with Mcp-Session-Id exposed; a foreign origin's preflight and
// request are refused (403) and logged at warn, naming it.
func TestCORSForAllowedOrigins(t *testing.T) {
	const app = "http://app.example:8080"
	h, logs := newHost(t, "[server]\nwatch = false\nallowed_origins = [\""+app+"\"]\n[[plugin]]\nname = \"hello\"\npath = \""+testutil.GoPlugin(t, "plugins/hello")+"\"\n")
	endpoint, _ := serveHTTPFor(t, h, time.Second)

	resp, _ := corsRequest(t, http.MethodOptions, endpoint, "", map[string]string{
		"Origin": app, "Access-Control-Request-Method": "POST",
		"Access-Control-Request-Headers": "content-type,mcp-protocol-version,mcp-session-id,authorization,mcp-method,mcp-name,last-event-id,x-evil",
	})
	allowHeaders := resp.Header.Get("Access-Control-Allow-Headers")
	if resp.StatusCode != http.StatusNoContent || resp.Header.Get("Access-Control-Allow-Origin") != app ||
		!strings.Contains(resp.Header.Get("Access-Control-Allow-Methods"), "POST") || !strings.Contains(resp.Header.Get("Access-Control-Allow-Methods"), "DELETE") ||
		allowHeaders != "content-type, mcp-protocol-version, mcp-session-id, authorization, mcp-method, mcp-name, last-event-id" {
		t.Errorf("preflight from %s: %d, headers %v", app, resp.StatusCode, resp.Header)
	}

	resp, body := corsRequest(t, http.MethodPost, endpoint, initializeMessage, map[string]string{
		"Origin": app, "Content-Type": "application/json", "Accept": "application/json, text/event-stream",
	})
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Access-Control-Allow-Origin") != app || resp.Header.Get("Mcp-Session-Id") == "" ||
		!strings.Contains(resp.Header.Get("Access-Control-Expose-Headers"), "Mcp-Session-Id") || !strings.Contains(resp.Header.Values("Vary")[0]+strings.Join(resp.Header.Values("Vary"), ","), "Origin") {
		t.Errorf("initialize from %s: %d %v\n%s", app, resp.StatusCode, resp.Header, body)
	}

	// A page of another origin: refused, its preflight too, and logged.
	for _, method := range []string{http.MethodOptions, http.MethodPost} {
		resp, body := corsRequest(t, method, endpoint, initializeMessage, map[string]string{
			"Origin": "http://evil.example", "Access-Control-Request-Method": "POST", "Content-Type": "application/json",
		})
		if resp.StatusCode != http.StatusForbidden || resp.Header.Get("Access-Control-Allow-Origin") != "" || !strings.Contains(body, `Origin "http://evil.example" is not allowed`) {
			t.Errorf("%s from a foreign origin: %d %v %s", method, resp.StatusCode, resp.Header, body)
		}
	}
	if !regexp.MustCompile(`\[WARN\] .*origin that is not allowed refused.*origin=http://evil.example`).MatchString(logs.String()) {
		t.Errorf("the refused origin is not logged at warn:\n%s", logs.String())
	}
	// Without an Origin (not a browser) nothing changes: no CORS headers.
	resp, _ = corsRequest(t, http.MethodPost, endpoint, initializeMessage, map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"})
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("initialize without Origin: %d %v", resp.StatusCode, resp.Header)
	}
}

// TestCORSWithAuth: with [server.auth], an allowed origin's preflight is
// answered without a token (browsers send none), its 401 carries
// Access-Control-Allow-Origin and exposes WWW-Authenticate, so the page
// can read where the metadata is, and the metadata is readable from it.
func TestCORSWithAuth(t *testing.T) {
	const app = "http://app.example:8080"
	f := newAuthFixture(t, `allowed_origins = ["`+app+`"]`)
	resp, _ := corsRequest(t, http.MethodOptions, f.endpoint, "", map[string]string{
		"Origin": app, "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "authorization,content-type",
	})
	if resp.StatusCode != http.StatusNoContent || resp.Header.Get("Access-Control-Allow-Headers") != "authorization, content-type" {
		t.Errorf("preflight with auth on: %d %v", resp.StatusCode, resp.Header)
	}
	resp, body := corsRequest(t, http.MethodPost, f.endpoint, initializeMessage, map[string]string{
		"Origin": app, "Content-Type": "application/json", "Accept": "application/json, text/event-stream",
	})
	challenge := resp.Header.Get("WWW-Authenticate")
	if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("Access-Control-Allow-Origin") != app ||
		!strings.Contains(resp.Header.Get("Access-Control-Expose-Headers"), "WWW-Authenticate") || challenge == "" {
		t.Fatalf("initialize without a token from %s: %d %v %s", app, resp.StatusCode, resp.Header, body)
	}
	metadata := regexp.MustCompile(`resource_metadata="([^"]+)"`).FindStringSubmatch(challenge)
	if metadata == nil {
		t.Fatalf("no resource_metadata in %q", challenge)
	}
	resp, body = corsRequest(t, http.MethodGet, metadata[1], "", map[string]string{"Origin": app})
	if resp.StatusCode != http.StatusOK || (resp.Header.Get("Access-Control-Allow-Origin") != app && resp.Header.Get("Access-Control-Allow-Origin") != "*") ||
		!strings.Contains(body, `"resource"`) {
		t.Errorf("metadata from %s: %d %v %s", app, resp.StatusCode, resp.Header, body)
	}
}
