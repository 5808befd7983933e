package testutil

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// JaegerVersion is the Jaeger module version the tests read traces back
// with, and JaegerRelease the version of its v2 binary (Jaeger tags each
// release twice); keep both in step with scripts/ensure-jaeger.sh, which
// builds it.
const (
	JaegerVersion = "v1.76.0"
	JaegerRelease = "v2.13.0"
)

// jaegerPatience bounds how long Jaeger may take to start and how long one
// query may take: a hang guard for a loaded machine, not a deadline
// anything is measured by.
const jaegerPatience = 2 * time.Minute

// jaegerInstalled is where scripts/ensure-jaeger.sh installs Jaeger,
// resolved when the package is initialised: tests change HOME and
// XDG_CACHE_HOME (t.Setenv) to isolate the host's caches.
var jaegerInstalled = func() string {
	base, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(base, "mcphost", "tools", "jaeger-"+JaegerVersion, "jaeger")
}()

// FindJaeger returns the Jaeger v2 executable: $MCPHOST_JAEGER, else the one
// scripts/ensure-jaeger.sh installs (`make test` runs it). It skips the
// test, saying how to install it, where there is none.
func FindJaeger(t testing.TB) string {
	t.Helper()
	bin := os.Getenv("MCPHOST_JAEGER")
	if bin == "" {
		bin = jaegerInstalled
	}
	if bin == "" {
		t.Skip("Jaeger is not installed (no user cache directory to find it in), so this test that reads traces back cannot run: set MCPHOST_JAEGER to a jaeger " + JaegerRelease)
	}
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("Jaeger %s is not installed at %s, so this test that reads traces back cannot run: scripts/ensure-jaeger.sh builds it there (from the Go module proxy, github.com/jaegertracing/jaeger/cmd/jaeger@%s; `make test` runs it), or set MCPHOST_JAEGER",
			JaegerRelease, bin, JaegerVersion)
	}
	return bin
}

// Jaeger is a Jaeger v2 all-in-one started for one test: the OpenTelemetry
// Collector's OTLP receivers (gRPC and HTTP) feeding Jaeger's in-memory
// trace store, and Jaeger's query API over it, every port on 127.0.0.1.
// The same receivers take OTLP metrics, which the Collector's Prometheus
// exporter serves for the tests to scrape (Jaeger itself keeps traces
// only).
// It sends no telemetry of its own anywhere and keeps nothing on disk
// beyond the test's temporary directory.
type Jaeger struct {
	// GRPCAddr is the host:port of the OTLP/gRPC receiver (plaintext).
	GRPCAddr string
	// HTTPAddr is the host:port of the OTLP/HTTP receiver (plaintext;
	// traces are posted to /v1/traces).
	HTTPAddr string
	// QueryURL is the base URL of Jaeger's query API, such as
	// http://127.0.0.1:PORT.
	QueryURL string
	// MetricsURL is where the metrics received are served in the
	// Prometheus text format, such as http://127.0.0.1:PORT/metrics.
	MetricsURL string
	// Config is the path of the configuration Jaeger runs with, and Log the
	// file its output goes to.
	Config, Log string

	bin    string
	dir    string
	client *http.Client
	cmd    *exec.Cmd
	exited chan error
}

// OTLP protocols, as OTEL_EXPORTER_OTLP_PROTOCOL names them.
const (
	OTLPGRPC = "grpc"
	OTLPHTTP = "http/protobuf"
)

// StartJaeger starts a Jaeger of its own for t, killed when t ends, and
// returns once it takes spans on both OTLP receivers and answers queries.
// It skips t (saying how to install it) where Jaeger is not installed.
func StartJaeger(t testing.TB) *Jaeger {
	t.Helper()
	bin := FindJaeger(t)
	dir := t.TempDir()
	j := &Jaeger{
		bin:    bin,
		dir:    dir,
		Config: filepath.Join(dir, "jaeger.yaml"),
		Log:    filepath.Join(dir, "jaeger.log"),
		// Loopback only: no proxy from the environment.
		client: &http.Client{Timeout: jaegerPatience, Transport: &http.Transport{}},
	}
	// A port found free may be taken before Jaeger binds it: Jaeger then
	// exits, and is started again on other ports.
	var err error
	for range 5 {
		if err = j.start(t); err == nil || !errors.Is(err, errJaegerPortTaken) {
			break
		}
	}
	if err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	t.Cleanup(j.kill)
	return j
}

// Endpoint is the value of OTEL_EXPORTER_OTLP_ENDPOINT that sends to this
// Jaeger over protocol (OTLPGRPC or OTLPHTTP).
func (j *Jaeger) Endpoint(protocol string) string {
	if protocol == OTLPGRPC {
		return "http://" + j.GRPCAddr
	}
	return "http://" + j.HTTPAddr
}

// Env is the environment that makes an OpenTelemetry SDK send every span
// and metric of service to this Jaeger over protocol (OTLPGRPC or
// OTLPHTTP), every span sampled, metrics every half second, and no logs.
func (j *Jaeger) Env(protocol, service string) []string {
	return []string{
		"OTEL_TRACES_EXPORTER=otlp",
		"OTEL_METRICS_EXPORTER=otlp",
		"OTEL_METRIC_EXPORT_INTERVAL=500",
		"OTEL_LOGS_EXPORTER=none",
		"OTEL_EXPORTER_OTLP_PROTOCOL=" + protocol,
		"OTEL_EXPORTER_OTLP_ENDPOINT=" + j.Endpoint(protocol),
		"OTEL_SERVICE_NAME=" + service,
		"OTEL_TRACES_SAMPLER=always_on",
	}
}

// jaegerConfig is the whole configuration: the collector's OTLP receivers
// into Jaeger's memory store, the query API over it, OTLP metrics into the
// Prometheus exporter (names as Prometheus writes them: dots to
// underscores, the unit and _total suffixes), and the collector's
// own telemetry off (no metrics endpoint; logs on stderr only). The query
// extension's self-tracing (enable_tracing, on by default in v2) would
// export to localhost:4318; it is off.
const jaegerConfig = `# Written by internal/testutil (StartJaeger) for one test.
service:
  extensions: [jaeger_storage, jaeger_query]
  pipelines:
    traces:
      receivers: [otlp]
      exporters: [jaeger_storage_exporter]
    metrics:
      receivers: [otlp]
      exporters: [prometheus]
  telemetry:
    metrics:
      level: none
    logs:
      level: info
      encoding: console

extensions:
  jaeger_storage:
    backends:
      memstore:
        memory:
          max_traces: 100000
  jaeger_query:
    storage:
      traces: memstore
    enable_tracing: false
    http:
      endpoint: 127.0.0.1:%d
    # Always served, never used here: any free port.
    grpc:
      endpoint: 127.0.0.1:0

receivers:
  otlp:
    protocols:
      grpc:
        endpoint: 127.0.0.1:%d
      http:
        endpoint: 127.0.0.1:%d

exporters:
  jaeger_storage_exporter:
    trace_storage: memstore
  prometheus:
    endpoint: 127.0.0.1:%d
`

// jaegerReady is what the collector logs once every component has started.
const jaegerReady = "Everything is ready"

var errJaegerPortTaken = errors.New("a port was taken by another process")

// start writes the configuration with fresh ports, starts Jaeger and waits
// until it is ready.
func (j *Jaeger) start(t testing.TB) error {
	t.Helper()
	ports := freeLoopbackPorts(t, 4)
	queryHTTP, otlpGRPC, otlpHTTP, prom := ports[0], ports[1], ports[2], ports[3]
	config := fmt.Sprintf(jaegerConfig, queryHTTP, otlpGRPC, otlpHTTP, prom)
	if err := os.WriteFile(j.Config, []byte(config), 0o600); err != nil {
		return err
	}
	j.GRPCAddr = net.JoinHostPort("127.0.0.1", strconv.Itoa(otlpGRPC))
	j.HTTPAddr = net.JoinHostPort("127.0.0.1", strconv.Itoa(otlpHTTP))
	j.QueryURL = "http://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(queryHTTP))
	j.MetricsURL = "http://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(prom)) + "/metrics"

	logf, err := os.Create(j.Log)
	if err != nil {
		return err
	}
	defer logf.Close() // the child has its own descriptor
	cmd := exec.Command(j.bin, "--config", "file:"+j.Config)
	cmd.Dir = j.dir
	// Nothing from the test's environment: no OTEL_* variables, no proxy.
	cmd.Env = []string{"HOME=" + j.dir, "TMPDIR=" + j.dir, "PATH=/usr/bin:/bin"}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }() // ends with the process, which kill ends
	deadline := time.Now().Add(jaegerPatience)
	for {
		select {
		case err := <-exited:
			b, _ := os.ReadFile(j.Log)
			if bytes.Contains(b, []byte("address already in use")) {
				return fmt.Errorf("%w: %s", errJaegerPortTaken, lastLines(b, 5))
			}
			return fmt.Errorf("jaeger exited at start (%v):\n%s", err, lastLines(b, 40))
		default:
		}
		if j.ready() {
			j.cmd, j.exited = cmd, exited
			return nil
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			<-exited
			b, _ := os.ReadFile(j.Log)
			return fmt.Errorf("jaeger was not ready in %v:\n%s", jaegerPatience, lastLines(b, 40))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// ready tells whether Jaeger has started every component (which it logs)
// and its query API answers.
func (j *Jaeger) ready() bool {
	b, err := os.ReadFile(j.Log)
	if err != nil || !bytes.Contains(b, []byte(jaegerReady)) {
		return false
	}
	resp, err := j.client.Get(j.QueryURL + "/api/services")
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	var services struct {
		Data []string `json:"data"`
	}
	return resp.StatusCode == http.StatusOK && json.NewDecoder(resp.Body).Decode(&services) == nil
}

// kill stops Jaeger at once and waits until it is gone.
func (j *Jaeger) kill() {
	j.client.CloseIdleConnections()
	if j.cmd == nil {
		return
	}
	_ = j.cmd.Process.Kill()
	<-j.exited
	j.cmd = nil
}

// freeLoopbackPorts returns n distinct TCP ports free on 127.0.0.1 a moment
// ago.
func freeLoopbackPorts(t testing.TB, n int) []int {
	t.Helper()
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close() // held until all are chosen, so they differ
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports
}

// lastLines returns the last n lines of b.
func lastLines(b []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// Trace is one trace as Jaeger's query API returns it: every span Jaeger
// has of it, whatever its service.
type Trace struct {
	// TraceID is the trace's ID, 32 lowercase hex digits.
	TraceID string
	// Spans are the trace's spans in the order Jaeger returns them.
	Spans []Span
	// Warnings are what Jaeger found wrong with the trace, if anything.
	Warnings []string
}

// Span is one span read back from Jaeger, with the OpenTelemetry fields
// that Jaeger's model keeps as tags lifted out of its attributes.
type Span struct {
	// TraceID (32 hex digits) and SpanID (16) identify the span.
	TraceID, SpanID string
	// ParentSpanID is the span ID of its parent (a CHILD_OF reference in
	// the same trace), "" for a root span. The parent may be missing from
	// the trace (a remote parent that sent no span).
	ParentSpanID string
	// Links are the span's other references (OpenTelemetry span links;
	// Jaeger keeps no link attributes).
	Links []SpanRef
	// TraceState is the span's W3C tracestate, from the w3c.tracestate tag.
	TraceState string
	// Name is the span's name (Jaeger's operation name).
	Name string
	// Kind is the span kind in lower case ("server", "client", "internal",
	// "producer", "consumer"), from Jaeger's span.kind tag; "" where
	// Jaeger has none (an unspecified kind).
	Kind string
	// Status is the span's status, from the otel.status_code and
	// otel.status_description tags.
	Status Status
	// Attributes are the span's attributes: string, bool, int64, float64
	// or []byte (Jaeger keeps an array attribute as its JSON string).
	// span.kind, otel.status_code, otel.status_description, otel.scope.*,
	// w3c.tracestate and the error flag Jaeger adds with an error status
	// are not among them (they are Kind, Status, Scope and TraceState).
	Attributes map[string]any
	// Scope is the instrumentation scope's name and version.
	Scope, ScopeVersion string
	// Service is the service.name of the resource that sent the span, and
	// Resource that resource's other attributes.
	Service  string
	Resource map[string]any
	// Events are the span's events (Jaeger's logs), in order.
	Events []Event
	// Start and Duration are the span's start time and length, to the
	// microsecond Jaeger keeps.
	Start    time.Time
	Duration time.Duration
	// Warnings are what Jaeger found wrong with the span, if anything.
	Warnings []string
}

// SpanRef names a span of a trace.
type SpanRef struct {
	// Type is Jaeger's reference type: CHILD_OF or FOLLOWS_FROM.
	Type            string
	TraceID, SpanID string
}

// Status is an OpenTelemetry span status.
type Status struct {
	// Code is "OK", "ERROR", or "" for an unset status.
	Code    string
	Message string
}

// Event is a span event (a Jaeger log).
type Event struct {
	Name       string
	Time       time.Time
	Attributes map[string]any
}

// Named returns the spans of tr named name, in tr's order.
func (tr Trace) Named(name string) []Span {
	var spans []Span
	for _, s := range tr.Spans {
		if s.Name == name {
			spans = append(spans, s)
		}
	}
	return spans
}

// Span returns the one span of tr named name, failing t if there is not
// exactly one.
func (tr Trace) Span(t testing.TB, name string) Span {
	t.Helper()
	spans := tr.Named(name)
	if len(spans) != 1 {
		t.Fatalf("trace %s has %d spans named %q, want 1; it has: %s", tr.TraceID, len(spans), name, tr.Summary())
	}
	return spans[0]
}

// Children returns the spans of tr whose parent is s, in tr's order.
func (tr Trace) Children(s Span) []Span {
	var spans []Span
	for _, c := range tr.Spans {
		if c.ParentSpanID == s.SpanID {
			spans = append(spans, c)
		}
	}
	return spans
}

// Summary describes tr's spans on one line each, as a tree of names,
// kinds and services, for test failure messages.
func (tr Trace) Summary() string {
	var b strings.Builder
	ids := map[string]bool{}
	for _, s := range tr.Spans {
		ids[s.SpanID] = true
	}
	var walk func(s Span, depth int)
	walk = func(s Span, depth int) {
		fmt.Fprintf(&b, "\n%s%q kind=%s service=%s span=%s status=%s", strings.Repeat("  ", depth+1), s.Name, s.Kind, s.Service, s.SpanID, s.Status.Code)
		if s.ParentSpanID != "" && !ids[s.ParentSpanID] {
			fmt.Fprintf(&b, " (parent %s not in the trace)", s.ParentSpanID)
		}
		for _, c := range tr.Children(s) {
			walk(c, depth+1)
		}
	}
	for _, s := range tr.Spans {
		if s.ParentSpanID == "" || !ids[s.ParentSpanID] {
			walk(s, 0)
		}
	}
	return b.String()
}

// Traces returns the traces Jaeger has with a span of service, started in
// the last hour (at most 1000, newest first); none where it has none.
func (j *Jaeger) Traces(t testing.TB, service string) []Trace {
	t.Helper()
	traces, err := j.traces(service)
	if err != nil {
		t.Fatalf("jaeger: traces of %s: %v", service, err)
	}
	return traces
}

// TraceByID returns the trace traceID (32 hex digits) as Jaeger has it, and
// false where Jaeger has no span of it yet.
func (j *Jaeger) TraceByID(t testing.TB, traceID string) (Trace, bool) {
	t.Helper()
	tr, ok, err := j.traceByID(traceID)
	if err != nil {
		t.Fatalf("jaeger: trace %s: %v", traceID, err)
	}
	return tr, ok
}

// WaitForSpans waits until Jaeger has at least n spans of service (over
// all its traces) and returns them, oldest first. It fails t, saying what
// Jaeger has, if they are not all there within timeout: a hang guard,
// which should be generous (spans reach Jaeger when the sender's batch is
// exported).
func (j *Jaeger) WaitForSpans(t testing.TB, service string, n int, timeout time.Duration) []Span {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		traces, err := j.traces(service)
		if err != nil {
			t.Fatalf("jaeger: traces of %s: %v", service, err)
		}
		var spans []Span
		for _, tr := range traces {
			for _, s := range tr.Spans {
				if s.Service == service {
					spans = append(spans, s)
				}
			}
		}
		if len(spans) >= n {
			sort.SliceStable(spans, func(a, b int) bool { return spans[a].Start.Before(spans[b].Start) })
			return spans
		}
		if time.Now().After(deadline) {
			var b strings.Builder
			for _, tr := range traces {
				fmt.Fprintf(&b, "\ntrace %s:%s", tr.TraceID, tr.Summary())
			}
			t.Fatalf("jaeger: %d spans of service %q after %v, want at least %d; it has:%s", len(spans), service, timeout, n, b.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// WaitForTrace waits until Jaeger has at least n spans of the trace
// traceID and returns it, failing t (saying what Jaeger has) if they are
// not there within timeout, a hang guard like WaitForSpans's.
func (j *Jaeger) WaitForTrace(t testing.TB, traceID string, n int, timeout time.Duration) Trace {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		tr, ok, err := j.traceByID(traceID)
		if err != nil {
			t.Fatalf("jaeger: trace %s: %v", traceID, err)
		}
		if ok && len(tr.Spans) >= n {
			return tr
		}
		if time.Now().After(deadline) {
			t.Fatalf("jaeger: trace %s has %d spans after %v, want at least %d:%s", traceID, len(tr.Spans), timeout, n, tr.Summary())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Metrics returns what the Collector's Prometheus exporter serves now: the
// metrics received, in the Prometheus text format.
func (j *Jaeger) Metrics(t testing.TB) string {
	t.Helper()
	text, err := j.metrics()
	if err != nil {
		t.Fatalf("jaeger: metrics: %v", err)
	}
	return text
}

// WaitForMetric waits until a sample of the metric family name that
// contains every string of contains (such as `job="mcphost"`) is served,
// and returns those sample lines of the family (name, or name followed by
// "_" as in name_bucket, name_count, name_sum), such as
// `mcp_server_operation_duration_seconds_count{job="mcphost",…} 3`. name
// is the Prometheus name: mcp.server.operation.duration with unit s is
// mcp_server_operation_duration_seconds; the resource's service.name is
// the job label. It fails t, with what is served, if none comes within
// timeout, a hang guard like WaitForSpans's.
func (j *Jaeger) WaitForMetric(t testing.TB, name string, timeout time.Duration, contains ...string) []string {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		text, err := j.metrics()
		if err != nil {
			t.Fatalf("jaeger: metrics: %v", err)
		}
		if lines := MetricLines(text, name, contains...); len(lines) > 0 {
			return lines
		}
		if time.Now().After(deadline) {
			t.Fatalf("jaeger: no sample of %s with %q after %v; served:\n%s", name, contains, timeout, text)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// MetricLines returns the sample lines of the metric family name in text
// (the Prometheus text format) that contain every string of contains, as
// WaitForMetric does.
func MetricLines(text, name string, contains ...string) []string {
	var lines []string
	for _, line := range strings.Split(text, "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		metric, _, _ := strings.Cut(line, " ")
		metric, _, _ = strings.Cut(metric, "{")
		if metric != name && !strings.HasPrefix(metric, name+"_") {
			continue
		}
		all := true
		for _, c := range contains {
			all = all && strings.Contains(line, c)
		}
		if all {
			lines = append(lines, line)
		}
	}
	return lines
}

func (j *Jaeger) metrics() (string, error) {
	resp, err := j.client.Get(j.MetricsURL)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", fmt.Errorf("GET %s: %w", j.MetricsURL, err)
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET %s: HTTP status %d: %s", j.MetricsURL, resp.StatusCode, bytes.TrimSpace(body))
	}
	return string(body), nil
}

func (j *Jaeger) traces(service string) ([]Trace, error) {
	q := url.Values{"service": {service}, "limit": {"1000"},
		"start": {strconv.FormatInt(time.Now().Add(-time.Hour).UnixMicro(), 10)},
		"end":   {strconv.FormatInt(time.Now().Add(time.Minute).UnixMicro(), 10)}}
	traces, status, err := j.get("/api/traces?" + q.Encode())
	if err != nil {
		return nil, err
	}
	if status != http.StatusOK {
		return nil, fmt.Errorf("HTTP status %d", status)
	}
	return traces, nil
}

func (j *Jaeger) traceByID(traceID string) (Trace, bool, error) {
	traces, status, err := j.get("/api/traces/" + url.PathEscape(traceID))
	if err != nil {
		return Trace{}, false, err
	}
	if status == http.StatusNotFound || (status == http.StatusOK && len(traces) == 0) {
		return Trace{TraceID: traceID}, false, nil
	}
	if status != http.StatusOK {
		return Trace{}, false, fmt.Errorf("HTTP status %d", status)
	}
	if len(traces) != 1 {
		return Trace{}, false, fmt.Errorf("%d traces in the answer, want 1", len(traces))
	}
	return traces[0], true, nil
}

// get asks the query API for path and decodes the traces it answers with.
// A 404 (no such trace) is returned as its status, without an error.
func (j *Jaeger) get(path string) ([]Trace, int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), jaegerPatience)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, j.QueryURL+path, nil)
	if err != nil {
		return nil, 0, err
	}
	resp, err := j.client.Do(req)
	if err != nil {
		return nil, 0, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, 0, fmt.Errorf("GET %s: %w", path, err)
	}
	if resp.StatusCode == http.StatusNotFound {
		return nil, resp.StatusCode, nil
	}
	if resp.StatusCode != http.StatusOK {
		return nil, resp.StatusCode, fmt.Errorf("GET %s: HTTP status %d: %s", path, resp.StatusCode, bytes.TrimSpace(body))
	}
	traces, err := decodeJaegerTraces(body)
	if err != nil {
		return nil, resp.StatusCode, fmt.Errorf("GET %s: %w", path, err)
	}
	return traces, resp.StatusCode, nil
}

// The JSON of Jaeger's query API (its UI model).
type (
	jaegerResponse struct {
		Data   []jaegerTrace `json:"data"`
		Errors []struct {
			Code    int    `json:"code"`
			Msg     string `json:"msg"`
			TraceID string `json:"traceID"`
		} `json:"errors"`
	}
	jaegerTrace struct {
		TraceID   string                   `json:"traceID"`
		Spans     []jaegerSpan             `json:"spans"`
		Processes map[string]jaegerProcess `json:"processes"`
		Warnings  []string                 `json:"warnings"`
	}
	jaegerSpan struct {
		TraceID       string `json:"traceID"`
		SpanID        string `json:"spanID"`
		OperationName string `json:"operationName"`
		References    []struct {
			RefType string `json:"refType"`
			TraceID string `json:"traceID"`
			SpanID  string `json:"spanID"`
		} `json:"references"`
		StartTime int64       `json:"startTime"` // µs since the epoch
		Duration  int64       `json:"duration"`  // µs
		Tags      []jaegerKV  `json:"tags"`
		Logs      []jaegerLog `json:"logs"`
		ProcessID string      `json:"processID"`
		Warnings  []string    `json:"warnings"`
	}
	jaegerProcess struct {
		ServiceName string     `json:"serviceName"`
		Tags        []jaegerKV `json:"tags"`
	}
	jaegerLog struct {
		Timestamp int64      `json:"timestamp"`
		Fields    []jaegerKV `json:"fields"`
	}
	jaegerKV struct {
		Key   string          `json:"key"`
		Type  string          `json:"type"`
		Value json.RawMessage `json:"value"`
	}
)

// decodeJaegerTraces decodes an answer of /api/traces.
func decodeJaegerTraces(body []byte) ([]Trace, error) {
	var r jaegerResponse
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("decode the query API's answer: %w", err)
	}
	if len(r.Errors) > 0 {
		e := r.Errors[0]
		return nil, fmt.Errorf("the query API answered with error %d: %s", e.Code, e.Msg)
	}
	traces := make([]Trace, 0, len(r.Data))
	for _, jt := range r.Data {
		tr := Trace{TraceID: normalizeTraceID(jt.TraceID), Warnings: jt.Warnings}
		for _, js := range jt.Spans {
			s, err := decodeJaegerSpan(js, jt.Processes[js.ProcessID])
			if err != nil {
				return nil, fmt.Errorf("trace %s: %w", tr.TraceID, err)
			}
			tr.Spans = append(tr.Spans, s)
		}
		traces = append(traces, tr)
	}
	return traces, nil
}

// decodeJaegerSpan turns a span of Jaeger's model back into OpenTelemetry's
// terms.
func decodeJaegerSpan(js jaegerSpan, p jaegerProcess) (Span, error) {
	s := Span{
		TraceID:  normalizeTraceID(js.TraceID),
		SpanID:   js.SpanID,
		Name:     js.OperationName,
		Service:  p.ServiceName,
		Start:    time.UnixMicro(js.StartTime),
		Duration: time.Duration(js.Duration) * time.Microsecond,
		Warnings: js.Warnings,
	}
	for _, ref := range js.References {
		r := SpanRef{Type: ref.RefType, TraceID: normalizeTraceID(ref.TraceID), SpanID: ref.SpanID}
		if r.Type == "CHILD_OF" && r.TraceID == s.TraceID && s.ParentSpanID == "" {
			s.ParentSpanID = r.SpanID
			continue
		}
		s.Links = append(s.Links, r)
	}
	tags, err := decodeJaegerKVs(js.Tags)
	if err != nil {
		return Span{}, fmt.Errorf("span %s: tags: %w", s.SpanID, err)
	}
	if v, ok := tags["span.kind"].(string); ok {
		s.Kind = strings.ToLower(v)
		delete(tags, "span.kind")
	}
	if v, ok := tags["otel.status_code"].(string); ok {
		s.Status.Code = v
		delete(tags, "otel.status_code")
		if v == "ERROR" {
			if e, ok := tags["error"].(bool); ok && e {
				delete(tags, "error")
			}
		}
	}
	if v, ok := tags["otel.status_description"].(string); ok {
		s.Status.Message = v
		delete(tags, "otel.status_description")
	}
	if v, ok := tags["w3c.tracestate"].(string); ok {
		s.TraceState = v
		delete(tags, "w3c.tracestate")
	}
	for _, key := range []string{"otel.scope.name", "otel.library.name"} {
		if v, ok := tags[key].(string); ok {
			s.Scope = v
			delete(tags, key)
		}
	}
	for _, key := range []string{"otel.scope.version", "otel.library.version"} {
		if v, ok := tags[key].(string); ok {
			s.ScopeVersion = v
			delete(tags, key)
		}
	}
	s.Attributes = tags
	if s.Resource, err = decodeJaegerKVs(p.Tags); err != nil {
		return Span{}, fmt.Errorf("span %s: process tags: %w", s.SpanID, err)
	}
	for _, l := range js.Logs {
		fields, err := decodeJaegerKVs(l.Fields)
		if err != nil {
			return Span{}, fmt.Errorf("span %s: log fields: %w", s.SpanID, err)
		}
		e := Event{Time: time.UnixMicro(l.Timestamp), Attributes: fields}
		if v, ok := fields["event"].(string); ok {
			e.Name = v
			delete(fields, "event")
		}
		s.Events = append(s.Events, e)
	}
	return s, nil
}

// decodeJaegerKVs decodes Jaeger's typed key-values.
func decodeJaegerKVs(kvs []jaegerKV) (map[string]any, error) {
	m := make(map[string]any, len(kvs))
	for _, kv := range kvs {
		var err error
		switch kv.Type {
		case "string":
			var v string
			err = json.Unmarshal(kv.Value, &v)
			m[kv.Key] = v
		case "bool":
			var v bool
			err = json.Unmarshal(kv.Value, &v)
			m[kv.Key] = v
		case "int64":
			var v int64
			err = json.Unmarshal(kv.Value, &v)
			m[kv.Key] = v
		case "float64":
			var v float64
			err = json.Unmarshal(kv.Value, &v)
			m[kv.Key] = v
		case "binary":
			var v []byte // base64 in the JSON
			err = json.Unmarshal(kv.Value, &v)
			m[kv.Key] = v
		default:
			err = fmt.Errorf("unknown type %q", kv.Type)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", kv.Key, err)
		}
	}
	return m, nil
}

// normalizeTraceID writes a trace ID as 32 hex digits: Jaeger writes one
// whose high half is zero as 16.
func normalizeTraceID(id string) string {
	if len(id) < 32 {
		return strings.Repeat("0", 32-len(id)) + id
	}
	return id
}
