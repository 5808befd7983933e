package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/internal/testutil"
)

// profilesConfig serves two hello plugins, a_* and b_*, and two profiles
// with different tools: alpha (plugin a whole) and beta (some of b's
// tools, one renamed, the other prefixed).
const profilesConfig = `
[server]
watch = false
%s

[[plugin]]
name = "a"
path = "{hello}"
prefix = "a_"
config = { greeting = "Hi from a" }

[[plugin]]
name = "b"
path = "{hello}"
prefix = "b_"
config = { greeting = "Hi from b" }

[[profile]]
name = "alpha"
plugins = ["a"]

[[profile]]
name = "beta"
tools = ["b_e*", "b_greet"]
rename = { b_greet = "welcome" }
prefix = "x_"
`

func profileTools(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	var names []string
	for tool, err := range cs.Tools(t.Context(), nil) {
		if err != nil {
			t.Fatalf("tools/list: %v", err)
		}
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	return names
}

func TestProfilesServedOverHTTP(t *testing.T) {
	for _, tc := range []struct{ name, server, version string }{
		{"stateful", "", "2025-11-25"},
		{"stateless", "stateless = true", "2026-07-28"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			endpoint, _ := httpHost(t, strings.Replace(profilesConfig, "%s", tc.server, 1))
			all := connectHTTP(t, endpoint, tc.version)
			alpha := connectHTTP(t, endpoint+"/alpha", tc.version)
			beta := connectHTTP(t, endpoint+"/beta", tc.version)

			if got, want := profileTools(t, all), []string{"a_add", "a_echo", "a_fail", "a_greet", "b_add", "b_echo", "b_fail", "b_greet"}; !slices.Equal(got, want) {
				t.Errorf("/mcp tools = %v, want %v", got, want)
			}
			if got, want := profileTools(t, alpha), []string{"a_add", "a_echo", "a_fail", "a_greet"}; !slices.Equal(got, want) {
				t.Errorf("/mcp/alpha tools = %v, want %v", got, want)
			}
			if got, want := profileTools(t, beta), []string{"welcome", "x_b_echo"}; !slices.Equal(got, want) {
				t.Errorf("/mcp/beta tools = %v, want %v", got, want)
			}

			// The renamed and prefixed tools answer by their new names
			// only, from the plugin that offers them.
			if _, text := callText(t, beta, "welcome", map[string]any{"name": "Ann"}); !strings.Contains(text, "Hi from b") {
				t.Errorf("beta welcome = %q, want plugin b's greeting", text)
			}
			if _, text := callText(t, beta, "x_b_echo", map[string]any{"text": "ping"}); text != "ping" {
				t.Errorf("beta x_b_echo = %q", text)
			}
			for _, name := range []string{"b_greet", "b_echo", "a_echo", "b_add"} {
				_, err := beta.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: map[string]any{"text": "x", "name": "x"}})
				if err == nil || !strings.Contains(err.Error(), "unknown tool") {
					t.Errorf("beta %s: err = %v, want unknown tool", name, err)
				}
			}
			if _, text := callText(t, alpha, "a_greet", map[string]any{"name": "Bo"}); !strings.Contains(text, "Hi from a") {
				t.Errorf("alpha a_greet = %q", text)
			}
			// The schema is checked through a profile as through /mcp.
			res, err := beta.CallTool(t.Context(), &mcp.CallToolParams{Name: "x_b_echo", Arguments: map[string]any{"nope": 1}})
			if err == nil && (res == nil || !res.IsError) {
				t.Errorf("x_b_echo without its required argument was not refused: %+v", res)
			}

			// An unknown profile: 404 and a JSON-RPC error naming it.
			resp, err := http.Post(endpoint+"/gamma", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			var msg struct {
				Error struct {
					Code    int64  `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			if resp.StatusCode != http.StatusNotFound || json.Unmarshal(body, &msg) != nil || !strings.Contains(msg.Error.Message, `unknown profile "gamma"`) {
				t.Errorf("POST /mcp/gamma: %d %s, want 404 naming the profile", resp.StatusCode, body)
			}
		})
	}
}

// stdioProfile connects a client to h's profile over ServeStdioProfile;
// changed receives a value for each tools/list_changed it is sent.
func stdioProfile(t *testing.T, h *host.Host, profile string, changed chan<- string) *mcp.ClientSession {
	t.Helper()
	clientR, serverW := io.Pipe()
	serverR, clientW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- h.ServeStdioProfile(context.Background(), profile, serverR, serverW, time.Second)
		serverW.Close()
	}()
	client := mcp.NewClient(&mcp.Implementation{Name: "profile-" + profile, Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select { // never block the client's connection
			case changed <- profile:
			default:
			}
		},
	})
	cs, err := client.Connect(t.Context(), &mcp.IOTransport{Reader: clientR, Writer: clientW}, nil)
	if err != nil {
		t.Fatalf("connect to profile %s: %v", profile, err)
	}
	t.Cleanup(func() {
		cs.Close()
		// The client's Close closes both pipes: the session may end on
		// a write to the closed one.
		if err := <-done; err != nil && !errors.Is(err, io.ErrClosedPipe) {
			t.Errorf("ServeStdioProfile %s: %v", profile, err)
		}
	})
	return cs
}

func TestProfileListChangedOnlyForTheProfileThatChanged(t *testing.T) {
	text := strings.NewReplacer("%s", "", "{hello}", testutil.GoPlugin(t, "plugins/hello")).Replace(profilesConfig)
	path := testutil.WriteConfig(t, text)
	cfg, err := host.LoadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	h, err := host.New(t.Context(), cfg, host.Options{Logger: hclog.New(&hclog.LoggerOptions{Level: hclog.Debug, Output: logs})})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := h.Close(context.Background()); err != nil {
			t.Errorf("Close: %v", err)
		}
		if t.Failed() {
			t.Logf("host log:\n%s", logs.String())
		}
	})
	alphaChg, betaChg := make(chan string, 10), make(chan string, 10)
	alpha := stdioProfile(t, h, "alpha", alphaChg)
	beta := stdioProfile(t, h, "beta", betaChg)
	if got := profileTools(t, beta); !slices.Equal(got, []string{"welcome", "x_b_echo"}) {
		t.Fatalf("beta tools = %v", got)
	}

	// Rename beta's tool: beta hears of it, alpha does not.
	if err := os.WriteFile(path, []byte(strings.Replace(text, `b_greet = "welcome"`, `b_greet = "hello_there"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := h.Reload(t.Context()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-betaChg:
	case <-time.After(20 * time.Second):
		t.Fatal("beta got no tools/list_changed after its rename changed")
	}
	if got := profileTools(t, beta); !slices.Equal(got, []string{"hello_there", "x_b_echo"}) {
		t.Errorf("beta tools after reload = %v", got)
	}
	if _, text := callText(t, beta, "hello_there", map[string]any{"name": "Cy"}); !strings.Contains(text, "Hi from b") {
		t.Errorf("hello_there = %q", text)
	}
	// Absence is checked after a while: a late notification could only
	// make this pass wrongly, never fail wrongly.
	select {
	case <-alphaChg:
		t.Error("alpha got tools/list_changed for a reload that changed nothing it shows")
	case <-time.After(300 * time.Millisecond):
	}
	if got := profileTools(t, alpha); !slices.Equal(got, []string{"a_add", "a_echo", "a_fail", "a_greet"}) {
		t.Errorf("alpha tools = %v", got)
	}

	// A profile the reload removes ends its stdio session; one that does
	// not exist is refused.
	if err := h.ServeStdioProfile(t.Context(), "nope", strings.NewReader(""), io.Discard, time.Second); err == nil || !strings.Contains(err.Error(), `unknown profile "nope"`) {
		t.Errorf("ServeStdioProfile(nope) = %v, want unknown profile", err)
	}
}

func TestProfileScopesWithAuth(t *testing.T) {
	f := newAuthFixture(t, `
[[profile]]
name = "ops"
plugins = ["hello"]
scopes = ["ops"]

[[profile]]
name = "maths"
tools = ["add"]
rename = { add = "plus" }
`)
	connect := func(t *testing.T, path, scope string) (*mcp.ClientSession, error) {
		t.Helper()
		client := mcp.NewClient(&mcp.Implementation{Name: "profile-auth", Version: "1"}, nil)
		cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{
			Endpoint:   f.endpoint + path,
			HTTPClient: &http.Client{Transport: bearer{f.token(t, f.endpoint, scope, time.Hour), http.DefaultTransport}},
		}, nil)
		if err == nil {
			t.Cleanup(func() { cs.Close() })
		}
		return cs, err
	}

	// A token without the profile's scope gets nothing through it.
	if _, err := connect(t, "/ops", "mcp"); err == nil {
		t.Error("connected to /mcp/ops without its scope ops")
	}
	req, _ := http.NewRequest(http.MethodPost, f.endpoint+"/ops", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	req.Header.Set("Authorization", "Bearer "+f.token(t, f.endpoint, "mcp", time.Hour))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(resp.Header.Get("WWW-Authenticate"), "insufficient_scope") || !strings.Contains(resp.Header.Get("WWW-Authenticate"), "ops") {
		t.Errorf("POST /mcp/ops without scope ops: %d %q, want 403 insufficient_scope naming ops", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}

	// With it, the profile's tools, each still behind its own scopes.
	cs, err := connect(t, "/ops", "mcp ops")
	if err != nil {
		t.Fatal(err)
	}
	if got := profileTools(t, cs); !slices.Equal(got, []string{"echo", "fail", "greet"}) {
		t.Errorf("/mcp/ops tools without scope math = %v", got)
	}
	if _, text := callText(t, cs, "echo", map[string]any{"text": "via ops"}); text != "via ops" {
		t.Errorf("echo through ops = %q", text)
	}

	// A renamed tool keeps its plugin's tool scopes: hidden and refused
	// (403 before go-sdk) without math, served with it.
	cs, err = connect(t, "/maths", "mcp")
	if err != nil {
		t.Fatal(err)
	}
	if got := profileTools(t, cs); len(got) != 0 {
		t.Errorf("/mcp/maths tools without scope math = %v, want none", got)
	}
	if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "plus", Arguments: map[string]any{"a": 1, "b": 2}}); err == nil {
		t.Error("plus called without scope math")
	}
	cs, err = connect(t, "/maths", "mcp math")
	if err != nil {
		t.Fatal(err)
	}
	if res, text := callText(t, cs, "plus", map[string]any{"a": 1, "b": 2}); res.IsError || !strings.Contains(text, "3") {
		t.Errorf("plus with scope math = %q", text)
	}

	// The audit log names the profile of each call.
	data, err := os.ReadFile(f.auditFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"profile":"ops"`, `"profile":"maths"`} {
		if !strings.Contains(string(data), want) {
			t.Errorf("audit log has no %s:\n%s", want, data)
		}
	}
}
