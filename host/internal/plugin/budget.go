package plugin

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Budget bounds the Wasm memory the plugins of a host hold ([server]
// max_memory_mb). Every instance counts at its plugin's memory cap
// (memory_mb), the most its memory may grow to, from the moment it is
// made until it is closed: what the host may be asked to hold, known
// before the instance runs, rather than what it has touched so far.
//
// When a new instance would pass the budget, idle instances of other
// plugins are closed first, least recently used plugin first; only then
// does the call wait for memory to be freed (bounded by its context and by
// the plugin's timeout: the call's deadline), or fail with an error naming
// the budget, the plugin and what is held. A
// hyper-mcp plugin's instance keeps state between calls and is never
// evicted. The zero value is not usable; make one with NewBudget. Its
// methods are safe for concurrent use.
type Budget struct {
	limit int64 // bytes; 0: no limit, memory is only counted

	mu      sync.Mutex
	held    int64
	pools   map[*pool]int // instances each pool holds
	changed chan struct{} // closed (and replaced) when memory is freed or an instance goes idle
	waiters atomic.Int64  // callers waiting on changed
	evicted atomic.Int64  // instances closed to make room
}

// NewBudget returns a budget of limitBytes; 0 counts memory without a
// limit.
func NewBudget(limitBytes int64) *Budget {
	return &Budget{limit: limitBytes, pools: map[*pool]int{}, changed: make(chan struct{})}
}

// ErrMemoryBudget is the cause of a call that found no room in the memory
// budget.
var ErrMemoryBudget = errors.New("memory budget exhausted")

// BudgetStats describes a Budget: the bytes held by instances now, the
// limit (0: none), and the instances evicted to make room since the host
// started.
type BudgetStats struct {
	Held, Limit int64
	Evicted     int64
}

// Stats reports the budget's BudgetStats.
func (b *Budget) Stats() BudgetStats {
	b.mu.Lock()
	defer b.mu.Unlock()
	return BudgetStats{Held: b.held, Limit: b.limit, Evicted: b.evicted.Load()}
}

// join registers a pool whose instances count against the budget.
func (b *Budget) join(p *pool) {
	b.mu.Lock()
	b.pools[p] = 0
	b.mu.Unlock()
}

// leave removes a closed pool, whose instances have all been freed.
func (b *Budget) leave(p *pool) {
	b.mu.Lock()
	delete(b.pools, p)
	b.mu.Unlock()
}

// heldBy returns the bytes p's instances hold.
func (b *Budget) heldBy(p *pool) int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return int64(b.pools[p]) * p.cost
}

// reserve counts one more instance of p, evicting idle instances of other
// pools when evict is set and that makes room. When there is no room it
// returns a channel that is closed when there may be (nil: reserved), or
// an error when the instance can never fit. A caller given a channel must
// pass it to wait, or call unwait.
func (b *Budget) reserve(p *pool, evict bool) (<-chan struct{}, error) {
	// Counted as a waiter before looking, so that an instance going idle
	// after the look wakes it (idled skips the lock when none wait).
	b.waiters.Add(1)
	b.mu.Lock()
	if b.limit > 0 && p.cost > b.limit {
		b.mu.Unlock()
		b.waiters.Add(-1)
		return nil, fmt.Errorf("%w: one instance of plugin %q (memory_mb = %d) is more than max_memory_mb = %d",
			ErrMemoryBudget, p.owner, p.cost>>20, b.limit>>20)
	}
	if _, ok := b.pools[p]; !ok {
		b.mu.Unlock()
		b.waiters.Add(-1)
		return nil, errPoolClosed
	}
	var victims []*instance
	var emptied []*pool
	if b.limit > 0 && b.held+p.cost > b.limit && evict {
		victims, emptied = b.evictLocked(p, b.held+p.cost-b.limit)
	}
	if b.limit > 0 && b.held+p.cost > b.limit {
		ch := b.changed
		b.mu.Unlock()
		return ch, nil
	}
	b.held += p.cost
	b.pools[p]++
	b.mu.Unlock()
	b.waiters.Add(-1)
	for _, inst := range victims {
		_ = inst.close(context.Background())
	}
	for _, q := range emptied {
		if q.emptied != nil {
			q.emptied()
		}
	}
	return nil, nil
}

// evictLocked takes idle instances off pools other than p, least recently
// used first, until need bytes are freed; it takes none when all of them
// would not free enough. It returns them, and the pools left with no
// instance. The caller holds b.mu and closes what it returns.
func (b *Budget) evictLocked(p *pool, need int64) ([]*instance, []*pool) {
	var candidates []*pool
	var room int64
	for q, n := range b.pools {
		if q == p || n == 0 || !q.evictable() {
			continue
		}
		if idle := q.idleCount(); idle > 0 {
			candidates = append(candidates, q)
			room += int64(idle) * q.cost
		}
	}
	if room < need {
		return nil, nil
	}
	slices.SortFunc(candidates, func(x, y *pool) int { return x.lastUse().Compare(y.lastUse()) })
	var victims []*instance
	var emptied []*pool
	for _, q := range candidates {
		for need > 0 {
			inst := q.takeIdle()
			if inst == nil {
				break
			}
			victims = append(victims, inst)
			b.held -= q.cost
			b.pools[q]--
			need -= q.cost
			q.evictions.Add(1)
			b.evicted.Add(1)
		}
		if b.pools[q] == 0 {
			emptied = append(emptied, q)
		}
		if need <= 0 {
			break
		}
	}
	return victims, emptied
}

// free uncounts one instance of p, which has been closed (or was never
// made), and wakes the callers waiting for room.
func (b *Budget) free(p *pool) {
	b.mu.Lock()
	b.held -= p.cost
	if _, ok := b.pools[p]; ok {
		b.pools[p]--
	}
	b.wakeLocked()
	b.mu.Unlock()
}

// idled wakes the callers waiting for room: an instance went idle, and may
// be evicted (or taken by its own plugin's caller).
func (b *Budget) idled() {
	if b.waiters.Load() == 0 {
		return
	}
	b.mu.Lock()
	b.wakeLocked()
	b.mu.Unlock()
}

func (b *Budget) wakeLocked() {
	close(b.changed)
	b.changed = make(chan struct{})
}

// wait waits for ch (from reserve), ctx or the end of the wait; it returns
// the error for a call that found no room.
func (b *Budget) wait(ctx context.Context, p *pool, ch <-chan struct{}, deadline <-chan time.Time) error {
	defer b.unwait()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("%w (%w)", b.noRoom(p), ctx.Err())
	case <-deadline:
		return fmt.Errorf("%w (waited %s)", b.noRoom(p), p.budgetWait)
	case <-p.done:
		return errPoolClosed
	}
}

// unwait ends a wait begun by reserve.
func (b *Budget) unwait() { b.waiters.Add(-1) }

// noRoom describes why there is no room for an instance of p: the budget,
// and what each plugin holds.
func (b *Budget) noRoom(p *pool) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	type hold struct {
		name         string
		inUse, idle  int
		bytes        int64
		notEvictable bool
	}
	byName := map[string]*hold{}
	for q, n := range b.pools {
		if n == 0 {
			continue
		}
		h := byName[q.owner]
		if h == nil {
			h = &hold{name: q.owner}
			byName[q.owner] = h
		}
		idle := q.idleCount()
		h.idle += idle
		h.inUse += n - idle
		h.bytes += int64(n) * q.cost
		h.notEvictable = h.notEvictable || !q.evictable()
	}
	holds := slices.Collect(func(yield func(*hold) bool) {
		for _, h := range byName {
			if !yield(h) {
				return
			}
		}
	})
	slices.SortFunc(holds, func(x, y *hold) int { return cmp.Or(cmp.Compare(y.bytes, x.bytes), strings.Compare(x.name, y.name)) })
	var parts []string
	for _, h := range holds {
		s := fmt.Sprintf("%q %d MiB (%d in use, %d idle", h.name, h.bytes>>20, h.inUse, h.idle)
		if h.notEvictable {
			s += ", kept: hyper-mcp"
		}
		parts = append(parts, s+")")
	}
	return fmt.Errorf("%w: no room for another instance of plugin %q (memory_mb = %d) in max_memory_mb = %d; held %d MiB: %s",
		ErrMemoryBudget, p.owner, p.cost>>20, b.limit>>20, b.held>>20, strings.Join(parts, ", "))
}
