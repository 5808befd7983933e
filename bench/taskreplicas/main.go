// Command taskreplicas measures how soon a task's state, changed on one
// mcphost replica, shows through another replica sharing its task store
// (the Tasks extension, io.modelcontextprotocol/tasks; issue 28's goal:
// "a task's status from the other replica within 50 ms p50"), and what
// tasks/get costs, against a host that keeps its tasks in memory as the
// baseline, in the same run. scripts/bench-tasks.sh starts what it needs
// (redis-server, two replicas sharing it, one replica with the memory
// store) and runs it:
//
//	go run ./bench/taskreplicas -a http://127.0.0.1:18831/mcp -b http://127.0.0.1:18832/mcp \
//	    -memory http://127.0.0.1:18833/mcp -n 1000
//
// Each of the n rounds, one request at a time (nothing else runs, so each
// figure is one request's latency, not a throughput):
//
//   - create: tools/call slow_compute (a task) through a, then tasks/get
//     through b until b shows the task; "create → b" is from sending the
//     call to a until b's answer shows it, "after a's answer" the part
//     after a answered;
//   - cancel: tasks/cancel of that task through a, then tasks/get through
//     b until b shows it cancelled, timed likewise;
//   - tasks/get of a task that stays working (made at the start), through
//     b and through a (the shared store), and through the memory replica
//     (the baseline), in an order that rotates every round.
//
// It talks to loopback addresses only, speaks the extension as a
// stateless 2026-07-28 client over raw HTTP (go-sdk has no Tasks yet),
// and cancels every task it made before it exits.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "taskreplicas:", err)
		os.Exit(1)
	}
}

// Result is what one run measured, by series name.
type Result struct {
	N           int               `json:"n"`
	Series      map[string]Series `json:"series"`
	Load1Before float64           `json:"load1_before"`
	Load1After  float64           `json:"load1_after"`
	// ExtraGets counts the tasks/get through b that did not show the
	// change yet (0 when the store is read-your-writes across replicas).
	ExtraGets int `json:"extra_gets"`
}

// Series is the percentiles of one measured latency, in microseconds.
type Series struct {
	N     int     `json:"n"`
	P50us float64 `json:"p50_us"`
	P95us float64 `json:"p95_us"`
	P99us float64 `json:"p99_us"`
	MaxUs float64 `json:"max_us"`
}

// The series, in the order they are printed.
var series = []struct{ key, label string }{
	{"create_to_b", "create through a → shown by b"},
	{"create_after_ack", "  of which after a's answer"},
	{"create_a", "  tools/call (create) through a"},
	{"cancel_to_b", "cancel through a → shown by b"},
	{"cancel_after_ack", "  of which after a's answer"},
	{"get_b", "tasks/get through b (Redis)"},
	{"get_a", "tasks/get through a (Redis)"},
	{"get_memory", "tasks/get, one replica (memory)"},
}

func run() error {
	aURL := flag.String("a", "", "MCP endpoint of replica a (loopback only)")
	bURL := flag.String("b", "", "MCP endpoint of replica b, sharing a's task store")
	memURL := flag.String("memory", "", "MCP endpoint of a replica with the memory store (the baseline)")
	n := flag.Int("n", 1000, "rounds")
	warmup := flag.Int("warmup", 50, "rounds before measuring (not counted)")
	asJSON := flag.Bool("json", false, "print the result as one JSON object")
	flag.Parse()
	for _, u := range []string{*aURL, *bURL, *memURL} {
		if err := checkLoopback(u); err != nil {
			return err
		}
	}
	if *n < 1 {
		return errors.New("-n must be at least 1")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	a, b, mem := newClient("a", *aURL), newClient("b", *bURL), newClient("memory", *memURL)

	// The tasks read by the tasks/get series: working all along.
	steady, err := a.create(ctx, "steady")
	if err != nil {
		return err
	}
	defer a.cancelQuietly(steady)
	steadyMem, err := mem.create(ctx, "steady")
	if err != nil {
		return err
	}
	defer mem.cancelQuietly(steadyMem)
	if _, err := b.get(ctx, steady); err != nil {
		return fmt.Errorf("replica b does not see a's task (do they share a task store?): %w", err)
	}

	res := Result{N: *n, Load1Before: load1()}
	lat := map[string][]time.Duration{}
	gets := []struct {
		key string
		c   *client
		id  string
	}{{"get_b", b, steady}, {"get_a", a, steady}, {"get_memory", mem, steadyMem}}
	for i := range *warmup + *n {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		m := map[string]time.Duration{}
		extra, err := changeRound(ctx, a, b, i, m)
		if err != nil {
			return fmt.Errorf("round %d: %w", i, err)
		}
		for j := range gets {
			g := gets[(i+j)%len(gets)]
			began := time.Now()
			if _, err := g.c.get(ctx, g.id); err != nil {
				return fmt.Errorf("round %d: %w", i, err)
			}
			m[g.key] = time.Since(began)
		}
		if i < *warmup {
			continue
		}
		res.ExtraGets += extra
		for k, d := range m {
			lat[k] = append(lat[k], d)
		}
	}
	res.Load1After = load1()
	res.Series = map[string]Series{}
	for k, ds := range lat {
		slices.Sort(ds)
		res.Series[k] = Series{N: len(ds), P50us: pct(ds, 0.50), P95us: pct(ds, 0.95), P99us: pct(ds, 0.99), MaxUs: pct(ds, 1)}
	}
	if *asJSON {
		return json.NewEncoder(os.Stdout).Encode(res)
	}
	fmt.Printf("%d rounds (after %d of warm-up); load average %.2f before, %.2f after\n", *n, *warmup, res.Load1Before, res.Load1After)
	fmt.Printf("%-34s %9s %9s %9s %9s\n", "latency (ms)", "p50", "p95", "p99", "max")
	for _, s := range series {
		v := res.Series[s.key]
		fmt.Printf("%-34s %9.3f %9.3f %9.3f %9.3f\n", s.label, v.P50us/1e3, v.P95us/1e3, v.P99us/1e3, v.MaxUs/1e3)
	}
	fmt.Printf("tasks/get through b that did not show a's change yet: %d\n", res.ExtraGets)
	return nil
}

// changeRound creates a task through a, waits until b shows it, cancels
// it through a and waits until b shows that, recording the times in m; it
// returns how many of b's answers did not show the change yet.
func changeRound(ctx context.Context, a, b *client, i int, m map[string]time.Duration) (int, error) {
	extra := 0
	began := time.Now()
	id, err := a.create(ctx, "round-"+strconv.Itoa(i))
	if err != nil {
		return 0, err
	}
	acked := time.Now()
	n, err := b.await(ctx, id, "working")
	if err != nil {
		a.cancelQuietly(id)
		return 0, err
	}
	shown := time.Now()
	extra += n
	m["create_a"], m["create_to_b"], m["create_after_ack"] = acked.Sub(began), shown.Sub(began), shown.Sub(acked)

	began = time.Now()
	if _, err := a.rpc(ctx, "tasks/cancel", id, map[string]any{"taskId": id}); err != nil {
		return 0, err
	}
	acked = time.Now()
	n, err = b.await(ctx, id, "cancelled")
	if err != nil {
		return 0, err
	}
	shown = time.Now()
	extra += n
	m["cancel_to_b"], m["cancel_after_ack"] = shown.Sub(began), shown.Sub(acked)
	return extra, nil
}

// client is a stateless 2026-07-28 client of the Tasks extension over raw
// HTTP, one request at a time on a kept-alive connection.
type client struct {
	name     string
	endpoint string
	http     *http.Client
	id       atomic.Int64
}

func newClient(name, endpoint string) *client {
	return &client{name: name, endpoint: endpoint, http: &http.Client{Timeout: 30 * time.Second}}
}

// errNotYet is await's "not there yet": b does not know the task.
var errNotYet = errors.New("unknown task")

// rpc sends method with params (the extension declared in _meta; name
// goes in Mcp-Name) and returns the answer's result.
func (c *client) rpc(ctx context.Context, method, name string, params map[string]any) (map[string]any, error) {
	params["_meta"] = map[string]any{
		"io.modelcontextprotocol/protocolVersion": "2026-07-28",
		"io.modelcontextprotocol/clientInfo":      map[string]any{"name": "taskreplicas", "version": "1"},
		"io.modelcontextprotocol/clientCapabilities": map[string]any{
			"extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}},
		},
	}
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.id.Add(1), "method": method, "params": params})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", method)
	req.Header.Set("Mcp-Name", name)
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s through %s: %w", method, c.name, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("%s through %s: read the answer: %w", method, c.name, err)
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		if i := bytes.Index(b, []byte("data: ")); i >= 0 {
			b, _, _ = bytes.Cut(b[i+len("data: "):], []byte("\n"))
		}
	}
	var answer struct {
		Result map[string]any `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(b, &answer); err != nil {
		return nil, fmt.Errorf("%s through %s: HTTP %d, answer %q is not JSON-RPC: %v", method, c.name, resp.StatusCode, b, err)
	}
	if e := answer.Error; e != nil {
		err := fmt.Errorf("%s through %s: error %d: %s", method, c.name, e.Code, e.Message)
		if e.Code == -32602 && strings.Contains(e.Message, "unknown task") {
			err = fmt.Errorf("%w (%w)", errNotYet, err)
		}
		return nil, err
	}
	return answer.Result, nil
}

// create starts slow_compute as a task that would run for an hour, and
// returns its id.
func (c *client) create(ctx context.Context, label string) (string, error) {
	res, err := c.rpc(ctx, "tools/call", "slow_compute", map[string]any{"name": "slow_compute",
		"arguments": map[string]any{"seconds": 3600, "label": label}})
	if err != nil {
		return "", err
	}
	id, _ := res["taskId"].(string)
	if res["resultType"] != "task" || id == "" {
		return "", fmt.Errorf("tools/call slow_compute through %s = %v, want a task (is the host stateless, serving plugins/everything?)", c.name, res)
	}
	return id, nil
}

// get returns the task id's status through c.
func (c *client) get(ctx context.Context, id string) (string, error) {
	res, err := c.rpc(ctx, "tasks/get", id, map[string]any{"taskId": id})
	if err != nil {
		return "", err
	}
	s, _ := res["status"].(string)
	return s, nil
}

// await reads the task id through c until it shows status want (an
// unknown task is not yet), and returns how many reads did not; it gives
// up after 10 s.
func (c *client) await(ctx context.Context, id, want string) (int, error) {
	deadline := time.Now().Add(10 * time.Second)
	for n := 0; ; n++ {
		s, err := c.get(ctx, id)
		switch {
		case err == nil && s == want:
			return n, nil
		case err != nil && !errors.Is(err, errNotYet):
			return n, err
		case time.Now().After(deadline):
			return n, fmt.Errorf("task %s through %s: %q after 10 s, want %q (%v)", id, c.name, s, want, err)
		}
	}
}

// cancelQuietly cancels the task id, ignoring errors: cleaning up.
func (c *client) cancelQuietly(id string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, _ = c.rpc(ctx, "tasks/cancel", id, map[string]any{"taskId": id})
}

// load1 returns the 1-minute load average, or 0 where /proc/loadavg is
// unavailable.
func load1() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f, err := strconv.ParseFloat(strings.Fields(string(b))[0], 64)
	if err != nil {
		return 0
	}
	return f
}

// pct returns the p-th quantile of sorted, in microseconds.
func pct(sorted []time.Duration, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	return float64(sorted[int(p*float64(len(sorted)-1))]) / float64(time.Microsecond)
}

// checkLoopback refuses an endpoint that is not http(s) on loopback.
func checkLoopback(endpoint string) error {
	u, err := url.Parse(endpoint)
	if err != nil {
		return fmt.Errorf("endpoint %q: %w", endpoint, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("endpoint %q: want http://HOST:PORT/PATH (-a, -b and -memory are required)", endpoint)
	}
	h := u.Hostname()
	if ip := net.ParseIP(h); h != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("endpoint %q: only loopback endpoints are allowed", endpoint)
	}
	return nil
}
