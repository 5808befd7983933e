package host_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"
)

// TestHTTPBehindALocalReverseProxy: a reverse proxy on the same machine,
// on another loopback port, forwards its own Host (as nginx's
// "proxy_set_header Host $host" and HAProxy do); the replica serves it. A
// Host no DNS rebinding could produce is all the check is there for.
func TestHTTPBehindALocalReverseProxy(t *testing.T) {
	endpoint, _ := httpHost(t, helloConfig)
	target, _ := url.Parse(endpoint)
	target.Path = ""
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.FlushInterval = -1 // SSE streams go through as they come
	front := httptest.NewServer(proxy)
	t.Cleanup(front.Close)

	cs := connectHTTP(t, front.URL+"/mcp", "2025-11-25")
	if _, text := callText(t, cs, "echo", map[string]any{"text": "through the proxy"}); text != "through the proxy" {
		t.Errorf("echo through the proxy = %q", text)
	}

	port := strings.TrimPrefix(front.URL, "http://127.0.0.1:")
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	for _, tc := range []struct {
		name, host, origin string
		want               int
	}{
		{"127.0.0.1 at another port", "127.0.0.1:" + port, "", http.StatusOK},
		{"localhost at another port", "localhost:" + port, "", http.StatusOK},
		{"[::1] at another port", "[::1]:" + port, "", http.StatusOK},
		{"localhost without a port", "localhost", "", http.StatusOK},
		{"a name DNS rebinding forges", "evil.example:" + port, "", http.StatusForbidden},
		{"a loopback look-alike name", "127.0.0.1.evil.example", "", http.StatusForbidden},
		{"Origin of another port (unchanged)", "127.0.0.1:" + port, "http://127.0.0.1:" + port, http.StatusForbidden},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest("POST", endpoint, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Host = tc.host
			if tc.origin != "" {
				req.Header.Set("Origin", tc.origin)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Errorf("Host %q: status = %d, want %d (%s)", tc.host, resp.StatusCode, tc.want, b)
			}
		})
	}
}
