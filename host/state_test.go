package host_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/internal/testutil"
)

// Tests of the state plugins keep per client session (state_get,
// state_set; ABI.md §7 "State that outlives an instance"), with the test
// plugin testdata/plugins/state and go-sdk clients.

// stateConfig is a config of two plugins of the state test plugin, "st"
// and "other"; extra goes into [server] and stKeys into st's table.
func stateConfig(t *testing.T, server, stKeys string) string {
	wasm := testutil.GoPlugin(t, "testdata/plugins/state")
	return fmt.Sprintf(`[server]
watch = false
%s
[[plugin]]
name = "st"
path = %q
timeout = "10s"
%s
[[plugin]]
name = "other"
path = %q
timeout = "10s"
prefix = "other_"
`, server, wasm, stKeys, wasm)
}

// stateHost is a host of cfgText served over Streamable HTTP; its config
// file is at path (for reloads).
type stateHost struct {
	host     *host.Host
	endpoint string
	path     string
	log      *syncBuffer
}

// newStateHost starts a host for cfgText and serves it over HTTP until the
// test ends.
func newStateHost(t *testing.T, cfgText string) *stateHost {
	t.Helper()
	path := testutil.WriteConfig(t, cfgText)
	h, logs := newHostFromFile(t, path)
	endpoint, _ := serveHTTPFor(t, h, 5*time.Second)
	return &stateHost{host: h, endpoint: endpoint, path: path, log: logs}
}

// stateCall calls tool with args and returns its text and isError.
func stateCall(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) (string, bool) {
	t.Helper()
	res, text := callText(t, cs, tool, args)
	return text, res.IsError
}

// wantState calls get of key and wants text.
func wantState(t *testing.T, cs *mcp.ClientSession, tool, key, want string) {
	t.Helper()
	if got, isErr := stateCall(t, cs, tool, map[string]any{"key": key}); got != want || isErr {
		t.Errorf("%s %q = %q (isError %v), want %q", tool, key, got, isErr, want)
	}
}

// put stores value under key and fails the test unless the host took it.
func put(t *testing.T, cs *mcp.ClientSession, tool, key string, value any) {
	t.Helper()
	if got, isErr := stateCall(t, cs, tool, map[string]any{"key": key, "value": value}); got != "ok" || isErr {
		t.Fatalf("%s %q: %q (isError %v)", tool, key, got, isErr)
	}
}

// TestStateIsPerSessionAndPlugin: two stateful HTTP sessions each see only
// their own value under one key, a third sees none, and another plugin
// (the same module under another name) sees none in the same session.
func TestStateIsPerSessionAndPlugin(t *testing.T) {
	s := newStateHost(t, stateConfig(t, "", ""))
	a := connectHTTP(t, s.endpoint, "2025-11-25")
	b := connectHTTP(t, s.endpoint, "2025-11-25")
	put(t, a, "put", "k", "from a")
	put(t, b, "put", "k", map[string]any{"from": "b"})
	wantState(t, a, "get", "k", `"from a"`)
	wantState(t, b, "get", "k", `{"from":"b"}`)
	wantState(t, a, "other_get", "k", "unset")
	wantState(t, connectHTTP(t, s.endpoint, "2025-11-25"), "get", "k", "unset")

	put(t, a, "put", "k", nil) // null deletes
	wantState(t, a, "get", "k", "unset")
	wantState(t, b, "get", "k", `{"from":"b"}`)
	put(t, b, "del", "k", nil)
	wantState(t, b, "get", "k", "unset")
	if n, bytes := s.host.StateUsage(); n != 0 || bytes != 0 {
		t.Errorf("after deleting every key: %d scopes, %d bytes", n, bytes)
	}
}

// TestStateOutlivesInstancesAndReloads: a value stays after the instance
// that stored it traps (the next call runs on a new instance) and after a
// reload that builds a new generation of the plugin; it is dropped when
// the plugin leaves the config, and when state_kb becomes 0.
func TestStateOutlivesInstancesAndReloads(t *testing.T) {
	cfgText := stateConfig(t, "", "")
	s := newStateHost(t, cfgText)
	cs := connectHTTP(t, s.endpoint, "2025-11-25")
	put(t, cs, "put", "k", 42)
	first, _ := stateCall(t, cs, "instance", nil)
	if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "trap"}); err == nil || !strings.Contains(err.Error(), "out of bounds memory access") {
		t.Fatalf("trap: %v, want the trap's error", err)
	}
	if second, _ := stateCall(t, cs, "instance", nil); second == first {
		t.Fatalf("the instance after a trap is still %s", first)
	}
	wantState(t, cs, "get", "k", "42")

	reload := func(text string) {
		t.Helper()
		if err := os.WriteFile(s.path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := s.host.Reload(t.Context()); err != nil {
			t.Fatalf("Reload: %v", err)
		}
	}
	// A new timeout makes a new generation: new instances, the same state.
	reload(strings.Replace(cfgText, `timeout = "10s"`, `timeout = "9s"`, 1))
	if third, _ := stateCall(t, cs, "instance", nil); third == first {
		t.Fatalf("the instance after a reload is still %s", first)
	}
	wantState(t, cs, "get", "k", "42")
	put(t, cs, "other_put", "k", "other's")

	// st leaves the config: its state goes, other's stays.
	withoutSt := strings.Replace(cfgText, `name = "st"`, `name = "gone"`, 1)
	reload(withoutSt)
	if n, _ := s.host.StateUsage(); n != 1 {
		t.Errorf("after st left the config: %d scopes, want other's only", n)
	}
	reload(cfgText)
	wantState(t, cs, "get", "k", "unset")
	wantState(t, cs, "other_get", "k", `"other's"`)

	// other's state is turned off: it goes.
	reload(cfgText + "state_kb = 0\n")
	wantState(t, cs, "other_get", "k", "unset")
	if n, _ := s.host.StateUsage(); n != 0 {
		t.Errorf("after other's state_kb = 0: %d scopes, want none", n)
	}
}

// TestStateBoundsRefuseWithTheirNames: each bound refuses with an error
// naming it and its config key: the key's length, state_kb, [server]
// max_state_mb, state_kb = 0, and a payload that is not the documented
// object (unknown or miscased fields, not JSON, over 1 MiB).
func TestStateBoundsRefuseWithTheirNames(t *testing.T) {
	s := newStateHost(t, stateConfig(t, "max_state_mb = 1", "state_kb = 1024\n")+"state_kb = 1024\n") // st and other
	cs := connectHTTP(t, s.endpoint, "2025-11-25")
	refused := func(tool string, args map[string]any, want string) {
		t.Helper()
		got, isErr := stateCall(t, cs, tool, args)
		if !isErr || !strings.Contains(got, want) {
			t.Errorf("%s %.80v: %q (isError %v), want an error with %q", tool, args, got, isErr, want)
		}
	}
	refused("put", map[string]any{"key": strings.Repeat("k", 257), "value": 1}, "state_set: key of 257 bytes is too long (a key is 1 to 256 bytes of UTF-8)")
	refused("put", map[string]any{"key": "", "value": 1}, "state_set: key is empty")
	refused("get", map[string]any{"key": ""}, "state_get: key is empty")
	put(t, cs, "put", strings.Repeat("k", 256), 1)

	// 600 KiB fits st's state_kb = 1024, and the host's 1 MiB once.
	big := strings.Repeat("x", 600<<10)
	put(t, cs, "put", "big", big)
	refused("put", map[string]any{"key": "big2", "value": big}, `plugin "st" would keep`)
	refused("put", map[string]any{"key": "big2", "value": big}, "over its state_kb = 1024 (1048576 bytes of keys and values)")
	refused("other_put", map[string]any{"key": "big", "value": big}, "over [server] max_state_mb = 1 (1048576 bytes)")
	put(t, cs, "put", "big", nil)
	put(t, cs, "other_put", "big", big)

	for payload, want := range map[string]string{
		`{"key":"k","value":1,"ttl":5}`: `state_set: unknown field "ttl" in the payload (expected key, value, expect)`,
		`{"KEY":"k","value":1}`:         `state_set: unknown field "KEY"`,
		`{"value":1}`:                   "state_set: key is missing",
		`{"key":7}`:                     "state_set: key is not a string",
		`[1]`:                           "state_set: payload is not a JSON object",
		`{"key":"k","value":}`:          "state_set: payload is not a JSON object",
	} {
		if got := rawError(t, cs, "state_set", payload); !strings.Contains(got, want) {
			t.Errorf("state_set %s: %s, want an error with %q", payload, got, want)
		}
	}
	if got := rawError(t, cs, "state_get", `{"key":"k","value":1}`); !strings.Contains(got, `state_get: unknown field "value" in the payload (expected key)`) {
		t.Errorf("state_get with a value: %s", got)
	}
	huge := `{"key":"k","value":"` + strings.Repeat("x", 1<<20) + `"}`
	if got := rawError(t, cs, "state_set", huge); !strings.Contains(got, "exceeds 1048576") {
		t.Errorf("state_set of a payload over 1 MiB: %.200s", got)
	}
	if got, _ := stateCall(t, cs, "raw", map[string]any{"fn": "state_get", "payload": `{"key":"kkk"}`}); got != `{}` {
		t.Errorf("state_get of an unset key answers %s, want {}", got)
	}
	if got, _ := stateCall(t, cs, "raw", map[string]any{"fn": "state_get", "payload": `{"key":"` + strings.Repeat("k", 256) + `"}`}); got != `{"value":1}` {
		t.Errorf("state_get of a set key answers %s, want {\"value\":1}", got)
	}
}

// rawError calls the host function fn with payload (through the test
// plugin's raw) and returns the error the host answered ("" for none).
func rawError(t *testing.T, cs *mcp.ClientSession, fn, payload string) string {
	t.Helper()
	got, _ := stateCall(t, cs, "raw", map[string]any{"fn": fn, "payload": payload})
	var answer struct {
		Error string `json:"error"`
	}
	if err := json.Unmarshal([]byte(got), &answer); err != nil {
		t.Errorf("%s %.100s: answer %.200s is not JSON: %v", fn, payload, got, err)
	}
	return answer.Error
}

// TestStateOff: with state_kb = 0 a set is refused saying so, and a get
// finds nothing.
func TestStateOff(t *testing.T) {
	s := newStateHost(t, stateConfig(t, "", "state_kb = 0\n"))
	cs := connectHTTP(t, s.endpoint, "2025-11-25")
	got, isErr := stateCall(t, cs, "put", map[string]any{"key": "k", "value": 1})
	if want := `state_set: state is off for plugin "st" (state_kb = 0 in its [[plugin]] table)`; !isErr || !strings.Contains(got, want) {
		t.Errorf("put with state_kb = 0: %q, want %q", got, want)
	}
	wantState(t, cs, "get", "k", "unset")
	put(t, cs, "other_put", "k", 1) // other keeps the default
}

// TestStateOfEndedSessionsIsDropped: an HTTP session's state is dropped
// once the session ends (a DELETE) and the host sweeps; a stdio
// connection's when it closes.
func TestStateOfEndedSessionsIsDropped(t *testing.T) {
	s := newStateHost(t, stateConfig(t, "", ""))
	a := connectHTTP(t, s.endpoint, "2025-11-25")
	b := connectHTTP(t, s.endpoint, "2025-11-25")
	put(t, a, "put", "k", "a")
	put(t, b, "put", "k", "b")
	if err := a.Close(); err != nil { // DELETE
		t.Fatal(err)
	}
	// go-sdk ends the session when it answers the DELETE, or soon after;
	// wait for that (no other condition ends this loop but the test's
	// own deadline).
	for {
		s.host.SweepState()
		if n, _ := s.host.StateUsage(); n == 1 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	wantState(t, b, "get", "k", `"b"`)

	// stdio: the connection is the session.
	h, _ := newHost(t, stateConfig(t, "", ""))
	clientIn, serverOut := io.Pipe()
	serverIn, clientOut := io.Pipe()
	served := make(chan error, 1)
	go func() { served <- h.ServeStdio(context.Background(), serverIn, serverOut, 0) }()
	client := mcp.NewClient(&mcp.Implementation{Name: "stdio", Version: "1"}, nil)
	cs, err := client.Connect(t.Context(), &mcp.IOTransport{Reader: clientIn, Writer: clientOut}, nil)
	if err != nil {
		t.Fatal(err)
	}
	put(t, cs, "put", "k", "stdio")
	wantState(t, cs, "get", "k", `"stdio"`)
	if n, _ := h.StateUsage(); n != 1 {
		t.Errorf("stdio: %d scopes, want 1", n)
	}
	cs.Close()
	if err := <-served; err != nil {
		t.Errorf("ServeStdio: %v", err)
	}
	if n, bytes := h.StateUsage(); n != 0 || bytes != 0 {
		t.Errorf("after the stdio connection closed: %d scopes, %d bytes", n, bytes)
	}
}

// TestStatelessRequestsShareState: served stateless (2026-07-28), requests
// have no session: two clients see one scope per plugin.
func TestStatelessRequestsShareState(t *testing.T) {
	s := newStateHost(t, stateConfig(t, "stateless = true", ""))
	a := connectHTTP(t, s.endpoint, "2026-07-28")
	b := connectHTTP(t, s.endpoint, "2026-07-28")
	put(t, a, "put", "k", "shared")
	wantState(t, b, "get", "k", `"shared"`)
	wantState(t, b, "other_get", "k", "unset")
	s.host.SweepState() // the shared scope has no session to end
	wantState(t, a, "get", "k", `"shared"`)
}

// TestStateUnderConcurrentCalls (run with -race): sessions call at once,
// on several instances; each ends with only its own values, and the
// host's count of bytes is that of what is stored.
func TestStateUnderConcurrentCalls(t *testing.T) {
	s := newStateHost(t, stateConfig(t, "", "max_instances = 4\n"))
	const sessions, workers, rounds = 3, 4, 10
	var css []*mcp.ClientSession
	for range sessions {
		css = append(css, connectHTTP(t, s.endpoint, "2025-11-25"))
	}
	var wg sync.WaitGroup
	for i, cs := range css {
		for w := range workers {
			wg.Go(func() {
				for r := range rounds {
					key := fmt.Sprintf("w%d", w)
					value := fmt.Sprintf("s%d-w%d-r%d", i, w, r)
					res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "put", Arguments: map[string]any{"key": key, "value": value}})
					if err != nil || res.IsError {
						t.Errorf("put %s: %v %+v", key, err, res)
						return
					}
					// Every writer of "shared" in this session writes its own value.
					if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "put", Arguments: map[string]any{"key": "shared", "value": value}}); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
	}
	wg.Wait()
	var want int64
	for i, cs := range css {
		for w := range workers {
			value := fmt.Sprintf("s%d-w%d-r%d", i, w, rounds-1)
			wantState(t, cs, "get", fmt.Sprintf("w%d", w), `"`+value+`"`)
			want += int64(len("w0") + len(value) + 2)
		}
		got, _ := stateCall(t, cs, "get", map[string]any{"key": "shared"})
		var v string
		if err := json.Unmarshal([]byte(got), &v); err != nil || !strings.HasPrefix(v, fmt.Sprintf("s%d-", i)) {
			t.Errorf("session %d: shared = %s, want one of its own values", i, got)
		}
		want += int64(len("shared") + len(got))
	}
	if n, bytes := s.host.StateUsage(); n != sessions || bytes != want {
		t.Errorf("usage: %d scopes, %d bytes; want %d, %d", n, bytes, sessions, want)
	}
}

// TestUpdateStateLosesNoUpdate: calls of one session incrementing one
// counter at once, on up to four instances, through sdk.UpdateState (a
// conditional state_set, "expect"): every increment counts. A plain read
// then write would lose some (TestStateUnderConcurrentCalls shows the
// interleaving).
func TestUpdateStateLosesNoUpdate(t *testing.T) {
	s := newStateHost(t, stateConfig(t, "", "max_instances = 4\n"))
	cs := connectHTTP(t, s.endpoint, "2025-11-25")
	const workers, rounds = 4, 15
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for range rounds {
				res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "incr", Arguments: map[string]any{"key": "n"}})
				if err != nil || res.IsError {
					t.Errorf("incr: %v %+v", err, res)
					return
				}
			}
		})
	}
	wg.Wait()
	wantState(t, cs, "get", "n", fmt.Sprint(workers*rounds))
	// The condition itself, through the host function: a stale expect
	// changes nothing and says so; null expects the key to hold nothing.
	for _, tc := range []struct{ payload, want string }{
		{`{"key":"n","value":1,"expect":59}`, `{"changed":true}`},
		{`{"key":"n","value":1,"expect":null}`, `{"changed":true}`},
		{`{"key":"fresh","value":1,"expect":null}`, `{}`},
		{`{"key":"n","value":0,"expect":60}`, `{}`},
		{`{"key":"n","expect":0}`, `{}`},
		{`{"key":"n","value":1,"expect":{"bad"}}`, `"error"`},
	} {
		if got, _ := stateCall(t, cs, "raw", map[string]any{"fn": "state_set", "payload": tc.payload}); !strings.Contains(got, tc.want) {
			t.Errorf("state_set %s = %s, want %s", tc.payload, got, tc.want)
		}
	}
	wantState(t, cs, "get", "n", "unset")
	wantState(t, cs, "get", "fresh", "1")
}
