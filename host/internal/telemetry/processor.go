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
// goroutine: an ended span goes into a bounded queue, or is dropped and
// counted when the queue is full; one goroutine exports batches. It is
// the SDK's batch processor with the one thing that one lacks, a count of
// what it dropped (for /metrics), including whole batches the backend
// refused or did not take in time.
type exportProcessor struct {
	exporter sdktrace.SpanExporter
	logger   hclog.Logger
	queue    chan sdktrace.ReadOnlySpan
	flush    chan chan struct{}
	stop     chan struct{}
	done     chan struct{}
	once     sync.Once

	dropped, exported atomic.Int64
	lastWarn          atomic.Int64 // unix nanos of the last warning about drops
}

func newExportProcessor(exp sdktrace.SpanExporter, logger hclog.Logger) *exportProcessor {
	p := &exportProcessor{exporter: exp, logger: logger, queue: make(chan sdktrace.ReadOnlySpan, queueSize),
		flush: make(chan chan struct{}), stop: make(chan struct{}), done: make(chan struct{})}
	go p.run() // ends with Shutdown
	return p
}

// OnStart implements sdktrace.SpanProcessor.
func (p *exportProcessor) OnStart(context.Context, sdktrace.ReadWriteSpan) {}

// OnEnd implements sdktrace.SpanProcessor: never blocks.
func (p *exportProcessor) OnEnd(s sdktrace.ReadOnlySpan) {
	if !s.SpanContext().IsSampled() {
		return
	}
	select {
	case p.queue <- s:
	default:
		p.drop(1, "the export queue is full")
	}
}

func (p *exportProcessor) drop(n int, why string) {
	p.dropped.Add(int64(n))
	now := time.Now().UnixNano()
	if last := p.lastWarn.Load(); now-last > int64(time.Minute) && p.lastWarn.CompareAndSwap(last, now) {
		p.logger.Warn("trace spans dropped", "why", why, "dropped_total", p.dropped.Load())
	}
}

func (p *exportProcessor) run() {
	defer close(p.done)
	batch := make([]sdktrace.ReadOnlySpan, 0, batchSize)
	tick := time.NewTicker(batchWait)
	defer tick.Stop()
	export := func() {
		if len(batch) == 0 {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), exportTimeout)
		err := p.exporter.ExportSpans(ctx, batch)
		cancel()
		if err != nil {
			p.drop(len(batch), "the backend did not take them: "+err.Error())
		} else {
			p.exported.Add(int64(len(batch)))
		}
		batch = batch[:0]
	}
	for {
		select {
		case s := <-p.queue:
			batch = append(batch, s)
			if len(batch) == batchSize {
				export()
			}
		case <-tick.C:
			export()
		case ack := <-p.flush:
			p.drain(&batch, export)
			close(ack)
		case <-p.stop:
			p.drain(&batch, export)
			return
		}
	}
}

// drain exports what the queue holds now.
func (p *exportProcessor) drain(batch *[]sdktrace.ReadOnlySpan, export func()) {
	for {
		select {
		case s := <-p.queue:
			*batch = append(*batch, s)
			if len(*batch) == batchSize {
				export()
			}
		default:
			export()
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
