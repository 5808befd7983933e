package plugin

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"
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
	poolBudget

	mu      sync.Mutex
	idle    []*instance
	closed  bool
	done    chan struct{} // closed by close()
	refills sync.WaitGroup
	filling int             // replacements being made now
	filled  chan struct{}   // closed (and replaced) when one is done
	ctx     context.Context // ends when the pool closes
	cancel  context.CancelFunc
	used    time.Time // last get or put, for the budget's eviction order
}

// poolBudget is how a pool's instances count against a memory budget
// (budget.go).
type poolBudget struct {
	budget     *Budget // nil: none
	cost       int64   // bytes each instance counts
	owner      string  // the plugin's name
	budgetWait time.Duration
	// evictable reports whether idle instances may be closed to make room
	// for other plugins' (not a hyper-mcp plugin's, which keep state).
	evictable func() bool
	evictions *atomic.Int64 // the plugin's instances evicted
	// emptied, when set, is called (without locks held) after the budget
	// evicted the pool's last instance.
	emptied func()
}

func newPool(size int, newInstance func(ctx context.Context) (*instance, error), pb poolBudget) *pool {
	ctx, cancel := context.WithCancel(context.Background())
	p := &pool{
		slots:       make(chan struct{}, size),
		newInstance: newInstance,
		poolBudget:  pb,
		done:        make(chan struct{}),
		filled:      make(chan struct{}),
		ctx:         ctx,
		cancel:      cancel,
		used:        time.Now(),
	}
	if p.budget != nil {
		p.budget.join(p)
	}
	return p
}

// make makes an instance once the budget has room for it: with wait set,
// after evicting other plugins' idle instances and waiting (bounded by ctx
// and budgetWait) for room; without, only if there is room now that no one
// waits for. A caller that waited may be handed an idle instance of this
// pool instead. The caller holds a slot.
func (p *pool) make(ctx context.Context, wait bool) (*instance, error) {
	if p.budget != nil {
		inst, err := p.budget.acquire(ctx, p, wait)
		if err != nil {
			return nil, err
		}
		if inst != nil {
			return inst, nil
		}
	}
	inst, err := p.newInstance(ctx)
	if err != nil {
		if p.budget != nil {
			p.budget.free(p)
		}
		return nil, err
	}
	return inst, nil
}

// discard closes an instance that leaves the pool and uncounts it.
func (p *pool) discard(inst *instance) {
	_ = inst.close(context.Background())
	if p.budget != nil {
		p.budget.free(p)
	}
}

// takeIdle takes an idle instance, or returns nil.
func (p *pool) takeIdle() *instance {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := len(p.idle)
	if n == 0 || p.closed {
		return nil
	}
	inst := p.idle[n-1]
	p.idle = p.idle[:n-1]
	return inst
}

// idleCount returns how many instances are idle.
func (p *pool) idleCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.idle)
}

// lastUse returns when the pool last lent or took back an instance.
func (p *pool) lastUse() time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.used
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
		p.used = time.Now()
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
	inst, err := p.make(ctx, true)
	if err != nil {
		<-p.slots
		return nil, err
	}
	return inst, nil
}

// put returns an instance taken with get. A healthy instance goes back to
// the idle list; any other, and one whose call went deep (its stack is
// kept large), is closed at once, its memory freed, before its
// replacement is made.
func (p *pool) put(inst *instance, healthy bool) {
	p.mu.Lock()
	p.used = time.Now()
	if healthy && !p.closed && !inst.deepStack {
		p.idle = append(p.idle, inst)
		p.mu.Unlock()
		// Before the slot is freed: a waiter of another plugin served
		// before this one's (its plugin holds less) may evict the
		// instance before this plugin's next caller reuses it.
		if p.budget != nil {
			p.budget.idled()
		}
		<-p.slots
		return
	}
	p.mu.Unlock()
	p.discard(inst)
	p.mu.Lock()
	if !p.closed {
		p.filling++
		p.refills.Go(p.refill)
	}
	p.mu.Unlock()
	<-p.slots
}

// putBack returns to the idle list an instance the budget handed to a
// caller that had stopped waiting; the caller holds no slot for it.
func (p *pool) putBack(inst *instance) {
	p.mu.Lock()
	if p.closed || len(p.idle) >= cap(p.slots) {
		p.mu.Unlock()
		p.discard(inst)
		return
	}
	p.idle = append(p.idle, inst)
	p.mu.Unlock()
	if p.budget != nil {
		p.budget.idled()
	}
}

// refill creates an instance for the idle list, replacing a discarded one.
func (p *pool) refill() {
	inst, err := p.make(p.ctx, false)
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
		p.discard(inst)
		return
	}
	p.idle = append(p.idle, inst)
	p.mu.Unlock()
	if p.budget != nil {
		p.budget.idled()
	}
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
		p.discard(inst)
	}
	if p.budget != nil {
		// Instances still in use (ctx ended first) are uncounted when
		// they are handed back.
		p.budget.leave(p)
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
		inst, err := p.make(ctx, false)
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
		p.discard(inst)
	}
}
