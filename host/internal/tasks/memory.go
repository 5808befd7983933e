package tasks

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"
)

// Memory is a Store inside one process: the default, for a host that runs
// alone. Tasks are kept encoded, as a shared store keeps them, so that what
// a caller holds is never the store's own copy.
type Memory struct {
	max       int // most tasks held, expired ones swept first; 0: no limit
	mu        sync.Mutex
	tasks     map[string][]byte
	expires   map[string]time.Time
	lastSweep time.Time
	subs      map[chan string]struct{}
	now       func() time.Time
}

// NewMemory returns an empty Memory store holding at most max tasks (0:
// no limit): a task ends when its TTL does, so without a limit a client
// that starts tasks faster than they expire would grow it without end.
func NewMemory(max int) *Memory {
	return &Memory{max: max, tasks: map[string][]byte{}, expires: map[string]time.Time{}, subs: map[chan string]struct{}{}, now: time.Now}
}

// sweepEvery bounds how often Create looks for expired tasks to drop.
const sweepEvery = time.Second

// Create implements Store.
func (m *Memory) Create(_ context.Context, t *Task) error {
	b, err := json.Marshal(t)
	if err != nil {
		return fmt.Errorf("encode task %s: %w", t.ID, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	full := m.max > 0 && len(m.tasks) >= m.max
	if now.Sub(m.lastSweep) >= sweepEvery || full {
		m.lastSweep = now
		m.sweep(now)
	}
	if _, ok := m.live(t.ID, now); ok {
		return ErrExists
	}
	if m.max > 0 && len(m.tasks) >= m.max {
		return fmt.Errorf("%w: it holds %d tasks, its limit", ErrFull, m.max)
	}
	m.tasks[t.ID] = b
	m.expires[t.ID] = t.Expires
	return nil
}

// sweep drops the expired tasks; m.mu is held.
func (m *Memory) sweep(now time.Time) {
	for id, exp := range m.expires {
		if !now.Before(exp) {
			delete(m.tasks, id)
			delete(m.expires, id)
		}
	}
}

// live returns the encoded task id if it has not expired (dropping it if
// it has); m.mu is held.
func (m *Memory) live(id string, now time.Time) ([]byte, bool) {
	b, ok := m.tasks[id]
	if !ok {
		return nil, false
	}
	if !now.Before(m.expires[id]) {
		delete(m.tasks, id)
		delete(m.expires, id)
		return nil, false
	}
	return b, true
}

// Get implements Store.
func (m *Memory) Get(_ context.Context, id string) (*Task, error) {
	m.mu.Lock()
	b, ok := m.live(id, m.now())
	m.mu.Unlock()
	if !ok {
		return nil, ErrNotFound
	}
	return decode(id, b)
}

// Update implements Store.
func (m *Memory) Update(_ context.Context, id string, change func(*Task) error) (*Task, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.live(id, m.now())
	if !ok {
		return nil, ErrNotFound
	}
	t, err := decode(id, b)
	if err != nil {
		return nil, err
	}
	if err := change(t); err != nil {
		return nil, err
	}
	nb, err := json.Marshal(t)
	if err != nil {
		return nil, fmt.Errorf("encode task %s: %w", id, err)
	}
	m.tasks[id] = nb
	return t, nil
}

// Publish implements Store.
func (m *Memory) Publish(_ context.Context, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for ch := range m.subs {
		select {
		case ch <- id:
		default: // a slow subscriber loses it (Store.Subscribe)
		}
	}
	return nil
}

// Subscribe implements Store.
func (m *Memory) Subscribe(ctx context.Context) (<-chan string, error) {
	ch := make(chan string, 256)
	m.mu.Lock()
	m.subs[ch] = struct{}{}
	m.mu.Unlock()
	out := make(chan string)
	go func() { // owned by ctx: ends with it
		defer close(out)
		defer func() {
			m.mu.Lock()
			delete(m.subs, ch)
			m.mu.Unlock()
		}()
		for {
			select {
			case <-ctx.Done():
				return
			case id := <-ch:
				select {
				case out <- id:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	return out, nil
}

// Close implements Store.
func (m *Memory) Close() error { return nil }

// Len returns the number of tasks held, expired ones included until they
// are swept.
func (m *Memory) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.tasks)
}

func decode(id string, b []byte) (*Task, error) {
	var t Task
	if err := json.Unmarshal(b, &t); err != nil {
		return nil, fmt.Errorf("decode task %s: %w", id, err)
	}
	return &t, nil
}
