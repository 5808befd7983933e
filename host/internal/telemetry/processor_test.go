package telemetry

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// stuckExporter is a backend that takes no batch until released, then
// counts what it took.
type stuckExporter struct {
	release chan struct{}
	mu      sync.Mutex
	took    int
}

func (e *stuckExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	select {
	case <-e.release:
	case <-ctx.Done():
		return ctx.Err()
	}
	e.mu.Lock()
	e.took += len(spans)
	e.mu.Unlock()
	if len(spans) > batchSize {
		panic("batch larger than batchSize")
	}
	return nil
}

func (e *stuckExporter) Shutdown(context.Context) error { return nil }

// TestExportProcessorNeverBlocksAndCountsDrops: while the backend takes
// nothing, ending spans never waits; what does not fit the queue is
// dropped and counted; once the backend takes again, the rest is exported
// in batches on flush, and every span is either exported or dropped.
func TestExportProcessorNeverBlocksAndCountsDrops(t *testing.T) {
	exp := &stuckExporter{release: make(chan struct{})}
	p := newExportProcessor(exp, hclog.NewNullLogger())
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(p), sdktrace.WithIDGenerator(idGenerator{}))
	tracer := tp.Tracer("test")

	// The exporter takes what is pending once before it blocks (at most
	// queueSize, however late it wakes), and the queue then fills again:
	// past twice the queue, some spans must be dropped.
	const spans = 2*queueSize + batchSize
	start := time.Now()
	for range spans {
		_, s := tracer.Start(context.Background(), "s")
		s.End()
	}
	t.Logf("%d spans ended in %v with the backend stuck", spans, time.Since(start))
	if p.dropped.Load() == 0 {
		t.Error("no span dropped although the queue holds fewer than were ended")
	}
	close(exp.release)
	if err := p.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := tp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	exp.mu.Lock()
	took := exp.took
	exp.mu.Unlock()
	if got := p.exported.Load() + p.dropped.Load(); got != spans || int64(took) != p.exported.Load() {
		t.Errorf("exported %d + dropped %d = %d, want %d; the backend took %d", p.exported.Load(), p.dropped.Load(), got, spans, took)
	}
}
