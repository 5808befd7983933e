// Command refservers compares one mcphost serving the five plugins that
// replace the MCP reference servers (plugins/filesystem, memory,
// sequential-thinking, fetch, time) with the Node reference servers
// (@modelcontextprotocol/server-filesystem, server-memory,
// server-sequential-thinking) run as the separate processes a desktop
// client starts: each side is started over stdio, as Claude Desktop does,
// and driven by a go-sdk client.
//
//	go run ./bench/refservers -mcphost bin/mcphost -node node -ref DIR
//
// DIR holds node_modules/ with the reference servers
// (scripts/reference-servers.sh --install prints it; scripts/bench-reference.sh
// does it all). mcphost serves examples/reference-servers.toml as a user
// runs it (HOME is the bench's directory; fetch may reach the loopback page
// the bench serves). For each side it measures the time from exec to an
// initialized session, the first call of each tool, the p50 and p90 of -n
// further calls, and the resident memory (VmRSS, and its peak VmHWM) of the
// server processes after the calls. mcphost runs with an empty cache (a
// first start: everything compiled), then with that cache (a later start),
// then with min_instances = 1 on every plugin (compiled and instantiated at
// start); last, its memory once its plugins are idle. The reference servers
// are run with node directly, and with -npx also as desktop configs
// usually start them (`npx -y PACKAGE@VERSION`: an npm process above each
// server, whose memory counts too). Memory is summed over each process and
// its descendants. fetch and time
// are Python servers upstream (no PyPI here): only mcphost's figures are
// given for them.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	bin := flag.String("mcphost", "bin/mcphost", "the mcphost binary")
	node := flag.String("node", "node", "the Node binary for the reference servers")
	refDir := flag.String("ref", "", "directory holding node_modules/ with the reference servers")
	root := flag.String("root", ".", "the checkout: its examples/reference-servers.toml and plugins/")
	idle := flag.Duration("idle", 25*time.Second, "how long after the calls the idle figure is read (the run sets idle_timeout to 20s)")
	n := flag.Int("n", 200, "warm calls per tool")
	npx := flag.String("npx", "", "also run the reference servers as desktop configs do, with this npx command (e.g. npx)")
	verbose := flag.Bool("v", false, "print each side's memory after each tool's calls (stderr)")
	flag.Parse()
	if *refDir == "" {
		log.Fatal("-ref is required (scripts/reference-servers.sh --install prints it)")
	}
	for _, p := range []*string{bin, refDir, root} {
		abs, err := filepath.Abs(*p)
		if err != nil {
			log.Fatal(err)
		}
		*p = abs
	}
	work, err := os.MkdirTemp("", "refservers-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(work)
	if work, err = filepath.EvalSymlinks(work); err != nil {
		log.Fatal(err)
	}
	b := &bench{work: work, n: *n, verbose: *verbose}
	if err := b.prepare(); err != nil {
		log.Fatal(err)
	}
	defer b.web.Close()

	ref := b.reference(*node, *refDir, "")
	cold := b.mcphost(*bin, *root, "mcphost, empty cache", nil)
	warm := b.mcphost(*bin, *root, "mcphost, cached", nil)
	eager := b.mcphost(*bin, *root, "mcphost, cached, min_instances = 1", func(config string) string {
		return strings.ReplaceAll(config, "\npath = ", "\nmin_instances = 1\npath = ")
	})
	sides := []*side{ref, cold, warm, eager}
	if *npx != "" {
		sides = append([]*side{b.reference(*node, *refDir, *npx)}, sides...)
	}
	report(sides, b.cases())
	fmt.Printf("\nmcphost, cached, idle_timeout = 20s: RSS %s after one call of each tool, %s once idle (%s later)\n",
		mib(b.idleRSS(*bin, *root, 0)), mib(b.idleRSS(*bin, *root, *idle)), *idle)
}

// bench holds the files both sides work on.
type bench struct {
	work    string // temporary directory
	n       int
	verbose bool
	web     *http.Server
	url     string // a page for fetch, on loopback
}

// The directory served by filesystem, the memory files, and a page.
func (b *bench) prepare() error {
	files := filepath.Join(b.work, "mcp", "files")
	for i := range 20 {
		dir := filepath.Join(files, "dir"+strconv.Itoa(i%4))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		text := strings.Repeat(fmt.Sprintf("line %d of file %d\n", i, i), 50)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%d.txt", i)), []byte(text), 0o644); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(filepath.Join(b.work, "mcp", "memory"), 0o755); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	page := "<html><head><title>Bench</title></head><body><article><h1>Bench page</h1>" +
		strings.Repeat("<p>Some <b>text</b> with a <a href=\"/x\">link</a>.</p>", 40) + "</article></body></html>"
	b.web = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, page)
	})}
	go b.web.Serve(ln) //nolint:errcheck // ends with Close
	b.url = "http://" + ln.Addr().String() + "/page"
	return nil
}

// testCase is one tool call measured on every side that has the tool.
type testCase struct {
	server string // reference server name (filesystem, memory, sequential-thinking, fetch, time)
	tool   string
	args   func(i int) map[string]any
}

func (b *bench) cases() []testCase {
	files := filepath.Join(b.work, "mcp", "files")
	fixed := func(m map[string]any) func(int) map[string]any { return func(int) map[string]any { return m } }
	return []testCase{
		{"filesystem", "read_text_file", fixed(map[string]any{"path": filepath.Join(files, "dir1", "f5.txt")})},
		{"filesystem", "list_directory", fixed(map[string]any{"path": filepath.Join(files, "dir2")})},
		{"filesystem", "directory_tree", fixed(map[string]any{"path": files})},
		{"filesystem", "search_files", fixed(map[string]any{"path": files, "pattern": "**/f1*.txt"})},
		{"filesystem", "get_file_info", fixed(map[string]any{"path": filepath.Join(files, "dir0", "f0.txt")})},
		{"filesystem", "write_file", func(i int) map[string]any {
			return map[string]any{"path": filepath.Join(files, "written.txt"), "content": fmt.Sprintf("write %d\n", i)}
		}},
		{"memory", "create_entities", func(i int) map[string]any {
			return map[string]any{"entities": []any{map[string]any{"name": fmt.Sprintf("e%d", i%50), "entityType": "thing", "observations": []any{"seen"}}}}
		}},
		{"memory", "search_nodes", fixed(map[string]any{"query": "e1"})},
		{"memory", "read_graph", fixed(map[string]any{})},
		{"sequential-thinking", "sequentialthinking", func(i int) map[string]any {
			return map[string]any{"thought": fmt.Sprintf("step %d", i+1), "thoughtNumber": i + 1, "totalThoughts": i + 2, "nextThoughtNeeded": true}
		}},
		{"time", "get_current_time", fixed(map[string]any{"timezone": "Europe/Paris"})},
		{"time", "convert_time", fixed(map[string]any{"source_timezone": "America/New_York", "time": "16:30", "target_timezone": "Asia/Tokyo"})},
		{"fetch", "fetch", fixed(map[string]any{"url": b.url, "max_length": 2000})},
	}
}

// side is one way of serving the tools: its sessions by server name, its
// processes, and what was measured.
type side struct {
	name     string
	sessions map[string]*mcp.ClientSession
	pids     []int
	start    time.Duration           // exec to every session initialized
	results  map[string]*toolFigures // by tool
	rss, hwm int64                   // KiB, summed over its processes
}

type toolFigures struct {
	first    time.Duration
	p50, p90 time.Duration
	err      string
}

// reference starts the three reference servers with node (npx empty) or,
// as desktop configs start them, with `npx -y PACKAGE@VERSION` (npx the
// npx command; each server then runs under an npm process, counted too).
func (b *bench) reference(node, dir, npx string) *side {
	name := "reference servers (3 Node processes)"
	if npx != "" {
		name = "reference servers via npx (3 npm + 3 Node processes)"
	}
	s := &side{name: name, sessions: map[string]*mcp.ClientSession{}}
	servers := []struct {
		name string
		args []string
		env  []string
	}{
		{"filesystem", []string{filepath.Join(b.work, "mcp", "files")}, nil},
		{"memory", nil, []string{"MEMORY_FILE_PATH=" + filepath.Join(b.work, "mcp", "memory", "reference.jsonl")}},
		{"sequential-thinking", nil, []string{"DISABLE_THOUGHT_LOGGING=true"}},
	}
	begin := time.Now()
	for _, srv := range servers {
		entry := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "server-"+srv.name, "dist", "index.js")
		cmd := exec.Command(node, append([]string{entry}, srv.args...)...)
		if npx != "" {
			cmd = exec.Command(npx, append([]string{"-y", "@modelcontextprotocol/server-" + srv.name + "@" + referenceVersion}, srv.args...)...)
		}
		cmd.Env = append(os.Environ(), srv.env...)
		s.sessions[srv.name] = connect(cmd)
		s.pids = append(s.pids, cmd.Process.Pid)
	}
	s.start = time.Since(begin)
	b.run(s)
	return s
}

// referenceVersion is the version of the reference servers compared
// (scripts/reference-servers/package.json pins the same).
const referenceVersion = "2026.8.31"

// config is examples/reference-servers.toml as a user runs it, with two
// changes: plugin paths made absolute, and fetch allowed to reach the
// loopback page the bench serves. HOME is the bench's directory, so its
// "~/mcp/…" grants are the bench's files; edit (if not nil) changes it
// further.
func (b *bench) config(root string, edit func(string) string) string {
	example, err := os.ReadFile(filepath.Join(root, "examples", "reference-servers.toml"))
	if err != nil {
		log.Fatal(err)
	}
	config := strings.ReplaceAll(string(example), `path = "../plugins/`, `path = "`+filepath.Join(root, "plugins")+"/")
	config = strings.Replace(config, `allowed_hosts = ["*"]`, `allowed_hosts = ["*"]`+"\nallow_private_network = true", 1)
	if edit != nil {
		config = edit(config)
	}
	file := filepath.Join(b.work, "reference-servers.toml")
	if err := os.WriteFile(file, []byte(config), 0o600); err != nil {
		log.Fatal(err)
	}
	return file
}

// serve starts mcphost on config over stdio, as a desktop client does.
func (b *bench) serve(bin, config string) (*mcp.ClientSession, *exec.Cmd) {
	cmd := exec.Command(bin, "serve", "--config", config)
	cmd.Env = append(os.Environ(), "HOME="+b.work, "XDG_CACHE_HOME="+filepath.Join(b.work, ".cache"))
	return connect(cmd), cmd
}

func (b *bench) mcphost(bin, root, name string, edit func(string) string) *side {
	s := &side{name: name, sessions: map[string]*mcp.ClientSession{}}
	config := b.config(root, edit)
	begin := time.Now()
	cs, cmd := b.serve(bin, config)
	s.start = time.Since(begin)
	for _, srv := range []string{"filesystem", "memory", "sequential-thinking", "time", "fetch"} {
		s.sessions[srv] = cs
	}
	s.pids = []int{cmd.Process.Pid}
	b.run(s)
	return s
}

// idleRSS starts mcphost (cached) with every plugin's idle_timeout at
// 20s, calls each tool once, waits wait and returns its RSS (KiB).
func (b *bench) idleRSS(bin, root string, wait time.Duration) int64 {
	config := b.config(root, func(config string) string {
		return strings.ReplaceAll(config, "\npath = ", "\nidle_timeout = \"20s\"\npath = ")
	})
	cs, cmd := b.serve(bin, config)
	defer cs.Close()
	for _, c := range b.cases() {
		if _, err := callOnce(cs, c.tool, c.args(0)); err != nil {
			log.Fatal(err)
		}
	}
	time.Sleep(wait)
	rss, _ := memoryOf(cmd.Process.Pid)
	return rss
}

func mib(kib int64) string { return fmt.Sprintf("%.1f MiB", float64(kib)/1024) }

// run measures every case the side serves, then its memory, and closes it.
func (b *bench) run(s *side) {
	s.results = map[string]*toolFigures{}
	if b.verbose {
		var rss int64
		for _, pid := range s.pids {
			r, _ := memoryOf(pid)
			rss += r
		}
		fmt.Fprintf(os.Stderr, "%s: RSS %.1f MiB before any call\n", s.name, float64(rss)/1024)
	}
	for _, c := range b.cases() {
		cs := s.sessions[c.server]
		if cs == nil {
			continue
		}
		f := &toolFigures{}
		s.results[c.tool] = f
		d, err := callOnce(cs, c.tool, c.args(0))
		if err != nil {
			f.err = err.Error()
			continue
		}
		f.first = d
		times := make([]time.Duration, 0, b.n)
		for i := range b.n {
			d, err := callOnce(cs, c.tool, c.args(i+1))
			if err != nil {
				f.err = err.Error()
				break
			}
			times = append(times, d)
		}
		if len(times) > 0 {
			slices.Sort(times)
			f.p50, f.p90 = times[len(times)/2], times[len(times)*9/10]
		}
		if b.verbose {
			var rss int64
			for _, pid := range s.pids {
				r, _ := memoryOf(pid)
				rss += r
			}
			fmt.Fprintf(os.Stderr, "%s: RSS %.1f MiB after %s\n", s.name, float64(rss)/1024, c.tool)
		}
	}
	for _, pid := range s.pids {
		rss, hwm := memoryOf(pid)
		s.rss += rss
		s.hwm += hwm
	}
	closed := map[*mcp.ClientSession]bool{}
	for _, cs := range s.sessions {
		if !closed[cs] {
			closed[cs] = true
			cs.Close()
		}
	}
}

func callOnce(cs *mcp.ClientSession, tool string, args map[string]any) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	begin := time.Now()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	d := time.Since(begin)
	if err != nil {
		return d, fmt.Errorf("%s: %w", tool, err)
	}
	if res.IsError {
		text := ""
		if len(res.Content) > 0 {
			if tc, ok := res.Content[0].(*mcp.TextContent); ok {
				text = tc.Text
			}
		}
		return d, fmt.Errorf("%s: tool error: %s", tool, text)
	}
	return d, nil
}

func connect(cmd *exec.Cmd) *mcp.ClientSession {
	client := mcp.NewClient(&mcp.Implementation{Name: "refservers-bench", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		log.Fatalf("start %s: %v", strings.Join(cmd.Args, " "), err)
	}
	return cs
}

// memoryOf is VmRSS and VmHWM (KiB) of process pid and its descendants.
func memoryOf(pid int) (rss, hwm int64) {
	for _, p := range processTree(pid) {
		r, h := processMemory(p)
		rss += r
		hwm += h
	}
	return rss, hwm
}

// processTree is pid and its descendants.
func processTree(pid int) []int {
	children := map[int][]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid …: comm may hold spaces, so after the last ')'.
		fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(fields) > 1 {
			ppid, _ := strconv.Atoi(fields[1])
			children[ppid] = append(children[ppid], p)
		}
	}
	tree := []int{pid}
	for i := 0; i < len(tree); i++ {
		tree = append(tree, children[tree[i]]...)
	}
	return tree
}

// processMemory reads VmRSS and VmHWM (KiB) of process pid.
func processMemory(pid int) (rss, hwm int64) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		fields := strings.Fields(line)
		if len(fields) < 2 {
			continue
		}
		v, _ := strconv.ParseInt(fields[1], 10, 64)
		switch fields[0] {
		case "VmRSS:":
			rss = v
		case "VmHWM:":
			hwm = v
		}
	}
	return rss, hwm
}

func report(sides []*side, cases []testCase) {
	ms := func(d time.Duration) string { return fmt.Sprintf("%.2f", float64(d.Microseconds())/1000) }
	fmt.Println("| | " + strings.Join(names(sides), " | ") + " |")
	fmt.Println("|---" + strings.Repeat("|---:", len(sides)) + "|")
	row := func(label string, cell func(*side) string) {
		cells := make([]string, len(sides))
		for i, s := range sides {
			cells[i] = cell(s)
		}
		fmt.Printf("| %s | %s |\n", label, strings.Join(cells, " | "))
	}
	row("start to initialized (ms)", func(s *side) string { return ms(s.start) })
	row("RSS after the calls (MiB)", func(s *side) string { return fmt.Sprintf("%.1f", float64(s.rss)/1024) })
	row("peak RSS (MiB)", func(s *side) string { return fmt.Sprintf("%.1f", float64(s.hwm)/1024) })
	for _, c := range cases {
		row(c.tool+": first / p50 / p90 (ms)", func(s *side) string {
			f := s.results[c.tool]
			switch {
			case f == nil:
				return "—"
			case f.err != "":
				return "error: " + f.err
			}
			return ms(f.first) + " / " + ms(f.p50) + " / " + ms(f.p90)
		})
	}
}

func names(sides []*side) []string {
	var out []string
	for _, s := range sides {
		out = append(out, s.name)
	}
	return out
}
