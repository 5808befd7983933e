// Command manyplugins measures one mcphost serving many plugins (issue 17):
// the time from exec to /readyz 200, the process's RSS when ready, the
// latency of the first call to each plugin and of a second one, the RSS
// after them, and the RSS once the plugins' idle_timeout has passed.
//
//	go run ./bench/manyplugins -mcphost ./mcphost -wasm 'dir/*.wasm' -tool echo
//
// Each .wasm file matched becomes one [[plugin]] with the prefix "p<i>_"
// (-copies times: -copies 100 with one file is 100 plugins of one module).
// -memory_mb sets every plugin's memory_mb and -max_memory_mb the host's
// memory budget; the budget's figures are read from /metrics.
// Run it twice with the same -cache for warm-cache figures.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	bin := flag.String("mcphost", "mcphost", "the mcphost binary")
	pattern := flag.String("wasm", "", "glob of the plugins' .wasm files")
	tool := flag.String("tool", "echo", "the tool to call on each plugin")
	args := flag.String("args", `{"text":"hi"}`, "its arguments (JSON object)")
	cache := flag.String("cache", "", "cache_dir (empty: a new temporary one)")
	idle := flag.Duration("idle", 2*time.Second, "idle_timeout of every plugin (0: not set; the host's default)")
	calls := flag.Bool("calls", true, "call each plugin")
	copies := flag.Int("copies", 1, "plugins made of each file")
	memoryMB := flag.Int("memory_mb", 0, "memory_mb of every plugin (0: not set; the default)")
	budgetMB := flag.Int("max_memory_mb", 0, "[server] max_memory_mb (0: no budget)")
	verbose := flag.Bool("v", false, "print every call's time")
	probe := flag.Bool("probe", false, "during the first calls, call p0 (made warm first) from another session back to back, and compare its latency with the same calls before them")
	waitCompiled := flag.Bool("wait-compiled", false, "after the calls, wait for the background compilation to end (mcphost_plugins_preparing 0) and report when it did")
	idleCodeMB := flag.Int("max_idle_code_mb", -1, "[server] max_idle_code_mb (-1: not set; the default)")
	flag.Parse()
	files, err := filepath.Glob(*pattern)
	if err != nil || len(files) == 0 {
		log.Fatalf("no plugins match %q", *pattern)
	}
	slices.Sort(files)
	for i, f := range files {
		if files[i], err = filepath.Abs(f); err != nil {
			log.Fatal(err)
		}
	}
	var copied []string
	for _, f := range files {
		for range *copies {
			copied = append(copied, f)
		}
	}
	files = copied
	dir, err := os.MkdirTemp("", "manyplugins-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if *cache != "" {
		if *cache, err = filepath.Abs(*cache); err != nil {
			log.Fatal(err)
		}
	}
	if *cache == "" {
		*cache = filepath.Join(dir, "cache")
	}
	var cfg strings.Builder
	fmt.Fprintf(&cfg, "[server]\ncache_dir = %q\nwatch = false\nlock_file = %q\n", *cache, filepath.Join(dir, "mcphost.lock"))
	if *budgetMB > 0 {
		fmt.Fprintf(&cfg, "max_memory_mb = %d\n", *budgetMB)
	}
	if *idleCodeMB >= 0 {
		fmt.Fprintf(&cfg, "max_idle_code_mb = %d\n", *idleCodeMB)
	}
	cfg.WriteString("[server.metrics]\nenabled = true\n")
	for i, f := range files {
		fmt.Fprintf(&cfg, "\n[[plugin]]\nname = \"p%d\"\npath = %q\nprefix = \"p%d_\"\ntimeout = \"60s\"\n", i, f, i)
		if *idle > 0 {
			fmt.Fprintf(&cfg, "idle_timeout = %q\n", idle.String())
		}
		if *memoryMB > 0 {
			fmt.Fprintf(&cfg, "memory_mb = %d\n", *memoryMB)
		}
	}
	cfgPath := filepath.Join(dir, "mcphost.toml")
	if err := os.WriteFile(cfgPath, []byte(cfg.String()), 0o644); err != nil {
		log.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()

	began := time.Now()
	cmd := exec.Command(*bin, "serve", "--config", cfgPath, "--http", addr, "--log-level", "error")
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		log.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	for {
		resp, err := http.Get("http://" + addr + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Since(began) > 10*time.Minute {
			log.Fatal("not ready after 10 minutes")
		}
		time.Sleep(5 * time.Millisecond)
	}
	ready := time.Since(began)
	readyAt := time.Now()
	fmt.Printf("plugins %d\nready %v\nrss_ready_mib %d\n", len(files), ready.Round(time.Millisecond), rssMiB(cmd.Process.Pid))
	peak := newPeakRSS(cmd.Process.Pid)
	defer peak.stop()

	ctx := context.Background()
	client := mcp.NewClient(&mcp.Implementation{Name: "manyplugins", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: "http://" + addr + "/mcp"}, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()
	t0 := time.Now()
	page, err := cs.ListTools(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("tools_list_first_page %v (%d tools)\n", time.Since(t0).Round(time.Microsecond), len(page.Tools))
	var pages []time.Duration
	for range 20 {
		t := time.Now()
		if _, err := cs.ListTools(ctx, nil); err != nil {
			log.Fatal(err)
		}
		pages = append(pages, time.Since(t))
	}
	fmt.Printf("tools_list_page p50 %v max %v (20 more)\n", pct(pages, 50), pct(pages, 100))
	t0, all := time.Now(), 0
	for _, err := range cs.Tools(ctx, nil) {
		if err != nil {
			log.Fatal(err)
		}
		all++
	}
	fmt.Printf("tools_list_all_pages %v (%d tools)\n", time.Since(t0).Round(time.Microsecond), all)
	// waitForCompiles waits, with -wait-compiled, for the background
	// compilation to end, and reports when it did.
	waitForCompiles := func() {
		if !*waitCompiled {
			return
		}
		for metricValue("http://"+addr+"/metrics", "mcphost_plugins_preparing") > 0 {
			time.Sleep(50 * time.Millisecond)
		}
		fmt.Printf("compiled_all %v after ready (peak RSS %d MiB)\n", time.Since(readyAt).Round(time.Millisecond), peak.max())
		printMetrics("http://"+addr+"/metrics", "mcphost_plugins_prepared_total")
	}
	if !*calls {
		waitForCompiles()
		return
	}
	var argv map[string]any
	if err := jsonUnmarshal(*args, &argv); err != nil {
		log.Fatal(err)
	}
	call := func(i int) time.Duration {
		t := time.Now()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: fmt.Sprintf("p%d_%s", i, *tool), Arguments: argv})
		if err != nil || res.IsError {
			log.Fatalf("call p%d: %v %+v", i, err, res)
		}
		return time.Since(t)
	}
	var first, second []time.Duration
	var prober *probeCalls
	start := 0
	if *probe {
		first = append(first, call(0))
		start = 1
		prober = newProbe(ctx, "http://"+addr+"/mcp", fmt.Sprintf("p0_%s", *tool), argv)
		fmt.Printf("probe_before p50 %v p99 %v (%d calls)\n", pct(prober.run(2*time.Second), 50), pct(prober.last, 99), len(prober.last))
		prober.start()
	}
	for i := start; i < len(files); i++ {
		first = append(first, call(i))
		if *verbose {
			fmt.Printf("first call p%d %v\n", i, first[i].Round(100*time.Microsecond))
		}
	}
	if prober != nil {
		lat := prober.end()
		fmt.Printf("probe_during p50 %v p99 %v (%d calls, %d failed)\n", pct(lat, 50), pct(lat, 99), len(lat), prober.failed)
	}
	for i := range files {
		second = append(second, call(i))
	}
	fmt.Printf("first_call p50 %v max %v\n", pct(first, 50), pct(first, 100))
	fmt.Printf("warm_call p50 %v max %v\n", pct(second, 50), pct(second, 100))
	fmt.Printf("rss_after_calls_mib %d (peak since ready %d)\n", rssMiB(cmd.Process.Pid), peak.max())
	waitForCompiles()
	codeMetrics := []string{"mcphost_code_modules", "mcphost_code_loads_total", "mcphost_code_kept_modules", "mcphost_code_kept_bytes", "mcphost_code_kept_dropped_total"}
	printMetrics("http://"+addr+"/metrics", append([]string{"mcphost_memory_held_bytes", "mcphost_memory_evictions_total"}, codeMetrics...)...)
	if *idle > 0 {
		time.Sleep(*idle + 2*time.Second)
		fmt.Printf("rss_after_idle_mib %d\n", rssMiB(cmd.Process.Pid))
		printMetrics("http://"+addr+"/metrics", append([]string{"mcphost_memory_held_bytes"}, codeMetrics...)...)
		// A released plugin's module is deflated 10 s after its release
		// (plugin.deflateDelay) or after its kept compiled module is
		// freed: the settled figure.
		time.Sleep(10 * time.Second)
		fmt.Printf("rss_after_idle_settled_mib %d\n", rssMiB(cmd.Process.Pid))
		// Every plugin is released now: a call to each is a first call
		// to an idle plugin whose code is cached (on disk, or kept in
		// memory within max_idle_code_mb).
		var again []time.Duration
		for i := range files {
			again = append(again, call(i))
			if *verbose {
				fmt.Printf("idle call p%d %v\n", i, again[i].Round(100*time.Microsecond))
			}
		}
		fmt.Printf("idle_call p50 %v max %v\n", pct(again, 50), pct(again, 100))
		printMetrics("http://"+addr+"/metrics", codeMetrics...)
	}
}

// printMetrics prints the samples named names from the host's /metrics.
func printMetrics(url string, names ...string) {
	resp, err := http.Get(url)
	if err != nil {
		log.Printf("metrics: %v", err)
		return
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		log.Printf("metrics: %v", err)
		return
	}
	for line := range strings.Lines(string(body)) {
		for _, n := range names {
			if strings.HasPrefix(line, n+" ") {
				fmt.Print(line)
			}
		}
	}
}

func pct(d []time.Duration, p int) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	i := min(len(s)-1, len(s)*p/100)
	return s[i].Round(100 * time.Microsecond)
}

// rssMiB reads VmRSS of pid from /proc.
func rssMiB(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return -1
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			var kb int
			fmt.Sscanf(strings.TrimSpace(rest), "%d", &kb)
			return kb >> 10
		}
	}
	return -1
}

func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }

// metricValue reads one sample from the host's /metrics (-1 if absent).
func metricValue(url, name string) float64 {
	resp, err := http.Get(url)
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for line := range strings.Lines(string(body)) {
		if rest, ok := strings.CutPrefix(line, name+" "); ok {
			var v float64
			fmt.Sscanf(strings.TrimSpace(rest), "%g", &v)
			return v
		}
	}
	return -1
}

// peakRSS samples a process's RSS every 20 ms until stopped.
type peakRSS struct {
	mu   sync.Mutex
	peak int
	done chan struct{}
	wg   sync.WaitGroup
}

func newPeakRSS(pid int) *peakRSS {
	p := &peakRSS{done: make(chan struct{})}
	p.wg.Go(func() {
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			if r := rssMiB(pid); r > 0 {
				p.mu.Lock()
				p.peak = max(p.peak, r)
				p.mu.Unlock()
			}
			select {
			case <-p.done:
				return
			case <-t.C:
			}
		}
	})
	return p
}

func (p *peakRSS) max() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.peak
}

func (p *peakRSS) stop() { close(p.done); p.wg.Wait() }

// probeCalls calls one tool back to back from a session of its own.
type probeCalls struct {
	ctx    context.Context
	cs     *mcp.ClientSession
	name   string
	args   map[string]any
	last   []time.Duration
	failed int
	stopCh chan struct{}
	wg     sync.WaitGroup
}

func newProbe(ctx context.Context, endpoint, name string, args map[string]any) *probeCalls {
	client := mcp.NewClient(&mcp.Implementation{Name: "manyplugins-probe", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint}, nil)
	if err != nil {
		log.Fatal(err)
	}
	return &probeCalls{ctx: ctx, cs: cs, name: name, args: args}
}

// run calls for d and returns the latencies.
func (p *probeCalls) run(d time.Duration) []time.Duration {
	p.last = nil
	for end := time.Now().Add(d); time.Now().Before(end); {
		p.once()
	}
	return p.last
}

func (p *probeCalls) once() {
	t := time.Now()
	res, err := p.cs.CallTool(p.ctx, &mcp.CallToolParams{Name: p.name, Arguments: p.args})
	if err != nil || res.IsError {
		p.failed++
		return
	}
	p.last = append(p.last, time.Since(t))
}

// start calls in the background until end.
func (p *probeCalls) start() {
	p.last, p.stopCh = nil, make(chan struct{})
	p.wg.Go(func() {
		for {
			select {
			case <-p.stopCh:
				return
			default:
				p.once()
			}
		}
	})
}

func (p *probeCalls) end() []time.Duration {
	close(p.stopCh)
	p.wg.Wait()
	p.cs.Close()
	return p.last
}
