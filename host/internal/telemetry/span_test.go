package telemetry

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// TestTraceParentMatchesThePropagator: the hand-written header is the one
// propagation.TraceContext writes, tracestate included; no recording span
// gives "".
func TestTraceParentMatchesThePropagator(t *testing.T) {
	tp := sdktrace.NewTracerProvider(sdktrace.WithIDGenerator(idGenerator{}))
	defer tp.Shutdown(context.Background())
	state, err := trace.ParseTraceState("vendor=value,other=x")
	if err != nil {
		t.Fatal(err)
	}
	parent := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: [16]byte{1, 2, 3}, SpanID: [8]byte{4, 5}, TraceFlags: trace.FlagsSampled, TraceState: state, Remote: true,
	})
	ctx, span := tp.Tracer("test").Start(trace.ContextWithRemoteSpanContext(context.Background(), parent), "x")
	defer span.End()

	want := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(ctx, want)
	gotParent, gotState := TraceParent(ctx)
	if gotParent != want["traceparent"] || gotState != want["tracestate"] {
		t.Errorf("TraceParent = %q, %q; the propagator writes %q, %q", gotParent, gotState, want["traceparent"], want["tracestate"])
	}
	if p, s := TraceParent(context.Background()); p != "" || s != "" {
		t.Errorf("TraceParent without a span = %q, %q", p, s)
	}
}

// TestIDGeneratorMakesValidDistinctIDs: no zero ids (invalid in W3C), and
// no repeats in a few thousand.
func TestIDGeneratorMakesValidDistinctIDs(t *testing.T) {
	seen := map[trace.SpanID]bool{}
	for range 5000 {
		tid, sid := idGenerator{}.NewIDs(context.Background())
		child := idGenerator{}.NewSpanID(context.Background(), tid)
		if !tid.IsValid() || !sid.IsValid() || !child.IsValid() {
			t.Fatalf("invalid ids %v %v %v", tid, sid, child)
		}
		if seen[sid] || seen[child] {
			t.Fatalf("span id repeated")
		}
		seen[sid], seen[child] = true, true
	}
}
