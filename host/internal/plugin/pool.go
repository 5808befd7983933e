package plugin

import (
	"context"
	"errors"
	"sync"
)

// errPoolClosed is returned to callers that wait for an instance of a plugin
// that is being closed.
var errPoolClosed = errors.New("plugin is closed")

// pool holds warm instances of one compiled plugin. At most cap(slots)
// instances exist at once; a caller waiting for one respects its context.
// An instance is reused only when the call on it ended cleanly; one that
// trapped, timed out or was cancelled is closed and later replaced.
//
// A discarded instance is replaced in the background, so that the next
// call finds a warm one instead of paying for instantiation; a caller that
// finds no idle instance while a replacement is being made waits for it
// rather than making a second one.
type pool struct {
	slots       chan struct{}
	newInstance func(ctx context.Context) (*instance, error)

	mu      sync.Mutex
	idle    []*instance
	closed  bool
	done    chan struct{} // closed by close()
	refills sync.WaitGroup
	filling int             // replacements being made now
	filled  chan struct{}   // closed (and replaced) when one is done
	ctx     context.Context // ends when the pool closes
	cancel  context.CancelFunc
}

func newPool(size int, newInstance func(ctx context.Context) (*instance, error)) *pool {
	ctx, cancel := context.WithCancel(context.Background())
	return &pool{
		slots:       make(chan struct{}, size),
		newInstance: newInstance,
		done:        make(chan struct{}),
		filled:      make(chan struct{}),
		ctx:         ctx,
		cancel:      cancel,
	}
}

// get returns an instance for exclusive use; the caller must hand it back
// with put. It blocks while all instances are busy.
func (p *pool) get(ctx context.Context) (*instance, error) {
	select {
	case p.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-p.done:
		return nil, errPoolClosed
	}
	for {
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			<-p.slots
			return nil, errPoolClosed
		}
		if n := len(p.idle); n > 0 {
			inst := p.idle[n-1]
			p.idle = p.idle[:n-1]
			p.mu.Unlock()
			return inst, nil
		}
		if p.filling == 0 {
			p.mu.Unlock()
			break
		}
		filled := p.filled
		p.mu.Unlock()
		select {
		case <-filled:
		case <-ctx.Done():
			<-p.slots
			return nil, ctx.Err()
		case <-p.done:
			<-p.slots
			return nil, errPoolClosed
		}
	}
	inst, err := p.newInstance(ctx)
	if err != nil {
		<-p.slots
		return nil, err
	}
	return inst, nil
}

// put returns an instance taken with get. A healthy instance goes back to
// the idle list; any other is closed at once, its memory freed, before its
// replacement is made.
func (p *pool) put(inst *instance, healthy bool) {
	p.mu.Lock()
	if healthy && !p.closed {
		p.idle = append(p.idle, inst)
		p.mu.Unlock()
		<-p.slots
		return
	}
	p.mu.Unlock()
	_ = inst.close(context.Background())
	p.mu.Lock()
	if !p.closed {
		p.filling++
		p.refills.Go(p.refill)
	}
	p.mu.Unlock()
	<-p.slots
}

// refill creates an instance for the idle list, replacing a discarded one.
func (p *pool) refill() {
	inst, err := p.newInstance(p.ctx)
	p.mu.Lock()
	p.filling--
	close(p.filled) // wake callers waiting for it; they look again
	p.filled = make(chan struct{})
	if err != nil {
		// A caller that now finds no instance makes one, and reports why
		// it cannot.
		p.mu.Unlock()
		return
	}
	if p.closed || len(p.idle) >= cap(p.slots) {
		p.mu.Unlock()
		_ = inst.close(context.Background())
		return
	}
	p.idle = append(p.idle, inst)
	p.mu.Unlock()
}

// close stops handing out instances, waits (bounded by ctx) until every
// instance in use has been handed back, and closes the idle ones.
func (p *pool) close(ctx context.Context) error {
	p.mu.Lock()
	if !p.closed {
		p.closed = true
		close(p.done)
	}
	p.mu.Unlock()
	p.cancel()
	p.refills.Wait()
	// Take every slot: once we hold them all, no call is running.
	var err error
	taken := 0
	for ; taken < cap(p.slots); taken++ {
		select {
		case p.slots <- struct{}{}:
			continue
		case <-ctx.Done():
			err = ctx.Err()
		}
		break
	}
	for ; taken > 0; taken-- {
		<-p.slots
	}
	p.mu.Lock()
	idle := p.idle
	p.idle = nil
	p.mu.Unlock()
	for _, inst := range idle {
		_ = inst.close(context.Background())
	}
	return err
}

// stats reports how many instances are in use, idle, and the cap.
func (p *pool) stats() (inUse, idle, capacity int) {
	p.mu.Lock()
	idle = len(p.idle)
	p.mu.Unlock()
	return len(p.slots), idle, cap(p.slots)
}

// warm makes idle instances until the pool has n idle, or every slot is
// taken (calls are using the pool), or it is closed.
func (p *pool) warm(ctx context.Context, n int) error {
	for {
		p.mu.Lock()
		enough := p.closed || len(p.idle) >= n
		p.mu.Unlock()
		if enough {
			return nil
		}
		select {
		case p.slots <- struct{}{}:
		default:
			return nil
		}
		inst, err := p.newInstance(ctx)
		if err != nil {
			<-p.slots
			return err
		}
		p.put(inst, true)
	}
}

// trim closes idle instances beyond keep.
func (p *pool) trim(keep int) {
	p.mu.Lock()
	var drop []*instance
	if len(p.idle) > keep {
		drop = append(drop, p.idle[keep:]...)
		p.idle = p.idle[:keep]
	}
	p.mu.Unlock()
	for _, inst := range drop {
		_ = inst.close(context.Background())
	}
}
