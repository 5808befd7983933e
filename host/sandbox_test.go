package host_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/internal/hostfn"
	"github.com/mcphost/mcphost/internal/testutil"
)

// TestFilesAreDeniedUnlessGranted: without allowed_paths the plugin reads
// nothing; with a granted directory it reads inside it and nothing outside,
// whether by "..", an absolute path or a symlink.
func TestFilesAreDeniedUnlessGranted(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "secret.txt")
	os.WriteFile(secret, []byte("TOP SECRET"), 0o600)
	granted := t.TempDir()
	os.WriteFile(filepath.Join(granted, "hello.txt"), []byte("hello from the host"), 0o644)
	if err := os.Symlink(secret, filepath.Join(granted, "escape")); err != nil {
		t.Fatal(err)
	}
	os.Mkdir(filepath.Join(granted, "sub"), 0o755)

	read := func(s *started, path string) (string, bool) {
		res, text := callText(t, s.session, "read_file", map[string]any{"text": path})
		return text, !res.IsError
	}
	t.Run("no grant", func(t *testing.T) {
		s := start(t, faultyConfig)
		for _, path := range []string{secret, "/etc/passwd", "/", "."} {
			if text, ok := read(s, path); ok || strings.Contains(text, "SECRET") || strings.Contains(text, "root:") {
				t.Errorf("read_file(%q) without a grant = %q", path, text)
			}
		}
	})
	t.Run("granted directory", func(t *testing.T) {
		s := start(t, faultyConfig+fmt.Sprintf("allowed_paths = { %q = \"/data\" }\n", granted))
		if text, ok := read(s, "/data/hello.txt"); !ok || text != "hello from the host" {
			t.Errorf("read of a granted file = %q, %v", text, ok)
		}
		_, listing := callText(t, s.session, "list_dir", map[string]any{"text": "/data"})
		if !strings.Contains(listing, "hello.txt") {
			t.Errorf("list_dir(/data) = %q", listing)
		}
		for _, path := range []string{
			"/data/../" + strings.TrimPrefix(secret, "/"), // lexical escape
			"/data/sub/../../etc/passwd",
			"/data/escape", // symlink to a file outside the grant
			secret,         // the host path itself
			"/etc/passwd",
		} {
			if text, ok := read(s, path); ok || strings.Contains(text, "SECRET") || strings.Contains(text, "root:") {
				t.Errorf("read_file(%q) escaped the granted directory: %q", path, text)
			}
		}
		if _, text := callText(t, s.session, "echo", map[string]any{"text": "x"}); text != "x" {
			t.Error("plugin broken after refused reads")
		}
	})
}

func TestEnvironmentIsDeniedUnlessGranted(t *testing.T) {
	t.Setenv("MCPHOST_TEST_GRANTED", "granted-value")
	t.Setenv("MCPHOST_TEST_SECRET", "secret-value")
	s := start(t, faultyConfig)
	if _, text := callText(t, s.session, "getenv", map[string]any{"text": "MCPHOST_TEST_SECRET"}); strings.Contains(text, "value") {
		t.Errorf("plugin without env grant sees %q", text)
	}
	s = start(t, faultyConfig+"env = [\"MCPHOST_TEST_GRANTED\"]\n")
	_, text := callText(t, s.session, "getenv", map[string]any{"text": "MCPHOST_TEST_GRANTED"})
	if !strings.HasPrefix(text, "granted-value|") || strings.Contains(text, "secret-value") {
		t.Errorf("plugin with env = [MCPHOST_TEST_GRANTED] sees %q", text)
	}
}

func TestSHA256PinRefusesAnotherFile(t *testing.T) {
	wasm := testutil.GoPlugin(t, "plugins/hello")
	b, _ := os.ReadFile(wasm)
	sum := sha256.Sum256(b)
	good := hex.EncodeToString(sum[:])
	bad := strings.Repeat("ab", 32)
	for _, tc := range []struct {
		pin  string
		want string // "" for success
	}{{good, ""}, {strings.ToUpper(good), ""}, {bad, "sha256 mismatch"}} {
		cfg, err := host.LoadConfig(testutil.WriteConfig(t, fmt.Sprintf("[[plugin]]\nname = \"hello\"\npath = %q\nsha256 = %q\n", wasm, tc.pin)))
		if err != nil {
			t.Fatal(err)
		}
		h, err := host.New(context.Background(), cfg, host.Options{})
		if tc.want == "" {
			if err != nil {
				t.Errorf("pin %s: %v", tc.pin, err)
			} else {
				h.Close(context.Background())
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), good) || !strings.Contains(err.Error(), bad) {
			t.Errorf("pin %s: %v, want a mismatch naming both hashes", tc.pin, err)
		}
	}
}

func TestRateLimit(t *testing.T) {
	s := start(t, faultyConfig+"max_calls_per_second = 2\n")
	refused := 0
	for range 6 {
		_, err := s.session.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}})
		if err != nil {
			if !strings.Contains(err.Error(), "max_calls_per_second") {
				t.Errorf("refusal does not name the limit: %v", err)
			}
			refused++
		}
	}
	if refused == 0 || refused == 6 {
		t.Errorf("%d of 6 back-to-back calls refused at 2 calls/s, want some but not all", refused)
	}
}

func TestCircuitBreakerStopsCallingAFailingPlugin(t *testing.T) {
	cfg := faultyConfig + "breaker_failures = 3\nbreaker_cooldown = \"400ms\"\n"
	s := start(t, cfg)
	for range 3 {
		if _, err := s.session.CallTool(t.Context(), &mcp.CallToolParams{Name: "trap", Arguments: map[string]any{}}); err == nil {
			t.Fatal("trap succeeded")
		}
	}
	_, err := s.session.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}})
	if err == nil || !strings.Contains(err.Error(), "3 failed calls in a row") {
		t.Fatalf("call while the breaker is open = %v", err)
	}
	// Not a sleep-then-assert: the breaker opened before this sleep began,
	// so when it ends more than the configured 400 ms cooldown has passed
	// on the host's clock, however loaded the machine.
	time.Sleep(500 * time.Millisecond)
	afterFault(t, s) // closed again after the cooldown and a success
}

// TestNetworkIsDeniedUnlessGranted: a plugin reaches only the hosts its
// config allows, never the host's own networks unless that is granted too,
// and never through a redirect or a DNS answer to a forbidden address. The
// network is the test's: names resolve as it says, and every dial attempt
// is recorded — a refused address must be refused before any dial. The
// only real connections go to a test server on loopback.
func TestNetworkIsDeniedUnlessGranted(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/to-private":
			http.Redirect(w, r, "http://internal.test/secret", http.StatusFound)
		case "/to-metadata":
			http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusFound)
		default:
			w.Write([]byte("reached"))
		}
	}))
	defer srv.Close()
	_, srvPort, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))

	var mu sync.Mutex
	var dials []string
	network := &host.Network{
		Resolve: func(_ context.Context, name string) ([]netip.Addr, error) {
			switch name {
			case "public.test": // a public address, served by the test server
				return []netip.Addr{netip.MustParseAddr("203.0.113.7")}, nil
			case "evil.test": // DNS pointing at loopback
				return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
			case "internal.test":
				return []netip.Addr{netip.MustParseAddr("10.1.2.3")}, nil
			case "mixed.test": // one good address, one forbidden
				return []netip.Addr{netip.MustParseAddr("203.0.113.7"), netip.MustParseAddr("192.168.1.1")}, nil
			}
			return nil, fmt.Errorf("no such host %q", name)
		},
		Dial: func(ctx context.Context, nw, address string) (net.Conn, error) {
			mu.Lock()
			dials = append(dials, address)
			mu.Unlock()
			host, _, _ := net.SplitHostPort(address)
			switch host {
			case "203.0.113.7", "127.0.0.1": // both served by the loopback test server
				return (&net.Dialer{}).DialContext(ctx, nw, net.JoinHostPort("127.0.0.1", srvPort))
			}
			return nil, fmt.Errorf("test network: no route to %s", address)
		},
	}
	port := ":" + srvPort
	for _, tc := range []struct {
		name, grant, url string
		ok               bool
		why              string
		dials            int
	}{
		{"no grant", "", "http://public.test" + port + "/", false, "not in allowed_hosts", 0},
		{"granted public host", `allowed_hosts = ["public.test"]`, "http://public.test" + port + "/", true, "", 1},
		{"loopback literal", `allowed_hosts = ["*"]`, "http://127.0.0.1" + port + "/", false, "private, loopback", 0},
		{"private 10.x", `allowed_hosts = ["*"]`, "http://10.0.0.1/", false, "private, loopback", 0},
		{"cloud metadata", `allowed_hosts = ["*"]`, "http://169.254.169.254/latest/meta-data/", false, "private, loopback", 0},
		{"name resolving to loopback", `allowed_hosts = ["evil.test"]`, "http://evil.test" + port + "/", false, "evil.test resolves to 127.0.0.1", 0},
		{"one forbidden address among good ones", `allowed_hosts = ["mixed.test"]`, "http://mixed.test" + port + "/", false, "192.168.1.1", 0},
		{"redirect from an allowed host to a private one", `allowed_hosts = ["public.test", "internal.test"]`, "http://public.test" + port + "/to-private", false, "internal.test resolves to 10.1.2.3", 1},
		{"redirect to metadata", `allowed_hosts = ["*"]`, "http://public.test" + port + "/to-metadata", false, "169.254.169.254", 1},
		{"redirect to a host not allowed", `allowed_hosts = ["public.test"]`, "http://public.test" + port + "/to-private", false, "not in allowed_hosts", 1},
		{"other scheme", `allowed_hosts = ["*"]`, "file:///etc/passwd", false, "only http and https", 0},
		{"private granted", "allowed_hosts = [\"evil.test\"]\nallow_private_network = true", "http://evil.test" + port + "/", true, "", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text := strings.Replace(faultyConfig, "{faulty}", testutil.GoPlugin(t, "testdata/plugins/faulty"), 1) + tc.grant + "\n"
			cfg, err := host.LoadConfig(testutil.WriteConfig(t, text))
			if err != nil {
				t.Fatal(err)
			}
			h, err := host.New(t.Context(), cfg, host.Options{Network: network})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { h.Close(context.Background()) })
			cs := connect(t, h, nil, "")
			mu.Lock()
			dials = nil
			mu.Unlock()
			res, out := callText(t, cs, "fetch", map[string]any{"text": tc.url})
			mu.Lock()
			attempts := append([]string(nil), dials...)
			mu.Unlock()
			if !res.IsError != tc.ok || (tc.ok && out != "reached") || !strings.Contains(out, tc.why) {
				t.Errorf("fetch(%s) = %q ok=%v, want ok=%v mentioning %q", tc.url, out, !res.IsError, tc.ok, tc.why)
			}
			if len(attempts) != tc.dials {
				t.Errorf("dial attempts %v, want %d", attempts, tc.dials)
			}
			if _, echo := callText(t, cs, "echo", map[string]any{"text": "ok"}); echo != "ok" {
				t.Error("plugin broken after a refused request")
			}
		})
	}
}

// TestNotificationFloodIsRateLimited: a plugin sending 5000 log messages in
// one call reaches the client with at most its burst, and the host stays
// responsive.
func TestNotificationFloodIsRateLimited(t *testing.T) {
	var got atomic.Int64
	marker := make(chan struct{}) // closed when everything's log message arrives
	text := strings.NewReplacer("{faulty}", testutil.GoPlugin(t, "testdata/plugins/faulty"), `timeout = "10s"`, `timeout = "30s"`).Replace(faultyConfig) +
		"[[plugin]]\nname = \"everything\"\npath = \"" + testutil.GoPlugin(t, "plugins/everything") + "\"\n"
	cfg, err := host.LoadConfig(testutil.WriteConfig(t, text))
	if err != nil {
		t.Fatal(err)
	}
	h, err := host.New(t.Context(), cfg, host.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close(context.Background()) })
	cs := connect(t, h, &mcp.ClientOptions{LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
		if r.Params.Logger == "everything" {
			close(marker)
			return
		}
		got.Add(1)
	}}, "2025-11-25")
	if err := cs.SetLoggingLevel(t.Context(), &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
		t.Fatal(err)
	}
	begin := time.Now()
	if _, text := callText(t, cs, "flood", map[string]any{}); text != "flooded" {
		t.Fatalf("flood = %q", text)
	}
	elapsed := time.Since(begin)
	// Every flood message the host let through was sent on the session
	// before the flood call returned; a client handles notifications one at
	// a time in the order they came. So once a log message sent after the
	// call (by another plugin, with a rate budget of its own) has been
	// handled, every flood message that reached the client has been
	// counted: wait for that, not for a while.
	if res, _ := callText(t, cs, "test_logging_tool", map[string]any{}); res.IsError {
		t.Fatalf("test_logging_tool: %+v", res)
	}
	select {
	case <-marker:
	case <-time.After(time.Minute): // a hang guard only
		t.Fatal("the log message sent after the flood never reached the client")
	}
	limit := int64(hostfn.ClientBurst + hostfn.ClientRate*elapsed.Seconds() + 10)
	if n := got.Load(); n == 0 || n > limit {
		t.Errorf("client got %d of 5000 log messages flooded over %v, want some and at most %d (burst + rate)", n, elapsed, limit)
	}
	t.Logf("client got %d of 5000 flooded log messages over %v", got.Load(), elapsed)
	if _, text := callText(t, cs, "echo", map[string]any{"text": "still here"}); text != "still here" {
		t.Errorf("echo after a flood = %q", text)
	}
}

// TestOutputCapRefusesOversizedResults: max_output_kb bounds what a call may
// return; the instance that produced it is replaced.
func TestOutputCapRefusesOversizedResults(t *testing.T) {
	s := start(t, faultyConfig+"max_output_kb = 64\n")
	_, err := s.session.CallTool(t.Context(), &mcp.CallToolParams{Name: "big", Arguments: map[string]any{"bytes": 1 << 20}})
	if err == nil || !strings.Contains(err.Error(), "max_output_kb") {
		t.Errorf("1 MiB result under a 64 KiB cap: %v", err)
	}
	res, text := callText(t, s.session, "big", map[string]any{"bytes": 1000})
	if res.IsError || len(text) != 1000 {
		t.Errorf("1000-byte result: %d bytes, isError %v", len(text), res.IsError)
	}
	afterFault(t, s)
}

// TestStdoutFloodKeepsTheLogBounded: 100000 lines of plugin stdout reach
// the host log as a bounded number of lines, never the process stdout.
func TestStdoutFloodKeepsTheLogBounded(t *testing.T) {
	s := start(t, withTimeout("30s"))
	begin := time.Now()
	if _, text := callText(t, s.session, "stdout_flood", map[string]any{}); text != "flooded stdout" {
		t.Fatalf("stdout_flood = %q", text)
	}
	elapsed := time.Since(begin)
	lines := strings.Count(s.log.String(), "stream=stdout line=")
	if lines == 0 || lines > 100+int(50*elapsed.Seconds())+10 {
		t.Errorf("%d of 100000 plugin stdout lines reached the log in %v, want a bounded number", lines, elapsed)
	}
	if !strings.Contains(s.log.String(), "dropping lines") {
		t.Error("the drop is not logged")
	}
	t.Logf("%d of 100000 lines logged in %v", lines, elapsed)
	afterFault(t, s)
}
