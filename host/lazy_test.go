package host_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/internal/testutil"
)

// metric scrapes h's /metrics and returns the value of the sample named
// name (with its labels, as written), failing the test when there is none.
func metric(t *testing.T, h *host.Host, name string) float64 {
	t.Helper()
	rec := httptest.NewRecorder()
	h.OpsHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	for line := range strings.Lines(rec.Body.String()) {
		if rest, ok := strings.CutPrefix(line, name+" "); ok {
			v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			return v
		}
	}
	t.Fatalf("/metrics has no %s:\n%s", name, rec.Body.String())
	return 0
}

const lazyConfig = `
[server.metrics]
enabled = true

[[plugin]]
name = "hello"
path = "{hello}"
timeout = "30s"
max_instances = 1
idle_timeout = "%s"
`

func TestPluginIsIdleUntilItsFirstCall(t *testing.T) {
	s := start(t, fmt.Sprintf(lazyConfig, "1h"))
	active := `mcphost_plugin_active{plugin="hello"}`
	activations := `mcphost_plugin_activations_total{plugin="hello"}`
	made := `mcphost_plugin_instances_created_total{plugin="hello"}`
	if v := metric(t, s.host, active); v != 0 {
		t.Fatalf("%s = %v after start, want 0 (lists read, instances released)", active, v)
	}
	if v := metric(t, s.host, `mcphost_plugin_instances{plugin="hello",state="idle"}`); v != 0 {
		t.Fatalf("%v idle instances after start, want 0", v)
	}
	// Its tools are served without an instance.
	tools, err := s.session.ListTools(t.Context(), nil)
	if err != nil || len(tools.Tools) == 0 {
		t.Fatalf("tools/list of an idle plugin: %v, %d tools", err, len(tools.Tools))
	}
	if v := metric(t, s.host, active); v != 0 {
		t.Fatalf("tools/list activated the plugin")
	}
	activationsBefore, madeBefore := metric(t, s.host, activations), metric(t, s.host, made)

	const callers = 8
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() {
			res, err := s.session.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": strconv.Itoa(i)}})
			if err != nil || res.IsError {
				t.Errorf("first call %d: %v %+v", i, err, res)
			}
		})
	}
	wg.Wait()
	if got := metric(t, s.host, activations) - activationsBefore; got != 1 {
		t.Errorf("%v activations for %d concurrent first calls, want 1", got, callers)
	}
	if got := metric(t, s.host, made) - madeBefore; got != 1 {
		t.Errorf("%v instances made for %d concurrent first calls (max_instances 1), want 1", got, callers)
	}
	if v := metric(t, s.host, active); v != 1 {
		t.Errorf("%s = %v after calls, want 1", active, v)
	}
}

func TestIdleTimeoutReleasesThePluginAndTheNextCallBringsItBack(t *testing.T) {
	s := start(t, fmt.Sprintf(lazyConfig, "1ms"))
	releases := `mcphost_plugin_releases_total{plugin="hello"}`
	for round := 1; round <= 3; round++ {
		before := metric(t, s.host, releases)
		if _, text := callText(t, s.session, "echo", map[string]any{"text": "again"}); text != "again" {
			t.Fatalf("round %d: echo = %q", round, text)
		}
		// Hang guard only: the release follows the 1ms idle timeout.
		deadline := time.Now().Add(time.Minute)
		for metric(t, s.host, releases) == before {
			if time.Now().After(deadline) {
				t.Fatalf("round %d: not released after its idle timeout", round)
			}
			time.Sleep(5 * time.Millisecond)
		}
		if v := metric(t, s.host, `mcphost_plugin_active{plugin="hello"}`); v != 0 {
			t.Fatalf("round %d: released yet active", round)
		}
	}
}

func TestReloadOfAnIdlePlugin(t *testing.T) {
	f := newReloadFixture(t, false)
	// Never called: the plugin is idle.
	copyFile(t, testutil.GoPlugin(t, "testdata/plugins/versioned", "v2"), filepath.Join(f.dir, "versioned.wasm"))
	if err := f.host.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-f.toolsChg:
	case <-time.After(time.Minute):
		t.Fatal("no tools/list_changed after reloading an idle plugin")
	}
	if v := f.version(t); v != "v2" {
		t.Errorf("version after reloading the idle plugin = %q, want v2", v)
	}
	f.host.WaitRetired()
}
