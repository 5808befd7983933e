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

// InstanceBytes is what one instance of a plugin with memory cap
// memoryMB counts against the memory budget, and what the budget reserves
// for each loaded plugin: the one place that says what an instance costs.
func InstanceBytes(memoryMB int) int64 { return int64(memoryMB) << 20 }

// Budget bounds the Wasm memory the plugins of a host hold ([server]
// max_memory_mb). Every instance counts at InstanceBytes of its plugin's
// memory cap (memory_mb), the most its memory may grow to, from the moment
// it is made until it is closed: what the host may be asked to hold, known
// before the instance runs, rather than what it has touched so far.
//
// Every loaded plugin has a reservation of one instance (Reserve). While
// the reservations of all plugins fit in the budget, a plugin takes a
// second or later instance only if the room reserved for every plugin
// holding none stays free: whatever the others do, a plugin can always
// make its first instance at once. When they do not fit (more plugins
// than the budget can hold an instance of each), a plugin's second or
// later instance leaves room for the largest reservation of a plugin
// holding none: no single plugin can starve another.
//
// When a new instance would pass the budget, idle instances of other
// plugins are closed first, the plugin holding most first, then the least
// recently used; only then does the call wait for memory to be freed
// (bounded by its context and by the plugin's timeout: the call's
// deadline), or fail with an error naming the budget, the plugin and what
// is held. Waiters are served in order of what their plugin holds, the
// least first, then first come first served; a newcomer never takes room
// before a waiter whose plugin holds no more than its own, and background
// work (replacements, min_instances) never takes room anyone waits for. A
// hyper-mcp plugin's instance keeps state between calls and is never
// evicted. The zero value is not usable; make one with NewBudget. Its
// methods are safe for concurrent use.
type Budget struct {
	limit int64 // bytes; 0: no limit, memory is only counted

	mu      sync.Mutex
	held    int64
	pools   map[*pool]int     // instances each pool holds
	shares  map[string]*share // by plugin name
	queue   []*waiter         // callers waiting for room, in arrival order
	seq     uint64            // arrivals, for first come first served
	waiting atomic.Int64      // len(queue), read without the lock by idled
	evicted atomic.Int64      // instances closed to make room
}

// share is what the plugins of one name (every generation of a plugin
// across reloads) hold and have reserved.
type share struct {
	held     int64                  // bytes their instances hold
	reserved map[*Reservation]int64 // one instance of each loaded plugin
}

// reservation is the bytes reserved for the name: the largest of its
// loaded plugins' instances.
func (s *share) reservation() int64 {
	var most int64
	for _, n := range s.reserved {
		most = max(most, n)
	}
	return most
}

// unused is the part of the reservation no instance of the name holds.
func (s *share) unused() int64 { return max(0, s.reservation()-s.held) }

// waiter is a caller waiting for room for an instance of p. ready is
// closed once it is granted room (granted) or handed an idle instance of
// its own pool (inst).
type waiter struct {
	p       *pool
	seq     uint64
	ready   chan struct{}
	granted bool
	inst    *instance
}

// NewBudget returns a budget of limitBytes; 0 counts memory without a
// limit.
func NewBudget(limitBytes int64) *Budget {
	return &Budget{limit: limitBytes, pools: map[*pool]int{}, shares: map[string]*share{}}
}

// ErrMemoryBudget is the cause of a call that found no room in the memory
// budget.
var ErrMemoryBudget = errors.New("memory budget exhausted")

// BudgetStats describes a Budget: the bytes held by instances now, the
// limit (0: none), the bytes reserved for loaded plugins (one instance
// each), the callers waiting for room, and the instances evicted to make
// room since the host started.
type BudgetStats struct {
	Held, Limit int64
	Reserved    int64
	Waiting     int
	Evicted     int64
}

// Stats reports the budget's BudgetStats.
func (b *Budget) Stats() BudgetStats {
	b.mu.Lock()
	defer b.mu.Unlock()
	var reserved int64
	for _, s := range b.shares {
		reserved += s.reservation()
	}
	return BudgetStats{Held: b.held, Limit: b.limit, Reserved: reserved, Waiting: len(b.queue), Evicted: b.evicted.Load()}
}

// Reservation is a loaded plugin's claim on one instance's worth of the
// budget; Release ends it.
type Reservation struct {
	b    *Budget
	name string
	once sync.Once
}

// Reserve reserves one instance of bytes for the plugin called name, until
// Release. Plugins of the same name (generations across a reload) share
// one reservation, the largest of theirs.
func (b *Budget) Reserve(name string, bytes int64) *Reservation {
	r := &Reservation{b: b, name: name}
	b.mu.Lock()
	s := b.shares[name]
	if s == nil {
		s = &share{reserved: map[*Reservation]int64{}}
		b.shares[name] = s
	}
	s.reserved[r] = bytes
	b.mu.Unlock()
	return r
}

// Release ends the reservation; waiters it kept out may now be served.
// Later calls do nothing.
func (r *Reservation) Release() {
	r.once.Do(func() {
		b := r.b
		b.mu.Lock()
		if s := b.shares[r.name]; s != nil {
			delete(s.reserved, r)
			b.dropShareLocked(r.name)
		}
		e := b.grantLocked()
		b.mu.Unlock()
		e.close()
	})
}

// dropShareLocked forgets a name that holds and reserves nothing.
func (b *Budget) dropShareLocked(name string) {
	if s := b.shares[name]; s != nil && s.held == 0 && len(s.reserved) == 0 {
		delete(b.shares, name)
	}
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

// heldByName returns the bytes the instances of plugins called name hold.
func (b *Budget) heldByName(name string) int64 {
	if s := b.shares[name]; s != nil {
		return s.held
	}
	return 0
}

// needLocked returns the bytes that must be freed before an instance of
// p may be made (<= 0: none). Besides the limit, an instance beyond the
// plugin's first leaves the room reserved for the plugins holding none:
// all of them while every plugin's reservation fits in the budget, else
// the largest.
func (b *Budget) needLocked(p *pool) int64 {
	if b.limit == 0 {
		return 0
	}
	need := b.held + p.cost - b.limit
	if b.heldByName(p.owner) == 0 {
		return need // the plugin's first instance: what it reserved
	}
	var reserved, others, largest int64
	for name, s := range b.shares {
		reserved += s.reservation()
		if name != p.owner {
			u := s.unused()
			others += u
			largest = max(largest, u)
		}
	}
	if reserved > b.limit {
		others = largest
	}
	return max(need, b.held+p.cost+others-b.limit)
}

// takeLocked counts one more instance of p.
func (b *Budget) takeLocked(p *pool) {
	b.held += p.cost
	b.pools[p]++
	s := b.shares[p.owner]
	if s == nil {
		s = &share{reserved: map[*Reservation]int64{}}
		b.shares[p.owner] = s
	}
	s.held += p.cost
}

// uncountLocked counts one instance of q fewer.
func (b *Budget) uncountLocked(q *pool) {
	b.held -= q.cost
	if _, ok := b.pools[q]; ok {
		b.pools[q]--
	}
	if s := b.shares[q.owner]; s != nil {
		s.held -= q.cost
		b.dropShareLocked(q.owner)
	}
}

// aheadLocked reports whether w is served before x: its plugin holds less,
// or as much and it came first.
func (b *Budget) aheadLocked(w, x *waiter) bool {
	hw, hx := b.heldByName(w.p.owner), b.heldByName(x.p.owner)
	return hw < hx || hw == hx && w.seq < x.seq
}

// acquire counts one more instance of p, or hands back an idle instance
// of p that went idle while the caller waited (nothing is counted then).
// With wait set it evicts idle instances of other plugins and waits for
// room, bounded by ctx and p's budgetWait; without, it takes only room
// that is free now and that no one waits for.
func (b *Budget) acquire(ctx context.Context, p *pool, wait bool) (*instance, error) {
	b.mu.Lock()
	if b.limit > 0 && p.cost > b.limit {
		b.mu.Unlock()
		return nil, fmt.Errorf("%w: one instance of plugin %q (memory_mb = %d) is more than max_memory_mb = %d",
			ErrMemoryBudget, p.owner, p.cost>>20, b.limit>>20)
	}
	if _, ok := b.pools[p]; !ok {
		b.mu.Unlock()
		return nil, errPoolClosed
	}
	b.seq++
	w := &waiter{p: p, seq: b.seq, ready: make(chan struct{})}
	first := !slices.ContainsFunc(b.queue, func(x *waiter) bool { return b.aheadLocked(x, w) })
	var e evictions
	if first && wait {
		if need := b.needLocked(p); need > 0 {
			e = b.evictLocked(p)
		}
	}
	if first && b.needLocked(p) <= 0 {
		b.takeLocked(p)
		b.mu.Unlock()
		e.close()
		return nil, nil
	}
	if !wait {
		err := b.noRoomLocked(p)
		b.mu.Unlock()
		e.close()
		return nil, err
	}
	b.queue = append(b.queue, w)
	b.waiting.Store(int64(len(b.queue)))
	// Counted as waiting before looking, so that an instance of p going
	// idle after this look serves it (idled skips the lock when none wait).
	if inst := p.takeIdle(); inst != nil {
		b.queue = slices.DeleteFunc(b.queue, func(x *waiter) bool { return x == w })
		b.waiting.Store(int64(len(b.queue)))
		b.mu.Unlock()
		e.close()
		return inst, nil
	}
	b.mu.Unlock()
	e.close()

	t := time.NewTimer(p.budgetWait)
	defer t.Stop()
	var why error
	select {
	case <-w.ready:
		return w.inst, nil
	case <-ctx.Done():
		why = ctx.Err()
	case <-t.C:
		why = fmt.Errorf("waited %s", p.budgetWait)
	case <-p.done:
		why = errPoolClosed
	}
	return nil, b.giveUp(w, why)
}

// giveUp takes w, whose caller stopped waiting because of why, out of the
// queue, undoing what it was given meanwhile, and returns the caller's
// error. The waiters behind it may now be served.
func (b *Budget) giveUp(w *waiter, why error) error {
	b.mu.Lock()
	if i := slices.Index(b.queue, w); i >= 0 {
		b.queue = slices.Delete(b.queue, i, i+1)
		b.waiting.Store(int64(len(b.queue)))
	} else if w.granted {
		b.uncountLocked(w.p)
	}
	var err error
	if errors.Is(why, errPoolClosed) {
		err = errPoolClosed
	} else {
		err = fmt.Errorf("%w (%w)", b.noRoomLocked(w.p), why)
	}
	e := b.grantLocked()
	b.mu.Unlock()
	e.close()
	if w.inst != nil {
		w.p.putBack(w.inst)
	}
	return err
}

// grantLocked serves the waiters it can, in order: the first is handed an
// idle instance of its own pool, or granted room (after evicting idle
// instances of other plugins if that makes it), or, when neither, keeps
// everyone behind it waiting for room. A waiter anywhere in the queue may
// still take an idle instance of its own pool, which costs no room. The
// caller closes what it returns once b.mu is released.
func (b *Budget) grantLocked() evictions {
	var e evictions
	for {
		// A waiter whose pool has closed is not served: it leaves on
		// its pool's done.
		i := -1
		for j, w := range b.queue {
			if _, open := b.pools[w.p]; open && (i < 0 || b.aheadLocked(w, b.queue[i])) {
				i = j
			}
		}
		if i < 0 {
			break
		}
		w := b.queue[i]
		if inst := w.p.takeIdle(); inst != nil {
			w.inst = inst
		} else {
			if b.needLocked(w.p) > 0 {
				e.add(b.evictLocked(w.p))
			}
			if b.needLocked(w.p) > 0 {
				break
			}
			b.takeLocked(w.p)
			w.granted = true
		}
		b.queue = slices.Delete(b.queue, i, i+1)
		close(w.ready)
	}
	b.queue = slices.DeleteFunc(b.queue, func(w *waiter) bool {
		inst := w.p.takeIdle()
		if inst == nil {
			return false
		}
		w.inst = inst
		close(w.ready)
		return true
	})
	b.waiting.Store(int64(len(b.queue)))
	return e
}

// evictions are idle instances the budget took to make room, and the
// pools it left with none; close runs their closing without the lock.
type evictions struct {
	victims []*instance
	emptied []*pool
}

func (e *evictions) add(o evictions) {
	e.victims = append(e.victims, o.victims...)
	e.emptied = append(e.emptied, o.emptied...)
}

// close closes the evicted instances and tells the emptied pools.
func (e evictions) close() {
	for _, inst := range e.victims {
		_ = inst.close(context.Background())
	}
	for _, q := range e.emptied {
		if q.emptied != nil {
			q.emptied()
		}
	}
}

// evictLocked takes idle instances off pools other than p until an
// instance of p may be made: from the plugin holding most first, then
// the least recently used; none when all of them would not make room. The
// caller holds b.mu and closes what it returns.
func (b *Budget) evictLocked(p *pool) evictions {
	type candidate struct {
		q    *pool
		idle int
		used time.Time
	}
	var cands []*candidate
	for q, n := range b.pools {
		if q == p || n == 0 || !q.evictable() {
			continue
		}
		if idle := q.idleCount(); idle > 0 {
			cands = append(cands, &candidate{q: q, idle: idle, used: q.lastUse()})
		}
	}
	// Plan on the counts, then undo: which instances, in which order,
	// make room, if any do.
	var plan []*pool
	for b.needLocked(p) > 0 {
		var next *candidate
		for _, c := range cands {
			if c.idle == 0 {
				continue
			}
			if next == nil || cmp.Or(cmp.Compare(b.heldByName(next.q.owner), b.heldByName(c.q.owner)), c.used.Compare(next.used)) < 0 {
				next = c
			}
		}
		if next == nil {
			break
		}
		next.idle--
		plan = append(plan, next.q)
		b.uncountLocked(next.q)
	}
	fits := b.needLocked(p) <= 0
	for _, q := range plan {
		b.takeLocked(q)
	}
	var e evictions
	if !fits {
		return e
	}
	for _, q := range plan {
		inst := q.takeIdle()
		if inst == nil { // taken by its own caller meanwhile
			continue
		}
		e.victims = append(e.victims, inst)
		b.uncountLocked(q)
		q.evictions.Add(1)
		b.evicted.Add(1)
		if b.pools[q] == 0 && !slices.Contains(e.emptied, q) {
			e.emptied = append(e.emptied, q)
		}
	}
	return e
}

// free uncounts one instance of p, which has been closed (or was never
// made), and serves the callers waiting for room.
func (b *Budget) free(p *pool) {
	b.mu.Lock()
	b.uncountLocked(p)
	e := b.grantLocked()
	b.mu.Unlock()
	e.close()
}

// idled serves the callers waiting for room: an instance went idle, and
// may be evicted for a waiter ahead, or taken by its own plugin's.
func (b *Budget) idled() {
	if b.waiting.Load() == 0 {
		return
	}
	b.mu.Lock()
	e := b.grantLocked()
	b.mu.Unlock()
	e.close()
}

// noRoomLocked describes why there is no room for an instance of p: the
// budget, what each plugin holds, and what is reserved for the plugins
// holding none.
func (b *Budget) noRoomLocked(p *pool) error {
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
	var unused int64
	for name, s := range b.shares {
		if name != p.owner {
			unused += s.unused()
		}
	}
	return fmt.Errorf("%w: no room for another instance of plugin %q (memory_mb = %d) in max_memory_mb = %d; held %d MiB: %s; reserved for other plugins' first instance: %d MiB",
		ErrMemoryBudget, p.owner, p.cost>>20, b.limit>>20, b.held>>20, strings.Join(parts, ", "), unused>>20)
}
