package host_test

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/internal/testutil"
)

// spinTool is a call_tool body that counts to 2^29 and returns an empty
// result: a slow call that ends well (its instance is reused, never freed).
const spinTool = `(local $i i32)
  (block $done (loop $spin
    (br_if $done (i32.ge_u (local.get $i) (i32.const 536870912)))
    (local.set $i (i32.add (local.get $i) (i32.const 1)))
    (br $spin)))
  ` + outputEmpty

// TestMemoryBudgetHostilePluginCannotStarveAnother (issue 25 item 5): in
// max_memory_mb = 256, a plugin of 64 MiB instances (up to 8) is hammered
// by 50 concurrent slow calls while another plugin of 64 MiB is called
// over and over for 10 s. Every call of the good plugin succeeds: one
// instance of it is reserved, whatever the other holds.
func TestMemoryBudgetHostilePluginCannotStarveAnother(t *testing.T) {
	hostile := testutil.WATPlugin{Tools: `{"tools":[{"name":"spin","inputSchema":{"type":"object"}}]}`, CallTool: spinTool}.Build(t)
	good := testutil.WATPlugin{Tools: `{"tools":[{"name":"quick","inputSchema":{"type":"object"}}]}`}.Build(t)
	s := start(t, `
[server]
max_memory_mb = 256
[server.metrics]
enabled = true

[[plugin]]
name = "hostile"
path = "`+hostile+`"
memory_mb = 64
max_instances = 8
timeout = "60s"

[[plugin]]
name = "good"
path = "`+good+`"
memory_mb = 64
max_instances = 1
timeout = "2s"
idle_timeout = "1h"
`)
	attackers := make([]*mcp.ClientSession, 5)
	for i := range attackers {
		attackers[i] = connect(t, s.host, nil, "")
	}
	attack, stop := context.WithCancel(t.Context())
	var hostileOK atomic.Int64
	var wg sync.WaitGroup
	for i := range 50 {
		cs := attackers[i%len(attackers)]
		wg.Go(func() {
			for attack.Err() == nil {
				res, err := cs.CallTool(attack, &mcp.CallToolParams{Name: "spin", Arguments: map[string]any{}})
				if err == nil && !res.IsError {
					hostileOK.Add(1)
				}
			}
		})
	}
	defer wg.Wait()
	defer stop()
	// The attack holds at least three instances before the good plugin
	// is called.
	for deadline := time.Now().Add(time.Minute); metric(t, s.host, "mcphost_memory_held_bytes") < 192<<20; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the hostile plugin never held 192 MiB: %v", metric(t, s.host, "mcphost_memory_held_bytes"))
		}
	}

	var ok, failed int
	var took []time.Duration
	var firstErr string
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); {
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		begin := time.Now()
		res, err := s.session.CallTool(ctx, &mcp.CallToolParams{Name: "quick", Arguments: map[string]any{}})
		took = append(took, time.Since(begin))
		cancel()
		switch {
		case err != nil:
			failed++
			firstErr = cmp.Or(firstErr, err.Error())
		case res.IsError:
			failed++
			firstErr = cmp.Or(firstErr, fmt.Sprint(res.Content))
		default:
			ok++
		}
	}
	slices.Sort(took)
	t.Logf("good plugin under attack: %d of %d calls succeeded; latency p50 %v, p99 %v; hostile calls that succeeded meanwhile: %d",
		ok, ok+failed, took[len(took)/2], took[len(took)*99/100], hostileOK.Load())
	if failed > 0 || ok == 0 {
		t.Errorf("good plugin: %d calls failed, %d succeeded, want every one to succeed; first error: %s", failed, ok, firstErr)
	}
}

// TestMemoryBudgetWarnsWhenReservationsDoNotFit: a budget that cannot
// hold one instance of every plugin is served, with a warning naming the
// budget, what the plugins need together and each plugin's memory_mb; a
// budget that can is not warned about.
func TestMemoryBudgetWarnsWhenReservationsDoNotFit(t *testing.T) {
	wasm := testutil.WATPlugin{Tools: `{"tools":[{"name":"quick","inputSchema":{"type":"object"}}]}`}.Build(t)
	plugins := `
[[plugin]]
name = "a"
path = "` + wasm + `"
prefix = "a_"
memory_mb = 64
[[plugin]]
name = "b"
path = "` + wasm + `"
prefix = "b_"
memory_mb = 48
`
	const warning = "max_memory_mb cannot hold one instance of every plugin"
	s := start(t, "[server]\nmax_memory_mb = 96\n"+plugins)
	for _, want := range []string{warning, "max_memory_mb=96", "memory_mb_together=112", `plugins="a 64, b 48"`} {
		if !strings.Contains(s.log.String(), want) {
			t.Errorf("host log does not say %q:\n%s", want, s.log.String())
		}
	}
	if _, err := s.session.CallTool(t.Context(), &mcp.CallToolParams{Name: "b_quick", Arguments: map[string]any{}}); err != nil {
		t.Errorf("b's call: %v", err)
	}
	if s := start(t, "[server]\nmax_memory_mb = 112\n"+plugins); strings.Contains(s.log.String(), warning) {
		t.Errorf("warned of a budget that holds one instance of each plugin:\n%s", s.log.String())
	}
}
