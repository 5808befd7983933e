package host

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// metrics are the host's Prometheus metrics, on a registry of the host's
// own (no process-wide state: two hosts in one process do not mix).
type metrics struct {
	registry *prometheus.Registry
	calls    *prometheus.CounterVec
	duration *prometheus.HistogramVec
	reloads  *prometheus.CounterVec
	sessions prometheus.Counter
	// sessionsRefused counts requests refused because max_sessions
	// sessions were open (limitSessions).
	sessionsRefused prometheus.Counter
	// prepared counts plugins compiled in the background (prepare.go).
	prepared prometheus.Counter
	// tasks counts the tasks this replica created and those whose run it
	// ended, by event (tasks.go).
	tasks *prometheus.CounterVec
}

func newMetrics(h *Host) *metrics {
	m := &metrics{
		registry: prometheus.NewRegistry(),
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mcphost_calls_total",
			Help: "Calls into plugins by method (tools/call, resources/read, prompts/get, completion/complete), plugin, tool or prompt name, outcome (ok, tool_error, error, denied, cancelled) and profile (\"\" for /mcp).",
		}, []string{"method", "plugin", "name", "outcome", "profile"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "mcphost_call_duration_seconds",
			Help:    "How long calls into plugins took, from the request reaching the host to its result.",
			Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"method", "plugin", "name", "profile"}),
		reloads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mcphost_reloads_total",
			Help: "Reloads of the config and plugins, by result (ok, failed: something was not applied).",
		}, []string{"result"}),
		prepared: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "mcphost_plugins_prepared_total",
			Help: "Plugins served from the description their module ships that the host compiled and checked in the background, before any call.",
		}),
		sessions: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "mcphost_sessions_started_total",
			Help: "MCP sessions initialized.",
		}),
		tasks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mcphost_tasks_total",
			Help: "Tasks (Tasks extension) this replica created, and those whose run it ended, by event: created, completed, failed, cancelled, input_required (a round ended asking the client).",
		}, []string{"event"}),
		sessionsRefused: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "mcphost_sessions_refused_total",
			Help: "Requests that would have opened an HTTP session, refused with 503 because [server] max_sessions sessions (or the token user's max_sessions_per_user) were open.",
		}),
	}
	preparing := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "mcphost_plugins_preparing",
		Help: "Plugins waiting for, or in, their background compilation (prepare.go).",
	}, func() float64 { return float64(h.prep.queued()) })
	running := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "mcphost_tasks_running",
		Help: "Task rounds this replica runs now (at most [server.tasks] max_running).",
	}, func() float64 {
		if h.tasks == nil {
			return 0
		}
		return float64(h.tasks.running())
	})
	spansDropped := prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "mcphost_trace_spans_dropped_total",
		Help: "Trace spans the OpenTelemetry exporter could not send: its queue was full, or the backend failed or did not answer in time.",
	}, func() float64 { return float64(h.telemetry.SpansDropped()) })
	spansExported := prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "mcphost_trace_spans_exported_total",
		Help: "Trace spans the OpenTelemetry exporter sent.",
	}, func() float64 { return float64(h.telemetry.SpansExported()) })
	m.registry.MustRegister(spansDropped, spansExported)
	m.registry.MustRegister(m.calls, m.duration, m.reloads, m.sessions, m.sessionsRefused, m.prepared, m.tasks, preparing, running, &hostCollector{h: h},
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// hostCollector reports, at scrape time, what is true now: sessions open,
// and each plugin's instances.
type hostCollector struct{ h *Host }

var (
	sessionsDesc = prometheus.NewDesc("mcphost_sessions_open",
		"MCP sessions open now.", nil, nil)
	instancesDesc = prometheus.NewDesc("mcphost_plugin_instances",
		"Plugin instances by state: in_use (running a call), idle (warm, waiting for one).", []string{"plugin", "state"}, nil)
	instancesMaxDesc = prometheus.NewDesc("mcphost_plugin_instances_max",
		"The most instances a plugin may have at once (max_instances).", []string{"plugin"}, nil)
	activeDesc = prometheus.NewDesc("mcphost_plugin_active",
		"1 while a plugin holds a compiled module (from its first call until its idle_timeout), 0 while idle.", []string{"plugin"}, nil)
	activationsDesc = prometheus.NewDesc("mcphost_plugin_activations_total",
		"Times a plugin was compiled and made ready for calls (its load counts as one).", []string{"plugin"}, nil)
	releasesDesc = prometheus.NewDesc("mcphost_plugin_releases_total",
		"Times a plugin's instances and compiled module were released (at start once its lists are read, then after idle_timeout).", []string{"plugin"}, nil)
	instancesMadeDesc = prometheus.NewDesc("mcphost_plugin_instances_created_total",
		"Instances a plugin has made.", []string{"plugin"}, nil)
	pluginsDesc = prometheus.NewDesc("mcphost_plugins_loaded",
		"Plugins serving now.", nil, nil)
	leftOutDesc = prometheus.NewDesc("mcphost_plugin_items_left_out",
		"Items a plugin lists that the host does not serve (refused by the checks, taken by another plugin, or held out by the lock file; every item of a hostile plugin).", []string{"plugin"}, nil)
	hostileDesc = prometheus.NewDesc("mcphost_plugin_hostile",
		"1 when the plugin is left out whole, caught hiding text or offering look-alike names in its lists.", []string{"plugin"}, nil)
)

// Describe implements prometheus.Collector.
func (c *hostCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- sessionsDesc
	ch <- instancesDesc
	ch <- instancesMaxDesc
	ch <- activeDesc
	ch <- activationsDesc
	ch <- releasesDesc
	ch <- instancesMadeDesc
	ch <- pluginsDesc
	ch <- leftOutDesc
	ch <- hostileDesc
	describeMemory(ch)
}

// Collect implements prometheus.Collector.
func (c *hostCollector) Collect(ch chan<- prometheus.Metric) {
	open := 0
	for range c.h.sessions() {
		open++
	}
	ch <- prometheus.MustNewConstMetric(sessionsDesc, prometheus.GaugeValue, float64(open))
	cat := c.h.catalog.Load()
	ch <- prometheus.MustNewConstMetric(pluginsDesc, prometheus.GaugeValue, float64(len(cat.plugins)))
	for _, lp := range cat.plugins {
		inUse, idle, capacity := lp.plugin.InstanceStats()
		ch <- prometheus.MustNewConstMetric(instancesDesc, prometheus.GaugeValue, float64(inUse), lp.cfg.Name, "in_use")
		ch <- prometheus.MustNewConstMetric(instancesDesc, prometheus.GaugeValue, float64(idle), lp.cfg.Name, "idle")
		ch <- prometheus.MustNewConstMetric(instancesMaxDesc, prometheus.GaugeValue, float64(capacity), lp.cfg.Name)
		life := lp.plugin.Lifecycle()
		active := 0.0
		if life.Active {
			active = 1
		}
		ch <- prometheus.MustNewConstMetric(activeDesc, prometheus.GaugeValue, active, lp.cfg.Name)
		ch <- prometheus.MustNewConstMetric(activationsDesc, prometheus.CounterValue, float64(life.Activations), lp.cfg.Name)
		ch <- prometheus.MustNewConstMetric(releasesDesc, prometheus.CounterValue, float64(life.Releases), lp.cfg.Name)
		ch <- prometheus.MustNewConstMetric(instancesMadeDesc, prometheus.CounterValue, float64(life.Instances), lp.cfg.Name)
		ch <- prometheus.MustNewConstMetric(pluginMemoryDesc, prometheus.GaugeValue, float64(life.MemoryHeld), lp.cfg.Name)
		ch <- prometheus.MustNewConstMetric(pluginEvictionsDesc, prometheus.CounterValue, float64(life.Evictions), lp.cfg.Name)
		hostile := 0.0
		if wholeLeftOut(cat.leftOut[lp]) {
			hostile = 1
		}
		ch <- prometheus.MustNewConstMetric(leftOutDesc, prometheus.GaugeValue, float64(len(cat.leftOut[lp])), lp.cfg.Name)
		ch <- prometheus.MustNewConstMetric(hostileDesc, prometheus.GaugeValue, hostile, lp.cfg.Name)
	}
	c.h.collectMemory(ch)
}

// observedMethods are the requests that reach a plugin; observe counts,
// times and audits them.
var observedMethods = map[string]bool{
	"tools/call":          true,
	"resources/read":      true,
	"prompts/get":         true,
	"completion/complete": true,
}

// metricName is the name label of a call: resource URIs are left out, as
// templates make them unbounded.
func metricName(method, name string) string {
	if method == "resources/read" {
		return ""
	}
	return name
}

// requestTarget returns what a request names: a tool, prompt, resource URI
// or completion reference.
func requestTarget(req mcp.Request) string {
	switch r := req.(type) {
	case *mcp.CallToolRequest:
		return r.Params.Name
	case *mcp.GetPromptRequest:
		return r.Params.Name
	case *mcp.ReadResourceRequest:
		return r.Params.URI
	case *mcp.CompleteRequest:
		if r.Params.Ref != nil {
			return r.Params.Ref.Name + r.Params.Ref.URI
		}
	}
	return ""
}

// requestArguments returns a request's arguments as JSON, for an audit log
// that records them.
func requestArguments(req mcp.Request) json.RawMessage {
	var args any
	switch r := req.(type) {
	case *mcp.CallToolRequest:
		return r.Params.Arguments
	case *mcp.GetPromptRequest:
		args = r.Params.Arguments
	case *mcp.CompleteRequest:
		args = r.Params.Argument
	default:
		return nil
	}
	b, _ := json.Marshal(args)
	return b
}

// outcomeOf classifies a request's result for metrics and the audit log.
func outcomeOf(ctx context.Context, res mcp.Result, err error) (outcome, message string) {
	switch {
	case err != nil && (ctx.Err() != nil || errors.Is(err, context.Canceled)):
		return "cancelled", err.Error()
	case isInsufficientScope(err):
		return "denied", err.Error()
	case err != nil:
		return "error", err.Error()
	}
	if r, ok := res.(*mcp.CallToolResult); ok && r.IsError {
		for _, c := range r.Content {
			if t, ok := c.(*mcp.TextContent); ok {
				return "tool_error", t.Text
			}
		}
		return "tool_error", ""
	}
	return "ok", ""
}

// OpsHandler serves the operational endpoints: /healthz (the process
// serves), /readyz (plugins are loaded and the host is not draining), and,
// when [server.metrics] enabled is set, /metrics in the Prometheus text
// format.
func (h *Host) OpsHandler() http.Handler {
	mux := http.NewServeMux()
	h.addOps(mux)
	return mux
}

func (h *Host) addOps(mux *http.ServeMux) {
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if h.draining.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte("draining\n"))
			return
		}
		n := len(h.catalog.Load().plugins)
		_, _ = w.Write([]byte("ready: " + strconv.Itoa(n) + " plugins\n"))
	})
	if h.settings.Metrics.Enabled {
		mux.Handle("GET /metrics", promhttp.HandlerFor(h.metrics.registry, promhttp.HandlerOpts{}))
	}
}

func isInsufficientScope(err error) bool {
	var rpcErr *jsonrpc.Error
	return errors.As(err, &rpcErr) && rpcErr.Code == codeInsufficientScope
}
