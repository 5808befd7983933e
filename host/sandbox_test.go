package host_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
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
	t.Run("writable is refused", func(t *testing.T) {
		_, err := host.LoadConfig(testutil.WriteConfig(t, fmt.Sprintf("[[plugin]]\nname = \"a\"\npath = \"a.wasm\"\nallowed_paths = { \"rw:%s\" = \"/data\" }\n", granted)))
		if err == nil || !strings.Contains(err.Error(), "writable directories are not supported yet") {
			t.Errorf("rw: grant = %v", err)
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
	time.Sleep(500 * time.Millisecond)
	afterFault(t, s) // closed again after the cooldown and a success
}

// TestNetworkIsDeniedUnlessGranted: a plugin reaches only the hosts its
// config allows, never the host's own networks unless that is granted too,
// and never through a redirect to a host it may not reach.
func TestNetworkIsDeniedUnlessGranted(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/away" {
			http.Redirect(w, r, strings.Replace("http://"+r.Host+"/ok", "127.0.0.1", "localhost", 1), http.StatusFound)
			return
		}
		w.Write([]byte("reached"))
	}))
	defer srv.Close()
	fetch := func(s *started, url string) (string, bool) {
		res, text := callText(t, s.session, "fetch", map[string]any{"text": url})
		return text, !res.IsError
	}
	for _, tc := range []struct {
		name, grant, url string
		ok               bool
		why              string
	}{
		{"no grant", "", srv.URL + "/ok", false, "not in allowed_hosts"},
		{"allowed host on loopback", "allowed_hosts = [\"127.0.0.1\"]\n", srv.URL + "/ok", false, "private, loopback or link-local"},
		{"metadata address", "allowed_hosts = [\"*\"]\n", "http://169.254.169.254/latest/meta-data/", false, "private, loopback or link-local"},
		{"private network granted", "allowed_hosts = [\"127.0.0.1\"]\nallow_private_network = true\n", srv.URL + "/ok", true, ""},
		{"redirect to another host", "allowed_hosts = [\"127.0.0.1\"]\nallow_private_network = true\n", srv.URL + "/away", false, "redirect"},
		{"other scheme", "allowed_hosts = [\"*\"]\n", "file:///etc/passwd", false, "only http and https"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := start(t, faultyConfig+tc.grant)
			text, ok := fetch(s, tc.url)
			if ok != tc.ok || (tc.ok && text != "reached") || !strings.Contains(text, tc.why) {
				t.Errorf("fetch(%s) = %q ok=%v, want ok=%v mentioning %q", tc.url, text, ok, tc.ok, tc.why)
			}
		})
	}
}

// TestNotificationFloodIsRateLimited: a plugin sending 5000 log messages in
// one call reaches the client with at most its burst, and the host stays
// responsive.
func TestNotificationFloodIsRateLimited(t *testing.T) {
	var got atomic.Int64
	text := strings.NewReplacer("{faulty}", testutil.GoPlugin(t, "testdata/plugins/faulty"), `"300ms"`, `"30s"`).Replace(faultyConfig)
	cfg, err := host.LoadConfig(testutil.WriteConfig(t, text))
	if err != nil {
		t.Fatal(err)
	}
	h, err := host.New(t.Context(), cfg, host.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close(context.Background()) })
	cs := connect(t, h, &mcp.ClientOptions{LoggingMessageHandler: func(context.Context, *mcp.LoggingMessageRequest) { got.Add(1) }}, "2025-11-25")
	if err := cs.SetLoggingLevel(t.Context(), &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
		t.Fatal(err)
	}
	begin := time.Now()
	if _, text := callText(t, cs, "flood", map[string]any{}); text != "flooded" {
		t.Fatalf("flood = %q", text)
	}
	elapsed := time.Since(begin)
	time.Sleep(200 * time.Millisecond)
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
