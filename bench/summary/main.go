// Command summary prints the summary of `make bench` (scripts/bench.sh):
// the issue #9 figures taken from the Go benchmarks' output, each beside its
// goal, and the load generator's results for mcphost and the two native
// go-sdk servers side by side ("plain": default options, what the goals are
// judged against; "native": mcphost's handler options), with the ratios.
//
//	go run ./bench/summary -gobench gobench.txt -load load.jsonl
//
// -gobench is the text output of `go test -bench` (any number of packages
// and -count runs: the median of the runs of each benchmark is shown);
// -load holds one bench/loadgen -json result per line, labelled "mcphost"
// "plain" or "native" (several rounds of the same target, protocol revision and
// session count are reduced to their median).
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "summary:", err)
		os.Exit(1)
	}
}

func run(w io.Writer) error {
	gobench := flag.String("gobench", "", "output of go test -bench")
	load := flag.String("load", "", "bench/loadgen -json results, one per line")
	flag.Parse()
	if *gobench == "" && *load == "" {
		return errors.New("nothing to summarize: give -gobench and/or -load")
	}
	if *gobench != "" {
		b, err := readGoBench(*gobench)
		if err != nil {
			return err
		}
		printGoBench(w, b)
	}
	if *load != "" {
		results, err := readLoad(*load)
		if err != nil {
			return err
		}
		printLoad(w, results)
	}
	return nil
}

// benchmarks maps a benchmark's name (without the -GOMAXPROCS suffix) to
// its metrics by unit, one value per run.
type benchmarks map[string]map[string][]float64

// benchLine matches a result line: name, iterations, then value/unit pairs.
var benchLine = regexp.MustCompile(`^(Benchmark\S+?)(?:-\d+)?\s+\d+\s+(.*)$`)

func readGoBench(path string) (benchmarks, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read Go benchmarks: %w", err)
	}
	defer f.Close()
	b := benchmarks{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		m := benchLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		fields := strings.Fields(m[2])
		if b[m[1]] == nil {
			b[m[1]] = map[string][]float64{}
		}
		for i := 0; i+1 < len(fields); i += 2 {
			v, err := strconv.ParseFloat(fields[i], 64)
			if err != nil {
				continue
			}
			b[m[1]][fields[i+1]] = append(b[m[1]][fields[i+1]], v)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read Go benchmarks: %w", err)
	}
	return b, nil
}

// get returns the median of a benchmark's metric over its runs.
func (b benchmarks) get(name, unit string) (float64, bool) {
	return median(b[name][unit])
}

func median(v []float64) (float64, bool) {
	if len(v) == 0 {
		return 0, false
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2], true
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2, true
}

// figure is one line of the Go benchmarks' summary.
type figure struct {
	what, bench, unit, goal string
}

var figures = []figure{
	{"Wasm hop, echo, minimal envelope: p50 µs", "BenchmarkWasmHop/minimal", "p50-µs", "goal <= 20"},
	{"Wasm hop, echo, stateful envelope: p50 µs", "BenchmarkWasmHop/stateful", "p50-µs", ""},
	{"Wasm hop, echo, stateless envelope: p50 µs", "BenchmarkWasmHop/stateless", "p50-µs", ""},
	{"Wasm hop, echo, 4 KiB text: p50 µs", "BenchmarkWasmHop/text=4KiB", "p50-µs", ""},
	{"Wasm hop, WAT ping (no guest runtime): p50 µs", "BenchmarkWasmHop/wat-ping", "p50-µs", ""},
	{"Extism floor, empty export: p50 µs", "BenchmarkExtismFloor/abi_version", "p50-µs", ""},
	{"echo in the guest, termination checks on: p50 µs", "BenchmarkExtismFloor/call_tool", "p50-µs", ""},
	{"echo in the guest, termination checks off: p50 µs", "BenchmarkExtismFloor/call_tool-unchecked", "p50-µs", "(not shippable)"},
	{"bridge.CallTool (validate + envelope + hop + decode): p50 µs", "BenchmarkBridgeCallTool", "p50-µs", ""},
	{"tools/call echo in memory, mcphost: p50 µs", "BenchmarkCallEcho/mcphost/2025-11-25", "p50-µs", ""},
	{"tools/call echo in memory, native go-sdk: p50 µs", "BenchmarkCallEcho/native/2025-11-25", "p50-µs", ""},
	{"host start, 10 plugins, cold cache: p50 ms", "BenchmarkHostStart/cold", "p50-new-ms", ""},
	{"host start, 10 plugins, warm cache: p50 ms", "BenchmarkHostStart/warm", "p50-new-ms", "goal < 300"},
	{"host start, 10 plugins/rust, warm cache: p50 ms", "BenchmarkHostStart/warm-rust", "p50-new-ms", "goal < 300"},
	{"tools/list, 1,000 tools, stateful: p50 µs per page", "BenchmarkToolsList/2025-11-25", "p50-page-µs", "goal < 5000"},
	{"tools/list, 1,000 tools, stateless: p50 µs per page", "BenchmarkToolsList/2026-07-28", "p50-page-µs", "goal < 5000"},
	{"idle instance (plugins/everything): RSS KiB", "BenchmarkIdleInstanceMemory", "rss-KiB/instance", ""},
	{"idle instance (plugins/everything): Go heap MiB (reserved)", "BenchmarkIdleInstanceMemory", "heapinuse-MiB/instance", ""},
	{"idle plugin (tentools, 1 instance): RSS MiB", "BenchmarkIdlePluginMemory", "rss-MiB/plugin", ""},
}

func printGoBench(w io.Writer, b benchmarks) {
	fmt.Fprintln(w, "== Go benchmarks (median of the runs)")
	for _, f := range figures {
		v, ok := b.get(f.bench, f.unit)
		if !ok {
			continue
		}
		fmt.Fprintf(w, "%-62s %10.1f  %s\n", f.what, v, f.goal)
	}
	one, ok1 := b.get("BenchmarkCallers/callers=1", "calls/s")
	two, ok2 := b.get("BenchmarkCallers/callers=2", "calls/s")
	if ok1 && ok2 && one > 0 {
		fmt.Fprintf(w, "%-62s %10.2f  goal >= 1.8 (%.0f -> %.0f calls/s)\n", "1 -> 2 callers on one plugin: speed-up", two/one, one, two)
		c1, _ := b.get("BenchmarkCallers/callers=1", "cores")
		c2, _ := b.get("BenchmarkCallers/callers=2", "cores")
		u1, _ := b.get("BenchmarkCallers/callers=1", "cpu-µs/call")
		u2, ok := b.get("BenchmarkCallers/callers=2", "cpu-µs/call")
		if ok && u1 > 0 {
			fmt.Fprintf(w, "%-62s %10s  (cores used %.2f -> %.2f, CPU %.0f -> %.0f µs/call)\n", "  1 -> 2 callers: what the machine gave", "", c1, c2, u1, u2)
		}
	}
	for _, mode := range []string{"stateful", "stateless"} {
		m, okm := b.get("BenchmarkHTTPEcho/mcphost/"+mode+"/c=8", "calls/s")
		n, okn := b.get("BenchmarkHTTPEcho/native/"+mode+"/c=8", "calls/s")
		if okm && okn && n > 0 {
			fmt.Fprintf(w, "%-62s %10.2f  (%.0f / %.0f calls/s, in-process)\n", "HTTP echo c=8 "+mode+": mcphost/native", m/n, m, n)
			mc, ok1 := b.get("BenchmarkHTTPEcho/mcphost/"+mode+"/c=8", "cpu-µs/call")
			nc, ok2 := b.get("BenchmarkHTTPEcho/native/"+mode+"/c=8", "cpu-µs/call")
			if ok1 && ok2 && mc > 0 {
				fmt.Fprintf(w, "%-62s %10.2f  (%.0f / %.0f µs/call, client + server)\n", "HTTP echo c=8 "+mode+": CPU native/mcphost", nc/mc, nc, mc)
			}
		}
	}
	fmt.Fprintln(w)
}

// result is the part of a bench/loadgen result the summary uses.
type result struct {
	Label              string  `json:"label"`
	ProtocolVersion    string  `json:"protocol_version"`
	Sessions           int     `json:"sessions"`
	Calls              int     `json:"calls"`
	Errors             int     `json:"errors"`
	CallsPerSec        float64 `json:"calls_per_sec"`
	P50us              float64 `json:"p50_us"`
	P99us              float64 `json:"p99_us"`
	ServerCPUusPerCall float64 `json:"server_cpu_us_per_call"`
	Load1Before        float64 `json:"load1_before"`
	Load1After         float64 `json:"load1_after"`
}

func readLoad(path string) ([]result, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read load results: %w", err)
	}
	defer f.Close()
	var out []result
	dec := json.NewDecoder(f)
	for {
		var r result
		if err := dec.Decode(&r); errors.Is(err, io.EOF) {
			return out, nil
		} else if err != nil {
			return nil, fmt.Errorf("read load results %s: %w", path, err)
		}
		out = append(out, r)
	}
}

// cell is the median over rounds of one target at one protocol revision
// and session count.
type cell struct {
	rate, p50, p99, cpu, load float64
	errors, rounds            int
}

func reduce(rs []result) cell {
	var c cell
	var rate, p50, p99, cpu, load []float64
	for _, r := range rs {
		rate, p50, p99 = append(rate, r.CallsPerSec), append(p50, r.P50us), append(p99, r.P99us)
		cpu, load = append(cpu, r.ServerCPUusPerCall), append(load, (r.Load1Before+r.Load1After)/2)
		c.errors += r.Errors
	}
	c.rate, _ = median(rate)
	c.p50, _ = median(p50)
	c.p99, _ = median(p99)
	c.cpu, _ = median(cpu)
	c.load, _ = median(load)
	c.rounds = len(rs)
	return c
}

// roundRatios pairs the runs of mcphost and plain round by round (the
// i-th of each, in the order they ran) and gives the median of their
// calls/s ratios with its range: two servers measured a few seconds apart
// share the machine's load better than two medians do.
func roundRatios(m, p []result) string {
	var rs []float64
	for i := range min(len(m), len(p)) {
		if p[i].CallsPerSec > 0 {
			rs = append(rs, m[i].CallsPerSec/p[i].CallsPerSec)
		}
	}
	med, ok := median(rs)
	if !ok {
		return "-"
	}
	return fmt.Sprintf("%.2f (%.2f–%.2f)", med, slices.Min(rs), slices.Max(rs))
}

func printLoad(w io.Writer, results []result) {
	type key struct {
		version  string
		sessions int
	}
	groups := map[key]map[string][]result{}
	var keys []key
	for _, r := range results {
		k := key{r.ProtocolVersion, r.Sessions}
		if groups[k] == nil {
			groups[k] = map[string][]result{}
			keys = append(keys, k)
		}
		groups[k][r.Label] = append(groups[k][r.Label], r)
	}
	slices.SortFunc(keys, func(a, b key) int {
		if c := strings.Compare(a.version, b.version); c != 0 {
			return c
		}
		return a.sessions - b.sessions
	})
	fmt.Fprintln(w, "== Load: echo over Streamable HTTP, bench/loadgen (median of the rounds)")
	fmt.Fprintln(w, "Each cell: calls/s, p50/p99 latency in µs, server CPU µs per call.")
	fmt.Fprintln(w, "| revision | C | mcphost | plain go-sdk | go-sdk, mcphost's options | ratio calls/s (vs plain; vs options) | per round vs plain: median (min–max) | ratio CPU/call (vs plain; vs options) | load1 |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|")
	for _, k := range keys {
		cells := map[string]cell{}
		var load []float64
		errors := []string{}
		for _, label := range []string{"mcphost", "plain", "native"} {
			if rs := groups[k][label]; len(rs) > 0 {
				c := reduce(rs)
				cells[label] = c
				load = append(load, c.load)
				if c.errors > 0 {
					errors = append(errors, fmt.Sprintf("%s %d", label, c.errors))
				}
			}
		}
		show := func(label string) string {
			c, ok := cells[label]
			if !ok {
				return "-"
			}
			return fmt.Sprintf("%.0f (%.0f/%.0f, %.0f)", c.rate, c.p50, c.p99, c.cpu)
		}
		ratio := func(f func(c cell) float64, inverse bool) string {
			m, ok := cells["mcphost"]
			if !ok {
				return "-"
			}
			var out []string
			for _, label := range []string{"plain", "native"} {
				n, ok := cells[label]
				switch {
				case !ok || f(n) == 0 || f(m) == 0:
					out = append(out, "-")
				case inverse:
					out = append(out, fmt.Sprintf("%.2f", f(n)/f(m)))
				default:
					out = append(out, fmt.Sprintf("%.2f", f(m)/f(n)))
				}
			}
			return strings.Join(out, "; ")
		}
		l, _ := median(load)
		fmt.Fprintf(w, "| %s | %d | %s | %s | %s | %s | %s | %s | %.1f |\n", k.version, k.sessions,
			show("mcphost"), show("plain"), show("native"),
			ratio(func(c cell) float64 { return c.rate }, false), roundRatios(groups[k]["mcphost"], groups[k]["plain"]),
			ratio(func(c cell) float64 { return c.cpu }, true), l)
		if len(errors) > 0 {
			fmt.Fprintf(w, "  (errors: %s)\n", strings.Join(errors, ", "))
		}
	}
	fmt.Fprintln(w, "ratio calls/s = mcphost/native throughput of the medians (goal >= 0.95 at C = 8, against plain: issue 27); per round = mcphost/plain in each round, the two run back to back; ratio CPU/call = native/mcphost server CPU per call (1 = same cost).")
	fmt.Fprintln(w, "plain go-sdk: mcp.NewStreamableHTTPHandler with default options, default GC (what a user would write instead). go-sdk, mcphost's options: event store, session timeout and Host guard as mcphost sets them.")
}
