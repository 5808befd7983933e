// Command loadgen is mcphost's load generator: it opens C concurrent MCP
// sessions with the go-sdk client over Streamable HTTP, and in each calls
// one tool back to back for D seconds (after a short warm-up that is not
// counted). It reports calls/s, latency percentiles and errors.
//
//	go run ./bench/loadgen -url http://127.0.0.1:8808/mcp -c 8 -d 10s
//
// It only talks to loopback addresses, and stops by itself: after -d (plus
// the warm-up), or after -n calls when -n is set, and in any case when the
// overall deadline (-d + warm-up + 30 s) passes. -json prints the result as
// one JSON object (for bench/summary); -label names the target in it.
//
// The machine may be shared: the result carries the 1-minute load average
// before and after the run, and, with -pid, the CPU time the server process
// used during the measured window (from /proc/PID/stat), so that the CPU
// cost of a call can be compared even when the wall-clock rate is disturbed.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Result is what one run measured.
type Result struct {
	Label           string  `json:"label,omitempty"`
	URL             string  `json:"url"`
	Tool            string  `json:"tool"`
	ProtocolVersion string  `json:"protocol_version"`
	Sessions        int     `json:"sessions"`
	Seconds         float64 `json:"seconds"` // measured window
	Calls           int     `json:"calls"`   // successful calls in the window
	Errors          int     `json:"errors"`  // failed calls (transport, JSON-RPC or isError)
	CallsPerSec     float64 `json:"calls_per_sec"`
	P50us           float64 `json:"p50_us"`
	P90us           float64 `json:"p90_us"`
	P99us           float64 `json:"p99_us"`
	MaxUs           float64 `json:"max_us"`
	FirstError      string  `json:"first_error,omitempty"`
	// ServerCPUus is the CPU time (user + system) the process -pid used
	// in the measured window, and ServerCPUusPerCall that divided by the
	// calls; 0 without -pid.
	ServerCPUus        float64 `json:"server_cpu_us,omitempty"`
	ServerCPUusPerCall float64 `json:"server_cpu_us_per_call,omitempty"`
	// Load1Before and Load1After are /proc/loadavg's 1-minute average
	// before the warm-up and after the window (0 where unavailable).
	Load1Before float64 `json:"load1_before"`
	Load1After  float64 `json:"load1_after"`
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		os.Exit(1)
	}
}

func run() error {
	endpoint := flag.String("url", "http://127.0.0.1:8808/mcp", "MCP endpoint (loopback only)")
	conc := flag.Int("c", 8, "concurrent sessions, each with one call in flight")
	dur := flag.Duration("d", 10*time.Second, "how long to measure")
	warmup := flag.Duration("warmup", time.Second, "calls before measuring (not counted)")
	maxCalls := flag.Int("n", 0, "stop after this many measured calls in all (0: no limit, -d only)")
	tool := flag.String("tool", "echo", "tool to call")
	argsJSON := flag.String("args", `{"text":"hello"}`, "tool arguments (a JSON object)")
	expect := flag.String("expect", "", `text the result must contain to count as success (default: the "text" argument for echo, or a prefixed echo such as ev_echo)`)
	version := flag.String("protocol-version", "2025-11-25", "protocol revision to ask for (2026-07-28 for a stateless server)")
	callTimeout := flag.Duration("timeout", 10*time.Second, "deadline of one call")
	asJSON := flag.Bool("json", false, "print the result as JSON")
	label := flag.String("label", "", "name of the target, copied into the result")
	pid := flag.Int("pid", 0, "server process whose CPU time to measure over the window (Linux /proc)")
	flag.Parse()

	if *conc < 1 || *conc > 1024 {
		return fmt.Errorf("-c %d: want 1..1024", *conc)
	}
	if *dur <= 0 || *dur > 10*time.Minute {
		return fmt.Errorf("-d %s: want (0, 10m]", *dur)
	}
	if err := checkLoopback(*endpoint); err != nil {
		return err
	}
	var args map[string]any
	if err := json.Unmarshal([]byte(*argsJSON), &args); err != nil {
		return fmt.Errorf("-args: %w", err)
	}
	want := *expect
	if want == "" && (*tool == "echo" || strings.HasSuffix(*tool, "_echo")) {
		want, _ = args["text"].(string)
	}

	load1Before := load1()

	// Hard stop: the run ends by itself whatever the server does.
	ctx, cancel := context.WithTimeout(context.Background(), *warmup+*dur+30*time.Second)
	defer cancel()
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt)
	defer stop()

	// One connection pool for all sessions, large enough that no session
	// waits for (or re-dials) a connection: each holds a POST in flight and,
	// when stateful, a standalone SSE GET.
	httpClient := &http.Client{Transport: &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
		MaxIdleConns:        4**conc + 8,
		MaxIdleConnsPerHost: 4**conc + 8,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}}
	defer httpClient.CloseIdleConnections()

	client := mcp.NewClient(&mcp.Implementation{Name: "mcphost-loadgen", Version: "1"}, nil)
	sessions := make([]*mcp.ClientSession, *conc)
	for i := range sessions {
		t := &mcp.StreamableClientTransport{Endpoint: *endpoint, HTTPClient: httpClient, MaxRetries: -1}
		cs, err := client.Connect(ctx, t, &mcp.ClientSessionOptions{ProtocolVersion: *version})
		if err != nil {
			closeAll(sessions)
			return fmt.Errorf("session %d: connect: %w", i, err)
		}
		sessions[i] = cs
	}
	defer closeAll(sessions)

	var (
		measuring  atomic.Bool
		done       atomic.Bool
		measured   atomic.Int64
		errMu      sync.Mutex
		firstError string
		errCount   atomic.Int64
	)
	lat := make([][]time.Duration, *conc)
	var wg sync.WaitGroup
	for i, cs := range sessions {
		wg.Go(func() {
			own := make([]time.Duration, 0, 1<<14)
			params := &mcp.CallToolParams{Name: *tool, Arguments: args}
			for !done.Load() && ctx.Err() == nil {
				callCtx, cancelCall := context.WithTimeout(ctx, *callTimeout)
				begin := time.Now()
				res, err := cs.CallTool(callCtx, params)
				took := time.Since(begin)
				cancelCall()
				if err == nil {
					err = check(res, want)
				}
				if !measuring.Load() || done.Load() {
					continue
				}
				if err != nil {
					if errCount.Add(1) == 1 {
						errMu.Lock()
						firstError = err.Error()
						errMu.Unlock()
					}
					continue
				}
				own = append(own, took)
				if n := measured.Add(1); *maxCalls > 0 && n >= int64(*maxCalls) {
					done.Store(true)
				}
			}
			lat[i] = own
		})
	}

	select {
	case <-time.After(*warmup):
	case <-ctx.Done():
	}
	cpuBefore, cpuErr := processCPU(*pid)
	measuring.Store(true)
	begin := time.Now()
	timer := time.NewTimer(*dur)
	tick := time.NewTicker(10 * time.Millisecond)
wait:
	for {
		select {
		case <-timer.C:
			break wait
		case <-ctx.Done():
			break wait
		case <-tick.C:
			if done.Load() {
				break wait
			}
		}
	}
	tick.Stop()
	done.Store(true)
	window := time.Since(begin)
	cpuAfter, err := processCPU(*pid)
	if cpuErr == nil {
		cpuErr = err
	}
	wg.Wait()
	if err := ctx.Err(); err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("run did not finish in time: %w", err)
	}

	all := slices.Concat(lat...)
	slices.Sort(all)
	res := Result{
		URL: *endpoint, Tool: *tool, ProtocolVersion: *version, Sessions: *conc,
		Seconds: window.Seconds(), Calls: len(all), Errors: int(errCount.Load()),
		CallsPerSec: float64(len(all)) / window.Seconds(),
		P50us:       pct(all, 0.50), P90us: pct(all, 0.90), P99us: pct(all, 0.99), MaxUs: pct(all, 1),
		FirstError: firstError,
		Label:      *label, Load1Before: load1Before, Load1After: load1(),
	}
	if *pid > 0 {
		if cpuErr != nil {
			return fmt.Errorf("-pid %d: %w", *pid, cpuErr)
		}
		res.ServerCPUus = float64((cpuAfter - cpuBefore).Microseconds())
		if res.Calls > 0 {
			res.ServerCPUusPerCall = res.ServerCPUus / float64(res.Calls)
		}
	}
	if *asJSON {
		return json.NewEncoder(os.Stdout).Encode(res)
	}
	fmt.Printf("%s %s c=%d over %.1fs: %d calls, %.0f calls/s, p50 %.0f µs, p90 %.0f µs, p99 %.0f µs, max %.0f µs, %d errors\n",
		res.URL, res.Tool, res.Sessions, res.Seconds, res.Calls, res.CallsPerSec, res.P50us, res.P90us, res.P99us, res.MaxUs, res.Errors)
	if res.ServerCPUus > 0 {
		fmt.Printf("server CPU: %.0f µs per call\n", res.ServerCPUusPerCall)
	}
	if res.FirstError != "" {
		fmt.Printf("first error: %s\n", res.FirstError)
	}
	return nil
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

// clockTicks is the unit of /proc/PID/stat's CPU times (USER_HZ), 100 on
// every Linux platform Go supports.
const clockTicks = 100

// processCPU returns the user + system CPU time process pid has used so
// far, or 0 when pid is 0.
func processCPU(pid int) (time.Duration, error) {
	if pid <= 0 {
		return 0, nil
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("read CPU time: %w", err)
	}
	// The command name (field 2) may hold spaces; fields after it are
	// counted from its closing parenthesis. utime and stime are fields 14
	// and 15.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("read CPU time: malformed /proc/%d/stat", pid)
	}
	fields := strings.Fields(s[i+1:])
	if len(fields) < 13 {
		return 0, fmt.Errorf("read CPU time: short /proc/%d/stat", pid)
	}
	var ticks int64
	for _, f := range fields[11:13] {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("read CPU time: %w", err)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / clockTicks, nil
}

// check counts a result as a success when it is not a tool error and, if
// want is set, its text content is want.
func check(res *mcp.CallToolResult, want string) error {
	if res.IsError {
		return fmt.Errorf("tool error: %v", res.Content)
	}
	if want == "" {
		return nil
	}
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok && tc.Text == want {
			return nil
		}
	}
	return fmt.Errorf("unexpected result %v", res.Content)
}

// pct returns the p-th quantile of sorted, in microseconds.
func pct(sorted []time.Duration, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	return float64(sorted[int(p*float64(len(sorted)-1))]) / float64(time.Microsecond)
}

func checkLoopback(endpoint string) error {
	u, err := url.Parse(endpoint)
	if err != nil {
		return fmt.Errorf("-url: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("-url %q: want http://HOST:PORT/PATH", endpoint)
	}
	h := u.Hostname()
	if ip := net.ParseIP(h); h != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("-url %q: only loopback endpoints are allowed", endpoint)
	}
	return nil
}

func closeAll(sessions []*mcp.ClientSession) {
	var wg sync.WaitGroup
	for _, cs := range sessions {
		if cs != nil {
			wg.Go(func() { cs.Close() })
		}
	}
	wg.Wait()
}
