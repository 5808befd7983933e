// Package telemetry sets up OpenTelemetry traces and metrics for the host:
// OTLP exporters chosen the standard way (the OTEL_* environment
// variables, or [server.telemetry]), off unless asked for, and then
// exporting in the background so that a slow or absent backend never slows
// a call (spans it cannot take are dropped and counted).
//
// The host's spans follow the OpenTelemetry semantic conventions for MCP
// (gen-ai/mcp.md); the attribute names are in this package so that every
// part of the host spells them the same.
package telemetry

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
)

// Attribute keys of the MCP semantic conventions and of the host's own.
const (
	MethodName      = attribute.Key("mcp.method.name")
	ToolName        = attribute.Key("gen_ai.tool.name")
	PromptName      = attribute.Key("gen_ai.prompt.name")
	ResourceURI     = attribute.Key("mcp.resource.uri")
	OperationName   = attribute.Key("gen_ai.operation.name")
	RequestID       = attribute.Key("jsonrpc.request.id")
	ProtocolVersion = attribute.Key("mcp.protocol.version")
	SessionID       = attribute.Key("mcp.session.id")
	Transport       = attribute.Key("network.transport")
	ErrorType       = attribute.Key("error.type")
	// Plugin names the mcphost plugin a span's work ran in.
	Plugin = attribute.Key("mcphost.plugin")
	// Export names the plugin export a Wasm call ran.
	Export = attribute.Key("mcphost.plugin.export")
	// TaskID is the id of the task (Tasks extension) a span belongs to.
	TaskID = attribute.Key("mcphost.task.id")
	// Round numbers the rounds of a multi-round-trip request (2 and on).
	Round = attribute.Key("mcphost.round")
)

// Settings is [server.telemetry]. A field left empty falls back to its
// OpenTelemetry environment variable (named beside it), then to the
// default.
type Settings struct {
	// TracesExporter is "otlp" or "none" (OTEL_TRACES_EXPORTER; default
	// none: tracing is off unless asked for).
	TracesExporter string
	// MetricsExporter is "otlp" or "none" (OTEL_METRICS_EXPORTER; default
	// none). The Prometheus /metrics endpoint is separate and unaffected.
	MetricsExporter string
	// Endpoint is the OTLP endpoint (OTEL_EXPORTER_OTLP_ENDPOINT; default
	// http://localhost:4318 for http/protobuf, localhost:4317 for grpc).
	Endpoint string
	// Protocol is "http/protobuf" or "grpc" (OTEL_EXPORTER_OTLP_PROTOCOL;
	// default http/protobuf).
	Protocol string
	// ServiceName is the service.name resource attribute
	// (OTEL_SERVICE_NAME; default "mcphost").
	ServiceName string
	// Sampler and SamplerArg choose which traces are recorded
	// (OTEL_TRACES_SAMPLER, OTEL_TRACES_SAMPLER_ARG; default
	// parentbased_always_on).
	Sampler, SamplerArg string
}

// Telemetry is the host's tracer and meter: no-ops when both are off.
type Telemetry struct {
	// Tracer makes the host's spans.
	Tracer trace.Tracer
	// Propagator reads and writes trace context (W3C traceparent,
	// tracestate, baggage).
	Propagator propagation.TextMapPropagator
	// OperationDuration and SessionDuration are mcp.server.operation.duration
	// and mcp.server.session.duration (seconds).
	OperationDuration metric.Float64Histogram
	SessionDuration   metric.Float64Histogram

	tracing   bool
	processor *exportProcessor // nil unless tracing
	tp        *sdktrace.TracerProvider
	mp        *sdkmetric.MeterProvider
}

// Off is Telemetry that records nothing, at no cost.
func Off() *Telemetry {
	t := &Telemetry{Tracer: tracenoop.NewTracerProvider().Tracer("mcphost"), Propagator: propagator()}
	m := metricnoop.NewMeterProvider().Meter("mcphost")
	t.OperationDuration, _ = m.Float64Histogram("mcp.server.operation.duration")
	t.SessionDuration, _ = m.Float64Histogram("mcp.server.session.duration")
	return t
}

func propagator() propagation.TextMapPropagator {
	return propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
}

// Getenv reads an environment variable; os.Getenv in production.
type Getenv func(string) string

// New sets up what settings and the environment (getenv; nil for the
// process's) ask for. Off() when they ask for nothing. version is the
// host's, for the service.version resource attribute.
func New(ctx context.Context, s Settings, getenv Getenv, version string, logger hclog.Logger) (*Telemetry, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	or := func(v, env, def string) string {
		if v != "" {
			return v
		}
		if e := strings.TrimSpace(getenv(env)); e != "" {
			return e
		}
		return def
	}
	traces := strings.ToLower(or(s.TracesExporter, "OTEL_TRACES_EXPORTER", "none"))
	metrics := strings.ToLower(or(s.MetricsExporter, "OTEL_METRICS_EXPORTER", "none"))
	for name, v := range map[string]string{"traces_exporter": traces, "metrics_exporter": metrics} {
		if v != "otlp" && v != "none" {
			return nil, fmt.Errorf("telemetry: %s %q is not supported (expected \"otlp\" or \"none\")", name, v)
		}
	}
	if traces == "none" && metrics == "none" {
		return Off(), nil
	}
	protocol := or(s.Protocol, "OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
	if protocol != "http/protobuf" && protocol != "grpc" {
		return nil, fmt.Errorf("telemetry: protocol %q is not supported (expected \"http/protobuf\" or \"grpc\")", protocol)
	}
	if s.Endpoint != "" {
		if _, err := url.Parse(s.Endpoint); err != nil {
			return nil, fmt.Errorf("telemetry: endpoint %q: %w", s.Endpoint, err)
		}
	}
	service := or(s.ServiceName, "OTEL_SERVICE_NAME", "mcphost")
	res, err := resource.New(ctx, resource.WithFromEnv(), resource.WithAttributes(
		attribute.String("service.name", service), attribute.String("service.version", version)))
	if err != nil && !errors.Is(err, resource.ErrPartialResource) {
		return nil, fmt.Errorf("telemetry: resource: %w", err)
	}
	t := Off()
	if traces == "otlp" {
		exp, err := spanExporter(ctx, protocol, endpointFor(s.Endpoint, getenv, "TRACES", "/v1/traces"))
		if err != nil {
			return nil, err
		}
		sampler, err := samplerFor(or(s.Sampler, "OTEL_TRACES_SAMPLER", "parentbased_always_on"), or(s.SamplerArg, "OTEL_TRACES_SAMPLER_ARG", ""))
		if err != nil {
			return nil, err
		}
		t.processor = newExportProcessor(exp, logger)
		t.tp = sdktrace.NewTracerProvider(sdktrace.WithResource(res), sdktrace.WithSampler(sampler),
			sdktrace.WithIDGenerator(idGenerator{}), sdktrace.WithSpanProcessor(t.processor))
		t.Tracer = t.tp.Tracer("github.com/mcphost/mcphost")
		t.tracing = true
	}
	if metrics == "otlp" {
		exp, err := metricExporter(ctx, protocol, endpointFor(s.Endpoint, getenv, "METRICS", "/v1/metrics"))
		if err != nil {
			_ = t.Shutdown(ctx)
			return nil, err
		}
		var readerOpts []sdkmetric.PeriodicReaderOption
		if v := strings.TrimSpace(getenv("OTEL_METRIC_EXPORT_INTERVAL")); v != "" {
			ms, err := strconv.Atoi(v)
			if err != nil || ms <= 0 {
				_ = t.Shutdown(ctx)
				return nil, fmt.Errorf("telemetry: OTEL_METRIC_EXPORT_INTERVAL %q is not a positive number of milliseconds", v)
			}
			readerOpts = append(readerOpts, sdkmetric.WithInterval(time.Duration(ms)*time.Millisecond))
		}
		t.mp = sdkmetric.NewMeterProvider(sdkmetric.WithResource(res), sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exp, readerOpts...)))
		m := t.mp.Meter("github.com/mcphost/mcphost")
		buckets := metric.WithExplicitBucketBoundaries(0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300)
		if t.OperationDuration, err = m.Float64Histogram("mcp.server.operation.duration", metric.WithUnit("s"),
			metric.WithDescription("How long the server took to handle an MCP request."), buckets); err != nil {
			return nil, fmt.Errorf("telemetry: %w", err)
		}
		if t.SessionDuration, err = m.Float64Histogram("mcp.server.session.duration", metric.WithUnit("s"),
			metric.WithDescription("How long an MCP session lasted."), buckets); err != nil {
			return nil, fmt.Errorf("telemetry: %w", err)
		}
	}
	logger.Info("OpenTelemetry export on", "traces", traces, "metrics", metrics, "protocol", protocol, "service", service)
	return t, nil
}

// Active reports whether anything is exported: tracing or metrics.
func (t *Telemetry) Active() bool { return t.tracing || t.mp != nil }

// Metrics reports whether metrics are exported.
func (t *Telemetry) Metrics() bool { return t.mp != nil }

// Tracing reports whether spans are recorded and exported.
func (t *Telemetry) Tracing() bool { return t.tracing }

// SpansDropped and SpansExported count the spans the exporter could not
// take (its queue was full, or the backend failed) and those it sent.
func (t *Telemetry) SpansDropped() int64 {
	if t.processor == nil {
		return 0
	}
	return t.processor.dropped.Load()
}

// SpansExported: see SpansDropped.
func (t *Telemetry) SpansExported() int64 {
	if t.processor == nil {
		return 0
	}
	return t.processor.exported.Load()
}

// Shutdown exports what is pending, within ctx, and stops.
func (t *Telemetry) Shutdown(ctx context.Context) error {
	var errs []error
	if t.tp != nil {
		errs = append(errs, t.tp.Shutdown(ctx))
	}
	if t.mp != nil {
		errs = append(errs, t.mp.Shutdown(ctx))
	}
	return errors.Join(errs...)
}

// endpointFor is the full URL of a signal's OTLP endpoint: the config's
// (a base URL, to which an http/protobuf exporter adds path), else
// OTEL_EXPORTER_OTLP_<SIGNAL>_ENDPOINT as it is, else
// OTEL_EXPORTER_OTLP_ENDPOINT plus path; "" for the exporter's default.
// Read here, through getenv, rather than by the exporter, so that the
// config and the environment the host was given agree.
func endpointFor(configured string, getenv Getenv, signal, path string) endpoint {
	if configured != "" {
		return endpoint{base: configured, path: path}
	}
	if e := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_" + signal + "_ENDPOINT")); e != "" {
		return endpoint{base: e}
	}
	if e := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_ENDPOINT")); e != "" {
		return endpoint{base: e, path: path}
	}
	return endpoint{}
}

// endpoint is an OTLP endpoint: base, and for http/protobuf the path to
// add to it ("" when base is the full URL).
type endpoint struct{ base, path string }

// url is the endpoint for protocol ("" for the exporter's default).
func (e endpoint) url(protocol string) string {
	if e.base == "" || protocol == "grpc" {
		return e.base
	}
	return strings.TrimSuffix(e.base, "/") + e.path
}

// spanExporter makes the OTLP span exporter of protocol; the exporter
// reads the headers, timeout and TLS variables itself.
func spanExporter(ctx context.Context, protocol string, ep endpoint) (sdktrace.SpanExporter, error) {
	endpoint := ep.url(protocol)
	var (
		exp sdktrace.SpanExporter
		err error
	)
	if protocol == "grpc" {
		var opts []otlptracegrpc.Option
		if endpoint != "" {
			opts = append(opts, otlptracegrpc.WithEndpointURL(endpoint))
		}
		exp, err = otlptracegrpc.New(ctx, opts...)
	} else {
		var opts []otlptracehttp.Option
		if endpoint != "" {
			opts = append(opts, otlptracehttp.WithEndpointURL(endpoint))
		}
		exp, err = otlptracehttp.New(ctx, opts...)
	}
	if err != nil {
		return nil, fmt.Errorf("telemetry: OTLP span exporter (%s): %w", protocol, err)
	}
	return exp, nil
}

// metricExporter is spanExporter for metrics.
func metricExporter(ctx context.Context, protocol string, ep endpoint) (sdkmetric.Exporter, error) {
	endpoint := ep.url(protocol)
	var (
		exp sdkmetric.Exporter
		err error
	)
	if protocol == "grpc" {
		var opts []otlpmetricgrpc.Option
		if endpoint != "" {
			opts = append(opts, otlpmetricgrpc.WithEndpointURL(endpoint))
		}
		exp, err = otlpmetricgrpc.New(ctx, opts...)
	} else {
		var opts []otlpmetrichttp.Option
		if endpoint != "" {
			opts = append(opts, otlpmetrichttp.WithEndpointURL(endpoint))
		}
		exp, err = otlpmetrichttp.New(ctx, opts...)
	}
	if err != nil {
		return nil, fmt.Errorf("telemetry: OTLP metric exporter (%s): %w", protocol, err)
	}
	return exp, nil
}

// samplerFor is the sampler OTEL_TRACES_SAMPLER names (the SDK's own
// reading of the variable ignores a value set in the config).
func samplerFor(name, arg string) (sdktrace.Sampler, error) {
	ratio := func() (float64, error) {
		if arg == "" {
			return 1, nil
		}
		var r float64
		if _, err := fmt.Sscan(arg, &r); err != nil || r < 0 || r > 1 {
			return 0, fmt.Errorf("telemetry: sampler argument %q is not a ratio between 0 and 1", arg)
		}
		return r, nil
	}
	switch name {
	case "always_on":
		return sdktrace.AlwaysSample(), nil
	case "always_off":
		return sdktrace.NeverSample(), nil
	case "traceidratio":
		r, err := ratio()
		return sdktrace.TraceIDRatioBased(r), err
	case "parentbased_always_on":
		return sdktrace.ParentBased(sdktrace.AlwaysSample()), nil
	case "parentbased_always_off":
		return sdktrace.ParentBased(sdktrace.NeverSample()), nil
	case "parentbased_traceidratio":
		r, err := ratio()
		return sdktrace.ParentBased(sdktrace.TraceIDRatioBased(r)), err
	}
	return nil, fmt.Errorf("telemetry: sampler %q is not one of always_on, always_off, traceidratio, parentbased_always_on, parentbased_always_off, parentbased_traceidratio", name)
}

// TraceID returns the trace id of the span in ctx, "" when none is
// recorded: for log lines about a call.
func TraceID(ctx context.Context) string {
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() || !sc.IsSampled() {
		return ""
	}
	return sc.TraceID().String()
}

// exportTimeout bounds one export to the backend.
const exportTimeout = 10 * time.Second
