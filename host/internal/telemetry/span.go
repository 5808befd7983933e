package telemetry

import (
	"context"
	"encoding/hex"
	"net/http"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
)

// instrumentation names the host's spans' instrumentation scope.
const instrumentation = "github.com/mcphost/mcphost"

// Start starts a span named name as a child of the span in ctx, with that
// span's tracer provider (so no tracer is passed around, nor kept in a
// global). When ctx holds no recording span (tracing off, or the trace
// not sampled) it costs nothing: ctx is returned as is, with a span that
// does nothing.
func Start(ctx context.Context, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	parent := trace.SpanFromContext(ctx)
	if !parent.IsRecording() {
		return ctx, tracenoop.Span{}
	}
	return parent.TracerProvider().Tracer(instrumentation).Start(ctx, name, opts...)
}

// Inject writes the trace context of ctx's span into h (traceparent,
// tracestate), when it is recorded: an outbound request joins the trace.
func Inject(ctx context.Context, h http.Header) {
	if !trace.SpanFromContext(ctx).IsRecording() {
		return
	}
	propagation.TraceContext{}.Inject(ctx, propagation.HeaderCarrier(h))
}

// TraceParent returns the W3C traceparent and tracestate of ctx's span,
// "" when none is recorded: for the plugin's envelope (ABI.md §16). It
// writes the header as propagation.TraceContext does (version 00), in one
// allocation instead of a carrier map's.
func TraceParent(ctx context.Context) (traceparent, tracestate string) {
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() {
		return "", ""
	}
	sc := span.SpanContext()
	var b [55]byte // 00-<32 hex>-<16 hex>-<2 hex>
	tid, sid := sc.TraceID(), sc.SpanID()
	copy(b[:], "00-")
	hex.Encode(b[3:35], tid[:])
	b[35] = '-'
	hex.Encode(b[36:52], sid[:])
	b[52] = '-'
	hex.Encode(b[53:55], []byte{byte(sc.TraceFlags() & trace.FlagsSampled)})
	return string(b[:]), sc.TraceState().String()
}
