package telemetry

import (
	"context"
	"encoding/binary"
	"math/rand/v2"

	"go.opentelemetry.io/otel/trace"
)

// idGenerator makes trace and span ids from math/rand/v2's global source
// (ChaCha8, per OS thread, no lock). The SDK's default generator draws
// from one math/rand source behind a mutex, which every concurrent call
// contends on.
type idGenerator struct{}

// NewIDs implements sdktrace.IDGenerator.
func (idGenerator) NewIDs(context.Context) (trace.TraceID, trace.SpanID) {
	var tid trace.TraceID
	for !tid.IsValid() {
		binary.NativeEndian.PutUint64(tid[:8], rand.Uint64())
		binary.NativeEndian.PutUint64(tid[8:], rand.Uint64())
	}
	return tid, newSpanID()
}

// NewSpanID implements sdktrace.IDGenerator.
func (idGenerator) NewSpanID(context.Context, trace.TraceID) trace.SpanID {
	return newSpanID()
}

func newSpanID() trace.SpanID {
	var sid trace.SpanID
	for !sid.IsValid() {
		binary.NativeEndian.PutUint64(sid[:], rand.Uint64())
	}
	return sid
}
