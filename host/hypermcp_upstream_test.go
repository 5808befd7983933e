package host_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/internal/testutil"
)

// The tests in this file serve hyper-mcp's own example plugins, the .wasm
// files its repository committed (testdata/hyper-mcp/README.md), not
// reproductions of them.

// upstreamPlugin returns the path of one of hyper-mcp's committed plugins.
func upstreamPlugin(t *testing.T, file string) string {
	return filepath.Join(testutil.RepoRoot(t), "testdata", "hyper-mcp", file)
}

// TestUpstreamTimePlugin: hyper-mcp's v1 time plugin (describe/call) works.
func TestUpstreamTimePlugin(t *testing.T) {
	h, _ := newHost(t, `
[server]
watch = false
lock_file = "off"
[[plugin]]
name = "time"
path = "`+upstreamPlugin(t, "time.wasm")+`"
`)
	cs := connect(t, h, nil, "2025-11-25")
	res, text := callText(t, cs, "time", map[string]any{"name": "parse_time", "time_rfc2822": "Mon, 15 Jan 2024 18:30:45 +0000"})
	if res.IsError || !strings.Contains(text, `"utc_time":"1705343445"`) {
		t.Errorf("parse_time = %q (isError %v)", text, res.IsError)
	}
}

// TestUpstreamToolListChanged: hyper-mcp's tool_list_changed plugin keeps a
// counter in its instance and adds a tool each time add_tool is called,
// then calls notify_tool_list_changed. As under hyper-mcp, the count
// survives from call to call, and the tools the live instance lists reach
// the client.
func TestUpstreamToolListChanged(t *testing.T) {
	h, _ := newHost(t, `
[server]
watch = false
lock_file = "off"
[[plugin]]
name = "tlc"
path = "`+upstreamPlugin(t, "tool_list_changed.wasm")+`"
`)
	changed := make(chan struct{}, 16)
	cs := connect(t, h, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	}, "2025-11-25")

	for n := 1; n <= 2; n++ {
		_, text := callText(t, cs, "add_tool", map[string]any{})
		if want := fmt.Sprintf(`"tool_count":%d`, n); !strings.Contains(text, want) {
			t.Fatalf("add_tool #%d = %q, want %s: the plugin's state did not survive between calls", n, text, want)
		}
		waitToolListed(t, cs, changed, fmt.Sprintf("tool_%d", n))
	}
	if res, text := callText(t, cs, "tool_1", map[string]any{}); res.IsError || !strings.Contains(text, "Called dynamically created tool: tool_1") {
		t.Errorf("tool_1 = %q (isError %v)", text, res.IsError)
	}
	if res, text := callText(t, cs, "tool_2", map[string]any{}); res.IsError || !strings.Contains(text, "tool_2") {
		t.Errorf("tool_2 = %q (isError %v)", text, res.IsError)
	}
}

// waitToolListed waits for list_changed notifications until tools/list
// holds name. It fails only when none comes for a long time.
func waitToolListed(t *testing.T, cs *mcp.ClientSession, changed <-chan struct{}, name string) {
	t.Helper()
	for {
		res, err := cs.ListTools(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tool := range res.Tools {
			names = append(names, tool.Name)
		}
		if slices.Contains(names, name) {
			return
		}
		select {
		case <-changed:
		case <-time.After(time.Minute):
			t.Fatalf("tool %s never listed; tools: %v", name, names)
		}
	}
}

// upstreamSite is a stand-in for www.timezoneconverter.com, the site
// hyper-mcp's rstime plugin reads: an HTTPS server on loopback with a
// certificate for that name, a network that resolves the name to a public
// test address and routes it there, and the roots that trust it.
type upstreamSite struct {
	network *host.Network
	mu      sync.Mutex
	dials   []string
	paths   []string
}

func newUpstreamSite(t *testing.T, resolveTo string) *upstreamSite {
	s := &upstreamSite{}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "www.timezoneconverter.com"},
		DNSNames:              []string{"www.timezoneconverter.com"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.paths = append(s.paths, r.URL.RequestURI())
		s.mu.Unlock()
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, "<html>zone %s</html>", r.URL.Query().Get("tz"))
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	roots := x509.NewCertPool()
	roots.AddCert(cert)
	s.network = &host.Network{
		Resolve: func(_ context.Context, name string) ([]netip.Addr, error) {
			if name == "www.timezoneconverter.com" {
				return []netip.Addr{netip.MustParseAddr(resolveTo)}, nil
			}
			return nil, fmt.Errorf("no such host %q", name)
		},
		Dial: func(ctx context.Context, nw, address string) (net.Conn, error) {
			s.mu.Lock()
			s.dials = append(s.dials, address)
			s.mu.Unlock()
			return (&net.Dialer{}).DialContext(ctx, nw, net.JoinHostPort("127.0.0.1", port))
		},
		RootCAs: roots,
	}
	return s
}

// TestUpstreamHTTPRequestGoesThroughEgress: hyper-mcp's rstime plugin reads
// its resource with Extism's built-in http_request. It reaches the site
// when mcphost's config grants the host, through mcphost's egress checks:
// refused without the grant, and refused when the name resolves to a
// private address — in both cases before any connection is made.
func TestUpstreamHTTPRequestGoesThroughEgress(t *testing.T) {
	const uri = "https://www.timezoneconverter.com/cgi-bin/zoneinfo?tz=UTC"
	for _, tc := range []struct {
		name, grant, resolveTo string
		ok                     bool
		why                    string
	}{
		{"granted", `allowed_hosts = ["www.timezoneconverter.com"]`, "203.0.113.7", true, ""},
		{"not granted", ``, "203.0.113.7", false, "not in allowed_hosts"},
		{"granted but resolving to loopback", `allowed_hosts = ["*.timezoneconverter.com"]`, "127.0.0.1", false, "resolves to 127.0.0.1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			site := newUpstreamSite(t, tc.resolveTo)
			h := newSiteHost(t, site, `
[[plugin]]
name = "rstime"
path = "`+upstreamPlugin(t, "rstime.wasm")+`"
`+tc.grant+`
`)
			cs := connect(t, h, nil, "2025-11-25")
			res, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: uri})
			site.mu.Lock()
			dials, paths := len(site.dials), slices.Clone(site.paths)
			site.mu.Unlock()
			if !tc.ok {
				if err == nil || !strings.Contains(err.Error(), tc.why) {
					t.Errorf("read = %+v, %v; want an error saying %q", res, err, tc.why)
				}
				if dials != 0 {
					t.Errorf("%d connections made for a refused request", dials)
				}
				return
			}
			if err != nil {
				t.Fatalf("read %s: %v", uri, err)
			}
			if len(res.Contents) != 1 {
				t.Fatalf("contents = %+v", res.Contents)
			}
			if c := res.Contents[0]; string(c.Blob) != "<html>zone UTC</html>" {
				t.Errorf("content = %+v (text %q, blob %q)", c, c.Text, c.Blob)
			}
			if !slices.Equal(paths, []string{"/cgi-bin/zoneinfo?tz=UTC"}) {
				t.Errorf("site saw %v", paths)
			}
		})
	}
}

// newSiteHost starts a host for cfgText whose plugins reach the network
// through site's.
func newSiteHost(t *testing.T, site *upstreamSite, cfgText string) *host.Host {
	cfg, err := host.LoadConfig(testutil.WriteConfig(t, "[server]\nwatch = false\nlock_file = \"off\"\n"+cfgText))
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	h, err := host.New(t.Context(), cfg, host.Options{Network: site.network, Logger: hclog.New(&hclog.LoggerOptions{Level: hclog.Debug, Output: logs})})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		h.Close(context.Background())
		if t.Failed() {
			t.Logf("host log:\n%s", logs.String())
		}
	})
	return h
}

// TestUpstreamHyperMCPNaming: with naming = "hyper-mcp", rstime's tools
// and prompts are "rstime-{name}" and its template carries "rstime" as the
// first segment of its path, as hyper-mcp names them; the plugin is called
// with its own names and URIs (its complete compares them exactly).
func TestUpstreamHyperMCPNaming(t *testing.T) {
	site := newUpstreamSite(t, "203.0.113.7")
	h := newSiteHost(t, site, `
[[plugin]]
name = "rstime"
path = "`+upstreamPlugin(t, "rstime.wasm")+`"
naming = "hyper-mcp"
allowed_hosts = ["www.timezoneconverter.com"]
`)
	cs := connect(t, h, nil, "2025-11-25")
	const template = "https://www.timezoneconverter.com/rstime/cgi-bin/zoneinfo?tz={timezone}"

	tools, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"rstime-get_time", "rstime-parse_time"}) {
		t.Errorf("tools = %v", names)
	}
	if res, text := callText(t, cs, "rstime-parse_time", map[string]any{"time": "Mon, 15 Jan 2024 18:30:45 +0000"}); res.IsError || !strings.Contains(text, "1705343445") {
		t.Errorf("rstime-parse_time = %q (isError %v)", text, res.IsError)
	}

	prompt, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "rstime-get_time_with_timezone", Arguments: map[string]string{"timezone": "Asia/Tokyo"}})
	if err != nil {
		t.Fatal(err)
	}
	if tc, ok := prompt.Messages[0].Content.(*mcp.TextContent); !ok || tc.Text != "Please get the time for the timezone Asia/Tokyo" {
		t.Errorf("prompt = %+v", prompt.Messages[0].Content)
	}

	templates, err := cs.ListResourceTemplates(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(templates.ResourceTemplates) != 1 || templates.ResourceTemplates[0].URITemplate != template {
		t.Errorf("templates = %+v", templates.ResourceTemplates)
	}
	res, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "https://www.timezoneconverter.com/rstime/cgi-bin/zoneinfo?tz=UTC"})
	if err != nil {
		t.Fatal(err)
	}
	site.mu.Lock()
	paths := slices.Clone(site.paths)
	site.mu.Unlock()
	if len(res.Contents) != 1 || string(res.Contents[0].Blob) != "<html>zone UTC</html>" || !slices.Equal(paths, []string{"/cgi-bin/zoneinfo?tz=UTC"}) {
		t.Errorf("read = %+v; site saw %v", res.Contents, paths)
	}

	for _, ref := range []*mcp.CompleteReference{
		{Type: "ref/prompt", Name: "rstime-get_time_with_timezone"},
		{Type: "ref/resource", URI: template},
	} {
		c, err := cs.Complete(t.Context(), &mcp.CompleteParams{Ref: ref, Argument: mcp.CompleteParamsArgument{Name: "timezone", Value: "tokyo"}})
		if err != nil {
			t.Errorf("complete %+v: %v", ref, err)
			continue
		}
		if !slices.Contains(c.Completion.Values, "Asia/Tokyo") {
			t.Errorf("complete %+v = %v", ref, c.Completion.Values)
		}
	}
}
