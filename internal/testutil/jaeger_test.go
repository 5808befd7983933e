package testutil

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// jaegerWait is how long the tests wait for spans to reach Jaeger: a hang
// guard, not a deadline (they are there once the exporter has flushed).
const jaegerWait = time.Minute

// TestJaegerReadsBackOTLP sends spans to a real Jaeger with the
// OpenTelemetry Go SDK over both OTLP protocols and reads them back through
// its query API: parent links (a remote parent, as a traceparent gives,
// and local ones), kinds, typed attributes, status, events, links, the
// resource and the instrumentation scope.
func TestJaegerReadsBackOTLP(t *testing.T) {
	start := time.Now()
	j := StartJaeger(t)
	t.Logf("Jaeger %s ready in %v (OTLP gRPC %s, OTLP HTTP %s, query %s)", JaegerRelease, time.Since(start).Round(time.Millisecond), j.GRPCAddr, j.HTTPAddr, j.QueryURL)

	for _, tc := range []struct {
		protocol string
		traceID  string // of the remote parent
	}{
		{OTLPGRPC, "4bf92f3577b34da6a3ce929d0e0e4736"},
		{OTLPHTTP, "0af7651916cd43dd8448eb211c80319c"},
	} {
		t.Run(tc.protocol, func(t *testing.T) {
			ctx := context.Background()
			var exporter sdktrace.SpanExporter
			var err error
			if tc.protocol == OTLPGRPC {
				exporter, err = otlptracegrpc.New(ctx, otlptracegrpc.WithEndpoint(j.GRPCAddr), otlptracegrpc.WithInsecure())
			} else {
				exporter, err = otlptracehttp.New(ctx, otlptracehttp.WithEndpoint(j.HTTPAddr), otlptracehttp.WithInsecure())
			}
			if err != nil {
				t.Fatalf("OTLP exporter over %s: %v", tc.protocol, err)
			}
			service := "testutil-jaeger-" + strings.ReplaceAll(tc.protocol, "/", "-")
			tp := sdktrace.NewTracerProvider(
				sdktrace.WithBatcher(exporter),
				sdktrace.WithSampler(sdktrace.AlwaysSample()),
				sdktrace.WithResource(resource.NewSchemaless(
					attribute.String("service.name", service),
					attribute.String("deployment.environment.name", "test"),
				)),
			)
			tracer := tp.Tracer("mcphost/testutil", trace.WithInstrumentationVersion("0.1.0"))

			// The caller's span, known only by its context (a traceparent).
			remote := spanContext(t, tc.traceID, "00f067aa0ba902b7", true)
			state, err := trace.ParseTraceState("vendor=abc")
			if err != nil {
				t.Fatal(err)
			}
			remote = remote.WithTraceState(state)
			elsewhere := spanContext(t, "11111111111111111111111111111111", "2222222222222222", false)

			ctx, server := tracer.Start(trace.ContextWithRemoteSpanContext(ctx, remote), "tools/call echo",
				trace.WithSpanKind(trace.SpanKindServer),
				trace.WithAttributes(
					attribute.String("mcp.method.name", "tools/call"),
					attribute.String("gen_ai.tool.name", "echo"),
					attribute.Int64("test.int", 42),
					attribute.Bool("test.bool", true),
					attribute.Float64("test.float", 1.5),
					attribute.StringSlice("test.strings", []string{"a", "b"}),
				))
			_, activate := tracer.Start(ctx, "activate hello", trace.WithLinks(trace.Link{SpanContext: elsewhere}))
			activate.End()
			_, client := tracer.Start(ctx, "GET", trace.WithSpanKind(trace.SpanKindClient),
				trace.WithAttributes(attribute.String("http.request.method", "GET")))
			client.AddEvent("retry", trace.WithAttributes(attribute.Int("attempt", 2)))
			client.SetStatus(codes.Error, "upstream answered 503")
			client.End()
			server.SetStatus(codes.Ok, "")
			server.End()
			if err := tp.Shutdown(context.Background()); err != nil {
				t.Fatalf("flush the spans over %s: %v", tc.protocol, err)
			}

			tr := j.WaitForTrace(t, tc.traceID, 3, jaegerWait)
			t.Logf("trace %s:%s", tr.TraceID, tr.Summary())
			if len(tr.Spans) != 3 {
				t.Fatalf("trace has %d spans, want 3", len(tr.Spans))
			}

			s := tr.Span(t, "tools/call echo")
			if s.TraceID != tc.traceID || s.SpanID != server.SpanContext().SpanID().String() {
				t.Errorf("server span is %s/%s, want %s/%s", s.TraceID, s.SpanID, tc.traceID, server.SpanContext().SpanID())
			}
			if s.ParentSpanID != "00f067aa0ba902b7" {
				t.Errorf("server span's parent is %q, want the remote 00f067aa0ba902b7", s.ParentSpanID)
			}
			if s.Kind != "server" || s.Status != (Status{Code: "OK"}) || s.Service != service {
				t.Errorf("server span: kind %q, status %+v, service %q; want server, OK, %s", s.Kind, s.Status, s.Service, service)
			}
			for key, want := range map[string]any{
				"mcp.method.name":  "tools/call",
				"gen_ai.tool.name": "echo",
				"test.int":         int64(42),
				"test.bool":        true,
				"test.float":       1.5,
				"test.strings":     `["a","b"]`,
			} {
				if got := s.Attributes[key]; got != want {
					t.Errorf("server span attribute %s = %#v, want %#v", key, got, want)
				}
			}
			if s.TraceState != "vendor=abc" {
				t.Errorf("server span's tracestate is %q, want the remote parent's vendor=abc", s.TraceState)
			}
			if s.Resource["deployment.environment.name"] != "test" {
				t.Errorf("resource = %v, want deployment.environment.name=test", s.Resource)
			}
			if s.Scope != "mcphost/testutil" || s.ScopeVersion != "0.1.0" {
				t.Errorf("scope %q %q, want mcphost/testutil 0.1.0", s.Scope, s.ScopeVersion)
			}
			if s.Duration <= 0 || s.Start.IsZero() {
				t.Errorf("server span starts at %v and lasts %v", s.Start, s.Duration)
			}

			a := tr.Span(t, "activate hello")
			if a.ParentSpanID != s.SpanID || a.Kind != "internal" || a.Status.Code != "" {
				t.Errorf("activate span: parent %q, kind %q, status %+v; want %s, internal, unset", a.ParentSpanID, a.Kind, a.Status, s.SpanID)
			}
			if len(a.Links) != 1 || a.Links[0].TraceID != "11111111111111111111111111111111" || a.Links[0].SpanID != "2222222222222222" {
				t.Errorf("activate span's links = %+v, want one to 1111…/2222222222222222", a.Links)
			}

			c := tr.Span(t, "GET")
			if c.ParentSpanID != s.SpanID || c.Kind != "client" {
				t.Errorf("client span: parent %q, kind %q; want %s, client", c.ParentSpanID, c.Kind, s.SpanID)
			}
			if c.Status != (Status{Code: "ERROR", Message: "upstream answered 503"}) {
				t.Errorf("client span status = %+v, want ERROR upstream answered 503", c.Status)
			}
			if _, ok := c.Attributes["error"]; ok {
				t.Errorf("client span attributes keep Jaeger's error flag: %v", c.Attributes)
			}
			if len(c.Events) != 1 || c.Events[0].Name != "retry" || c.Events[0].Attributes["attempt"] != int64(2) {
				t.Errorf("client span events = %+v, want retry with attempt=2", c.Events)
			}
			if got := tr.Children(s); len(got) != 2 {
				t.Errorf("server span has %d children, want 2", len(got))
			}

			spans := j.WaitForSpans(t, service, 3, jaegerWait)
			if len(spans) != 3 {
				t.Errorf("WaitForSpans(%s) = %d spans, want 3", service, len(spans))
			}
			traces := j.Traces(t, service)
			if len(traces) != 1 || traces[0].TraceID != tc.traceID {
				t.Errorf("Traces(%s) = %d traces, want only %s", service, len(traces), tc.traceID)
			}
		})
	}

	if traces := j.Traces(t, "no-such-service"); len(traces) != 0 {
		t.Errorf("Traces(no-such-service) = %d traces, want none", len(traces))
	}
	if _, ok := j.TraceByID(t, "ffffffffffffffffffffffffffffffff"); ok {
		t.Error("TraceByID found a trace that was never sent")
	}
}

// TestJaegerServesOTLPMetrics sends a histogram to the same Jaeger over both
// OTLP protocols and scrapes it back, as Prometheus names it.
func TestJaegerServesOTLPMetrics(t *testing.T) {
	j := StartJaeger(t)
	for _, protocol := range []string{OTLPGRPC, OTLPHTTP} {
		t.Run(protocol, func(t *testing.T) {
			ctx := context.Background()
			var exporter sdkmetric.Exporter
			var err error
			if protocol == OTLPGRPC {
				exporter, err = otlpmetricgrpc.New(ctx, otlpmetricgrpc.WithEndpoint(j.GRPCAddr), otlpmetricgrpc.WithInsecure())
			} else {
				exporter, err = otlpmetrichttp.New(ctx, otlpmetrichttp.WithEndpoint(j.HTTPAddr), otlpmetrichttp.WithInsecure())
			}
			if err != nil {
				t.Fatalf("OTLP metric exporter over %s: %v", protocol, err)
			}
			service := "testutil-jaeger-" + strings.ReplaceAll(protocol, "/", "-")
			mp := sdkmetric.NewMeterProvider(
				sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exporter)),
				sdkmetric.WithResource(resource.NewSchemaless(attribute.String("service.name", service))),
			)
			h, err := mp.Meter("mcphost/testutil").Float64Histogram("mcp.server.operation.duration", metric.WithUnit("s"))
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range []float64{0.002, 0.25} {
				h.Record(ctx, d, metric.WithAttributes(attribute.String("mcp.method.name", "tools/call")))
			}
			// Shutdown exports what was recorded.
			if err := mp.Shutdown(ctx); err != nil {
				t.Fatalf("flush the metrics over %s: %v", protocol, err)
			}

			lines := j.WaitForMetric(t, "mcp_server_operation_duration_seconds_count", jaegerWait, `job="`+service+`"`)
			if len(lines) != 1 {
				t.Fatalf("%d count lines of %s, want 1: %q", len(lines), service, lines)
			}
			count := lines[0]
			if !strings.Contains(count, `mcp_method_name="tools/call"`) || !strings.HasSuffix(count, " 2") {
				t.Errorf("count line = %s, want mcp_method_name=\"tools/call\" and 2 samples", count)
			}
		})
	}
}

// spanContext makes a sampled span context from hex IDs.
func spanContext(t *testing.T, traceID, spanID string, remote bool) trace.SpanContext {
	t.Helper()
	tid, err := trace.TraceIDFromHex(traceID)
	if err != nil {
		t.Fatal(err)
	}
	sid, err := trace.SpanIDFromHex(spanID)
	if err != nil {
		t.Fatal(err)
	}
	return trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled, Remote: remote})
}
