package telemetry

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// Queue and batch sizes of exportProcessor.
const (
	queueSize = 8192
	batchSize = 512
	batchWait = time.Second
)

// exportProcessor is a span processor that never blocks the span's
// goroutine: an ended span is appended to a bounded buffer, or is dropped
// and counted when the buffer is full; one goroutine exports batches. It is
// the SDK's batch processor with the one thing that one lacks, a count of
// what it dropped (for /metrics), including whole batches the backend
// refused or did not take in time.
//
// The buffer is a slice under a mutex, not a channel: a channel receive
// woke the exporting goroutine for every span (two wake-ups a call), which
// cost more CPU than the spans themselves. Now it wakes when a batch is
// full, on its one-second tick, and on flush or shutdown.
type exportProcessor struct {
	exporter sdktrace.SpanExporter
	logger   hclog.Logger
	wake     chan struct{} // capacity 1: a full batch is waiting
	flush    chan chan struct{}
	stop     chan struct{}
	done     chan struct{}
	once     sync.Once

	mu      sync.Mutex
	pending []sdktrace.ReadOnlySpan // at most queueSize

	dropped, exported atomic.Int64
	lastWarn          atomic.Int64 // unix nanos of the last warning about drops
}

func newExportProcessor(exp sdktrace.SpanExporter, logger hclog.Logger) *exportProcessor {
	p := &exportProcessor{exporter: exp, logger: logger, wake: make(chan struct{}, 1),
		flush: make(chan chan struct{}), stop: make(chan struct{}), done: make(chan struct{}),
		pending: make([]sdktrace.ReadOnlySpan, 0, batchSize)}
	go p.run() // ends with Shutdown
	return p
}

// OnStart implements sdktrace.SpanProcessor.
func (p *exportProcessor) OnStart(context.Context, sdktrace.ReadWriteSpan) {}

// OnEnd implements sdktrace.SpanProcessor: never blocks for longer than an
// append under a mutex.
func (p *exportProcessor) OnEnd(s sdktrace.ReadOnlySpan) {
	if !s.SpanContext().IsSampled() {
		return
	}
	p.mu.Lock()
	if len(p.pending) >= queueSize {
		p.mu.Unlock()
		p.drop(1, "the export queue is full")
		return
	}
	p.pending = append(p.pending, s)
	full := len(p.pending) == batchSize
	p.mu.Unlock()
	if full {
		select {
		case p.wake <- struct{}{}:
		default: // already woken
		}
	}
}

func (p *exportProcessor) drop(n int, why string) {
	p.dropped.Add(int64(n))
	now := time.Now().UnixNano()
	if last := p.lastWarn.Load(); now-last > int64(time.Minute) && p.lastWarn.CompareAndSwap(last, now) {
		p.logger.Warn("trace spans dropped", "why", why, "dropped_total", p.dropped.Load())
	}
}

// take returns the spans waiting and leaves the buffer empty; spare is an
// emptied earlier result, reused as the next buffer.
func (p *exportProcessor) take(spare []sdktrace.ReadOnlySpan) []sdktrace.ReadOnlySpan {
	clear(spare)
	p.mu.Lock()
	spans := p.pending
	p.pending = spare[:0]
	p.mu.Unlock()
	return spans
}

// exportAll exports spans in batches of at most batchSize.
func (p *exportProcessor) exportAll(spans []sdktrace.ReadOnlySpan) {
	for len(spans) > 0 {
		batch := spans[:min(len(spans), batchSize)]
		spans = spans[len(batch):]
		ctx, cancel := context.WithTimeout(context.Background(), exportTimeout)
		err := p.exporter.ExportSpans(ctx, batch)
		cancel()
		if err != nil {
			p.drop(len(batch), "the backend did not take them: "+err.Error())
		} else {
			p.exported.Add(int64(len(batch)))
		}
	}
}

func (p *exportProcessor) run() {
	defer close(p.done)
	tick := time.NewTicker(batchWait)
	defer tick.Stop()
	spare := make([]sdktrace.ReadOnlySpan, 0, batchSize)
	exportPending := func() {
		spans := p.take(spare)
		p.exportAll(spans)
		spare = spans
	}
	for {
		select {
		case <-p.wake:
			exportPending()
		case <-tick.C:
			exportPending()
		case ack := <-p.flush:
			exportPending()
			close(ack)
		case <-p.stop:
			exportPending()
			return
		}
	}
}

// ForceFlush implements sdktrace.SpanProcessor.
func (p *exportProcessor) ForceFlush(ctx context.Context) error {
	ack := make(chan struct{})
	select {
	case p.flush <- ack:
	case <-p.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-ack:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Shutdown implements sdktrace.SpanProcessor.
func (p *exportProcessor) Shutdown(ctx context.Context) error {
	p.once.Do(func() { close(p.stop) })
	select {
	case <-p.done:
	case <-ctx.Done():
		return ctx.Err()
	}
	return p.exporter.Shutdown(ctx)
}
