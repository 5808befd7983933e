package deploy_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/internal/testutil"
)

// drainDelay is the replicas' [server] drain_delay. HAProxy's checks below
// (inter 200ms, fastinter 100ms, fall 2, timeout check 500ms) take a
// draining replica out within 0.8 s of /readyz turning 503, well inside it.
const drainDelay = 2 * time.Second

// patience bounds every wait of the test. Nothing is expected to take more
// than a fraction of it; it is long so that a loaded machine does not fail
// the test.
const patience = 60 * time.Second

// findHAProxy returns the haproxy executable, or "" when there is none.
// Debian installs it in /usr/sbin, which a non-root PATH may lack.
func findHAProxy() string {
	if p, err := exec.LookPath("haproxy"); err == nil {
		return p
	}
	for _, p := range []string{"/usr/sbin/haproxy", "/usr/local/sbin/haproxy"} {
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}

// requireHAProxy returns the haproxy executable, or skips the test.
func requireHAProxy(t *testing.T) string {
	t.Helper()
	p := findHAProxy()
	if p == "" {
		t.Skip("haproxy is not installed, so the load-balancer test cannot run: " +
			"install it with `sudo apt-get install haproxy` or scripts/ensure-haproxy.sh (as root)")
	}
	return p
}

// TestHAProxyShippedConfigIsValid checks deploy/haproxy.cfg with
// `haproxy -c`, leaving out the global settings that depend on how HAProxy
// is installed (its user, group and chroot directory).
func TestHAProxyShippedConfigIsValid(t *testing.T) {
	haproxy := requireHAProxy(t)
	b, err := os.ReadFile("haproxy.cfg")
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for line := range strings.SplitSeq(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 0 && (f[0] == "user" || f[0] == "group" || f[0] == "chroot") {
			continue
		}
		kept = append(kept, line)
	}
	cfg := filepath.Join(t.TempDir(), "haproxy.cfg")
	if err := os.WriteFile(cfg, []byte(strings.Join(kept, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(haproxy, "-c", "-f", cfg).CombinedOutput(); err != nil {
		t.Fatalf("haproxy -c deploy/haproxy.cfg: %v\n%s", err, out)
	}
}

// TestHAProxyRoundRobinAndDrain starts two mcphost replicas (the real
// binary, stateless, on loopback) and HAProxy in front of them, drives
// calls through HAProxy from several go-sdk clients at once, and checks
// that they land on both replicas. It then sends SIGTERM to replica a
// while a call is running on it and keeps calling: a's /readyz turns 503,
// HAProxy's health check takes it out, a finishes what it has and exits 0,
// b serves the rest. Not one call may fail, and every call must have run
// exactly once (the replicas' audit logs hold as many lines as there were
// answers).
func TestHAProxyRoundRobinAndDrain(t *testing.T) {
	haproxy := requireHAProxy(t)
	if testing.Short() {
		t.Skip("starts HAProxy and two mcphost processes; skipped in -short mode")
	}
	began := time.Now()
	bin := buildMCPHost(t)
	hello := testutil.GoPlugin(t, "plugins/hello")
	everything := testutil.GoPlugin(t, "plugins/everything")

	// HAProxy's two sockets are bound here and handed to it (bind fd@N),
	// so that the replicas can be told the frontend's address up front.
	front := listenLoopback(t)
	stats := listenLoopback(t)
	frontAddr, statsAddr := front.Addr().String(), stats.Addr().String()

	replicas := map[string]*process{}
	for _, name := range []string{"a", "b"} {
		replicas[name] = startReplica(t, bin, name, fmt.Sprintf(replicaConfig, name, drainDelay, frontAddr, hello, everything))
	}
	a, b := replicas["a"], replicas["b"]

	cfg := fmt.Sprintf(haproxyConfig, a.mcpAddr, a.opsPort(), b.mcpAddr, b.opsPort())
	startHAProxy(t, haproxy, cfg, front, stats)
	hs := &haproxyStats{url: "http://" + statsAddr + "/stats;csv"}
	eventually(t, "HAProxy sees both replicas UP", func() (bool, string) {
		sa, sb := hs.status(t, "a"), hs.status(t, "b")
		return sa == "UP" && sb == "UP", fmt.Sprintf("a %s, b %s", sa, sb)
	})
	t.Logf("setup (build, plugins, two replicas, HAProxy): %v", time.Since(began).Round(time.Millisecond))

	// Four callers make quick echo calls (paced to 50 a second each), two
	// make calls that take 150 ms (test_tool_with_progress), so that some
	// are in flight whenever the drain starts.
	load := &callers{endpoint: "http://" + frontAddr + "/mcp"}
	calling := time.Now()
	for i := range 6 {
		load.start(t, i, i >= 4)
	}
	t.Cleanup(load.stopAndWait)

	eventually(t, "calls land on both replicas", func() (bool, string) {
		na, nb := a.callsServed(t), b.callsServed(t)
		return na >= 100 && nb >= 100, fmt.Sprintf("a served %v, b %v; %d answered, %d failed", na, nb, load.ok.Load(), load.failed.Load())
	})

	// Drain a while it runs a slow call, so that a call is in flight when
	// the drain starts (waited for, not required: a busy machine may not
	// show one, and the audit log reports what happened either way).
	inFlightSeen := poll(patience/3, func() bool { return a.instancesInUse(t, "everything") >= 1 })
	sigterm := time.Now()
	if err := a.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatalf("SIGTERM to replica a: %v", err)
	}
	// /readyz answers 503 for drain_delay; a machine stalled for longer
	// than that may only see a gone, which is no failure of the drain.
	var unready time.Duration
	eventually(t, "a's /readyz turns 503", func() (bool, string) {
		code := a.readyz()
		if code == http.StatusServiceUnavailable {
			unready = time.Since(sigterm)
			return true, ""
		}
		return a.hasExited(), fmt.Sprintf("/readyz %d", code)
	})
	eventually(t, "HAProxy marks a DOWN", func() (bool, string) {
		s := hs.status(t, "a")
		return s == "DOWN", "a is " + s
	})
	down := time.Since(sigterm)
	var exitErr error
	select {
	case <-a.exited:
		exitErr = a.waitErr
	case <-time.After(patience):
		t.Fatalf("replica a did not exit within %v of SIGTERM", patience)
	}
	exited := time.Since(sigterm)
	if exitErr != nil {
		t.Errorf("replica a exited with %v after SIGTERM, want exit status 0", exitErr)
	}

	// Keep calling: b alone serves them now.
	bAtExit := b.callsServed(t)
	eventually(t, "b serves calls after a has gone", func() (bool, string) {
		n := b.callsServed(t)
		return n >= bAtExit+50, fmt.Sprintf("b served %v since a exited", n-bAtExit)
	})
	load.stopAndWait()
	callingFor, total := time.Since(calling), time.Since(began)

	// The figures. Every call that was answered ran on exactly one
	// replica, so the audit logs together hold one line per answer.
	auditA, auditB := readAudit(t, a.auditPath), readAudit(t, b.auditPath)
	var aBefore, aInFlight, aDuring, bBefore int
	var aLast time.Time
	for _, e := range auditA {
		end := e.Time.Add(time.Duration(e.DurationMS * float64(time.Millisecond)))
		switch {
		case !e.Time.Before(sigterm):
			aDuring++
		case end.After(sigterm):
			aInFlight++
		default:
			aBefore++
		}
		if e.Time.After(aLast) {
			aLast = e.Time
		}
		if e.Outcome != "ok" {
			t.Errorf("replica a audit: %s %s outcome %s (%s)", e.Method, e.Name, e.Outcome, e.Error)
		}
	}
	for _, e := range auditB {
		if e.Time.Before(sigterm) {
			bBefore++
		}
		if e.Outcome != "ok" {
			t.Errorf("replica b audit: %s %s outcome %s (%s)", e.Method, e.Name, e.Outcome, e.Error)
		}
	}
	retries, redispatches := hs.backendCounter(t, "wretr"), hs.backendCounter(t, "wredis")

	ok, failed := load.ok.Load(), load.failed.Load()
	t.Logf("calls: %d answered, %d failed (%d fast echo, %d slow 150 ms) in %v of calling; test took %v",
		ok, failed, load.fast.Load(), load.slow.Load(), callingFor.Round(time.Millisecond), total.Round(time.Millisecond))
	t.Logf("replica a: %d calls (%d before SIGTERM, %d in flight at SIGTERM, %d started while draining); slow call seen in flight when signalled: %v",
		len(auditA), aBefore, aInFlight, aDuring, inFlightSeen)
	t.Logf("replica b: %d calls (%d before SIGTERM, %v after a exited)", len(auditB), bBefore, b.callsServed(t)-bAtExit)
	unreadyText := "not seen (a had gone)"
	if unready > 0 {
		unreadyText = "after " + unready.Round(time.Millisecond).String()
	}
	t.Logf("drain of a (drain_delay %v): /readyz 503 %s, HAProxy DOWN after %v, last call began %v, exited (%v) after %v",
		drainDelay, unreadyText, down.Round(time.Millisecond),
		aLast.Sub(sigterm).Round(time.Millisecond), exitStatus(exitErr), exited.Round(time.Millisecond))
	t.Logf("HAProxy: %v retries, %v redispatches", retries, redispatches)

	if failed != 0 {
		t.Errorf("%d of %d calls failed through HAProxy, want 0; first failures:\n%s", failed, ok+failed, strings.Join(load.failures(), "\n"))
	}
	if aBefore == 0 || len(auditB) == 0 {
		t.Errorf("calls did not land on both replicas: a %d, b %d", len(auditA), len(auditB))
	}
	if got := int64(len(auditA) + len(auditB)); got != ok {
		t.Errorf("the replicas' audit logs record %d calls, the clients got %d answers: a call ran twice or not at all", got, ok)
	}
}

// replicaConfig is a replica's mcphost.toml: name, drain_delay, HAProxy's
// frontend address (the Host clients send), the hello and everything
// plugins. /metrics, /healthz and /readyz are on a port of their own, as in
// deploy/.
const replicaConfig = `
[server]
name = "replica-%s"
stateless = true
drain_delay = "%s"
allowed_origins = ["http://%s"]
watch = false
lock_file = "off"

[server.metrics]
enabled = true
listen = "127.0.0.1:0"

[server.audit]
file = "audit.jsonl"

[[plugin]]
name = "hello"
path = %q

[[plugin]]
name = "everything"
path = %q
prefix = "ev_"
`

// haproxyConfig is deploy/haproxy.cfg with loopback sockets (fd 3: the MCP
// frontend, fd 4: the stats page), timings scaled to drainDelay, logs on
// stderr, and replica a and b's MCP and ops addresses.
const haproxyConfig = `
global
	log stderr format raw local0 info
	maxconn 1024

defaults
	mode http
	log global
	option httplog
	option dontlog-normal
	option log-health-checks
	timeout connect 5s
	timeout http-request 10s
	timeout http-keep-alive 60s
	timeout client 1h
	timeout server 1h
	timeout tunnel 1h
	timeout client-fin 30s
	timeout server-fin 30s
	timeout check 500ms
	retries 2
	option redispatch 1
	retry-on conn-failure empty-response

frontend mcp
	bind fd@3
	option forwardfor
	http-request set-header X-Forwarded-Proto https if { ssl_fc }
	http-request set-header X-Forwarded-Proto http if !{ ssl_fc }
	http-request set-header X-Forwarded-Host %%[req.hdr(host)]
	http-request deny deny_status 404 unless { path /mcp }
	default_backend mcphost

frontend stats
	bind fd@4
	stats enable
	stats uri /stats

backend mcphost
	balance roundrobin
	option httpchk GET /readyz
	http-check expect status 200
	default-server check inter 200ms fastinter 100ms downinter 200ms fall 2 rise 2
	server a %s port %s
	server b %s port %s
`

// buildMCPHost builds bin/mcphost into a temporary directory.
func buildMCPHost(t *testing.T) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "mcphost")
	cmd := exec.Command("go", "build", "-o", out, "./cmd/mcphost")
	cmd.Dir = testutil.RepoRoot(t)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/mcphost: %v\n%s", err, b)
	}
	return out
}

// listenLoopback listens on a free loopback port until the test ends.
func listenLoopback(t *testing.T) *net.TCPListener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln.(*net.TCPListener)
}

// process is a subprocess the test started: an mcphost replica or HAProxy.
type process struct {
	name    string
	cmd     *exec.Cmd
	log     *lineLog
	exited  chan struct{} // closed once the process has exited and waitErr is set
	waitErr error

	// Replicas only:
	mcpAddr, opsAddr string // host:port of /mcp and of /metrics, /readyz
	auditPath        string
}

// start starts p.cmd with its stderr (and stdout) going to p.log, and makes
// sure it is killed, and waited for, when the test ends.
func (p *process) start(t *testing.T) {
	t.Helper()
	p.log = &lineLog{}
	p.cmd.Stdout, p.cmd.Stderr = p.log, p.log
	p.cmd.WaitDelay = 5 * time.Second
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", p.name, err)
	}
	p.exited = make(chan struct{})
	go func() {
		p.waitErr = p.cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		<-p.exited
		if t.Failed() {
			t.Logf("%s output (last lines):\n%s", p.name, p.log.tail(40))
		}
	})
}

var (
	endpointLine = regexp.MustCompile(`MCP endpoint http://(\S+)/mcp`)
	opsLine      = regexp.MustCompile(`serving metrics and health checks: url=http://(\S+)/metrics`)
)

// startReplica starts `mcphost serve` with config text in a directory of
// its own, on a free loopback port, and waits until it serves.
func startReplica(t *testing.T, bin, name, config string) *process {
	t.Helper()
	return startReplicaAt(t, bin, name, config, "127.0.0.1:0")
}

// startReplicaAt is startReplica serving MCP on listen (host:port), so
// that a replica started again takes its predecessor's place behind
// HAProxy.
func startReplicaAt(t *testing.T, bin, name, config, listen string) *process {
	t.Helper()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "mcphost.toml")
	if err := os.WriteFile(cfg, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	p := &process{
		name:      "replica " + name,
		cmd:       exec.Command(bin, "serve", "--config", cfg, "--http", listen),
		auditPath: filepath.Join(dir, "audit.jsonl"),
	}
	p.start(t)
	eventually(t, p.name+" serves", func() (bool, string) {
		p.mcpAddr, p.opsAddr = p.log.find(endpointLine), p.log.find(opsLine)
		if p.hasExited() {
			t.Fatalf("%s exited (%v) before serving:\n%s", p.name, p.waitErr, p.log.tail(40))
		}
		return p.mcpAddr != "" && p.opsAddr != "", "no endpoint in its log yet"
	})
	return p
}

// startHAProxy runs haproxy in the foreground with config text, handing it
// the frontend and stats sockets as file descriptors 3 and 4.
func startHAProxy(t *testing.T, haproxy, config string, front, stats *net.TCPListener) *process {
	t.Helper()
	cfg := filepath.Join(t.TempDir(), "haproxy.cfg")
	if err := os.WriteFile(cfg, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	var files []*os.File
	for _, ln := range []*net.TCPListener{front, stats} {
		f, err := ln.File()
		if err != nil {
			t.Fatalf("listener file: %v", err)
		}
		files = append(files, f)
	}
	check := exec.Command(haproxy, "-c", "-f", cfg)
	check.ExtraFiles = files
	if out, err := check.CombinedOutput(); err != nil {
		t.Fatalf("haproxy -c: %v\n%s\nconfig:\n%s", err, out, config)
	}
	p := &process{name: "haproxy", cmd: exec.Command(haproxy, "-db", "-f", cfg)}
	p.cmd.ExtraFiles = files
	p.start(t)
	// HAProxy holds the sockets now; the test's copies are not needed.
	for _, f := range files {
		f.Close()
	}
	return p
}

// hasExited reports whether the process has exited.
func (p *process) hasExited() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

// opsPort is the port of the replica's /metrics, /healthz and /readyz.
func (p *process) opsPort() string {
	_, port, _ := net.SplitHostPort(p.opsAddr)
	return port
}

// get fetches url with a short timeout; status 0 means no answer.
func get(url string) (int, []byte) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, nil
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil
	}
	return resp.StatusCode, b
}

// readyz returns the status of the replica's /readyz (0: no answer).
func (p *process) readyz() int {
	code, _ := get("http://" + p.opsAddr + "/readyz")
	return code
}

// metric returns the samples of the replica's /metrics whose name and
// labels start with prefix, summed.
func (p *process) metric(t *testing.T, prefix string) float64 {
	t.Helper()
	code, body := get("http://" + p.opsAddr + "/metrics")
	if code != http.StatusOK {
		t.Fatalf("%s /metrics: status %d", p.name, code)
	}
	var sum float64
	for line := range strings.SplitSeq(string(body), "\n") {
		if !strings.HasPrefix(line, prefix) {
			continue
		}
		f := strings.Fields(line)
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err != nil {
			t.Fatalf("%s /metrics: %q: %v", p.name, line, err)
		}
		sum += v
	}
	return sum
}

// callsServed is the replica's mcphost_calls_total, all labels summed.
func (p *process) callsServed(t *testing.T) float64 {
	return p.metric(t, "mcphost_calls_total{")
}

// instancesInUse is how many of plugin's instances are running a call.
func (p *process) instancesInUse(t *testing.T, plugin string) float64 {
	return p.metric(t, fmt.Sprintf(`mcphost_plugin_instances{plugin=%q,state="in_use"}`, plugin))
}

// haproxyStats reads HAProxy's stats page as CSV.
type haproxyStats struct{ url string }

// row returns the stats of one server of backend mcphost ("BACKEND" for
// the backend itself), by column name.
func (s *haproxyStats) row(t *testing.T, server string) map[string]string {
	t.Helper()
	code, body := get(s.url)
	if code != http.StatusOK {
		t.Fatalf("HAProxy stats: status %d", code)
	}
	records, err := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(body, []byte("# ")))).ReadAll()
	if err != nil {
		t.Fatalf("HAProxy stats CSV: %v", err)
	}
	for _, rec := range records[1:] {
		if len(rec) < 2 || rec[0] != "mcphost" || rec[1] != server {
			continue
		}
		row := map[string]string{}
		for i, col := range records[0] {
			if i < len(rec) {
				row[col] = rec[i]
			}
		}
		return row
	}
	t.Fatalf("HAProxy stats have no row for mcphost/%s:\n%s", server, body)
	return nil
}

// status is a server's state: UP, DOWN, "UP 1/2" (going down)…
func (s *haproxyStats) status(t *testing.T, server string) string {
	return s.row(t, server)["status"]
}

// backendCounter is one column of backend mcphost's totals, e.g. wretr
// (retries) or wredis (redispatches).
func (s *haproxyStats) backendCounter(t *testing.T, col string) string {
	return s.row(t, "BACKEND")[col]
}

// callers are MCP clients calling tools through HAProxy until stopped.
type callers struct {
	endpoint string
	stop     atomic.Bool
	wg       sync.WaitGroup

	ok, failed, fast, slow atomic.Int64
	mu                     sync.Mutex
	firstFailures          []string
}

// start starts caller i: a client of its own (stateless 2026-07-28),
// calling echo 50 times a second, or, if slow, test_tool_with_progress
// (150 ms) back to back.
func (c *callers) start(t *testing.T, i int, slow bool) {
	c.wg.Go(func() {
		client := mcp.NewClient(&mcp.Implementation{Name: fmt.Sprintf("caller-%d", i), Version: "1"}, nil)
		cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: c.endpoint}, &mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
		if err != nil {
			c.fail(fmt.Errorf("caller %d: connect: %w", i, err))
			return
		}
		defer cs.Close()
		if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
			c.fail(fmt.Errorf("caller %d: negotiated protocol %s, want the stateless 2026-07-28", i, v))
			return
		}
		pace := time.NewTicker(20 * time.Millisecond)
		defer pace.Stop()
		for n := 0; !c.stop.Load(); n++ {
			if slow {
				c.slow.Add(1)
				c.record(call(cs, "ev_test_tool_with_progress", nil, ""))
				continue
			}
			<-pace.C
			c.fast.Add(1)
			text := fmt.Sprintf("caller %d call %d", i, n)
			c.record(call(cs, "echo", map[string]any{"text": text}, text))
		}
	})
}

// call calls a tool and checks its answer: no error, and want as its text
// unless want is "".
func call(cs *mcp.ClientSession, tool string, args map[string]any, want string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	began := time.Now()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	at := began.Format("15:04:05.000")
	switch {
	case err != nil:
		return fmt.Errorf("%s %s: %w", at, tool, err)
	case res.IsError:
		return fmt.Errorf("%s %s: tool error: %v", at, tool, contentText(res))
	case want != "" && contentText(res) != want:
		return fmt.Errorf("%s %s: answered %q, want %q", at, tool, contentText(res), want)
	}
	return nil
}

// contentText is the text of a result's first text content.
func contentText(res *mcp.CallToolResult) string {
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			return t.Text
		}
	}
	return ""
}

// record counts a call: answered (err == nil) or failed.
func (c *callers) record(err error) {
	if err == nil {
		c.ok.Add(1)
		return
	}
	c.fail(err)
}

// fail counts a failed call and keeps the first few errors.
func (c *callers) fail(err error) {
	c.failed.Add(1)
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.firstFailures) < 10 {
		c.firstFailures = append(c.firstFailures, err.Error())
	}
}

// failures returns the first errors kept by fail.
func (c *callers) failures() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.firstFailures...)
}

// stopAndWait lets every caller finish the call it is making, and waits.
func (c *callers) stopAndWait() {
	c.stop.Store(true)
	c.wg.Wait()
}

// auditEntry is the part of an audit log line the test reads.
type auditEntry struct {
	Time       time.Time `json:"time"`
	Method     string    `json:"method"`
	Name       string    `json:"name"`
	Outcome    string    `json:"outcome"`
	DurationMS float64   `json:"duration_ms"`
	Error      string    `json:"error"`
}

// readAudit reads a replica's audit log.
func readAudit(t *testing.T, path string) []auditEntry {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("audit log: %v", err)
	}
	var entries []auditEntry
	dec := json.NewDecoder(bytes.NewReader(b))
	for {
		var e auditEntry
		if err := dec.Decode(&e); errors.Is(err, io.EOF) {
			return entries
		} else if err != nil {
			t.Fatalf("audit log %s: %v", path, err)
		}
		entries = append(entries, e)
	}
}

// exitStatus describes how a process ended, as its Wait error.
func exitStatus(err error) string {
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}

// poll calls cond every 5 ms until it returns true (true) or timeout
// passes (false).
func poll(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		<-tick.C
	}
	return true
}

// eventually polls cond until it holds, failing the test if it does not
// within patience; cond's detail says where things stand.
func eventually(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	var detail string
	if !poll(patience, func() bool {
		var ok bool
		ok, detail = cond()
		return ok
	}) {
		t.Fatalf("%s: not within %v (%s)", what, patience, detail)
	}
}

// lineLog is an io.Writer keeping a subprocess's output as lines.
type lineLog struct {
	mu      sync.Mutex
	lines   []string
	partial []byte
}

func (l *lineLog) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.partial = append(l.partial, b...)
	for {
		i := bytes.IndexByte(l.partial, '\n')
		if i < 0 {
			return len(b), nil
		}
		l.lines = append(l.lines, string(l.partial[:i]))
		l.partial = l.partial[i+1:]
	}
}

// find returns the first submatch of re in a line, or "".
func (l *lineLog) find(re *regexp.Regexp) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, line := range l.lines {
		if m := re.FindStringSubmatch(line); m != nil {
			return m[1]
		}
	}
	return ""
}

// tail returns the last n lines.
func (l *lineLog) tail(n int) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines[max(0, len(l.lines)-n):], "\n")
}
