package plugin

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"syscall"

	"github.com/tetratelabs/wazero/experimental"
)

// memories allocates the linear memories of one instance, as
// wazero's experimental.MemoryAllocator (newInstance passes it in the
// context of the instantiation). Each memory is an anonymous mmap
// reservation of its maximum (the cap, memory_mb): PROT_NONE and
// MAP_NORESERVE, so the reservation costs address space only; pages are
// made readable and writable as the memory grows, which is the only moment
// they count against the system's commit limit, and they cost RSS only once
// touched. release unmaps them all.
//
// When to unmap is the whole difficulty: a Go slice over unmapped memory
// that is then read crashes the host, and recover cannot catch it. So:
//
//   - wazero's own LinearMemory.Free, which it calls when it closes a
//     module, does nothing. wazero closes modules at moments when the
//     instance may still be in use: the Extism kernel's module when a call
//     into it sees the context has ended (WithCloseOnContextDone), the main
//     module on WASI proc_exit, every module of a runtime that Plugin.Close
//     closes while a call still runs on one (which goes on writing its
//     memory: TestClosingThePluginDuringACallKeepsItsMemory). Extism reads
//     and writes the kernel's memory without asking whether its module is
//     closed.
//   - Only release unmaps, and only instance.close and newInstance's
//     failure path call it: after Extism's Plugin.Close, on an instance the
//     caller holds whose call has returned and which nothing will call
//     again (the pool's put, its close, a refill it cannot use, inspect).
//     Calls into an instance run only while the pool lends it, host
//     functions run inside those calls and copy what they read, and the
//     output and error text Extism returns are copies.
//   - What stays behind are wazero's slice headers in the closed modules,
//     never read again and unreachable once Extism's Plugin is dropped. The
//     garbage collector ignores a pointer outside its heap, and on 64-bit
//     Linux the Go heap grows at its own hint addresses, away from where
//     mmap places these.
type memories struct {
	mu       sync.Mutex
	regions  []*region
	released bool
	err      error // why a reservation failed, if one did
}

// newMemories returns the allocator for one new instance.
func newMemories() *memories { return &memories{} }

// context returns ctx carrying m as wazero's memory allocator.
func (m *memories) context(ctx context.Context) context.Context {
	return experimental.WithMemoryAllocator(ctx, m)
}

// Allocate implements experimental.MemoryAllocator: a reservation of max
// bytes. When the system refuses it, the memory is a Go slice of capacity
// bytes, as wazero would allocate it (fallback says why).
func (m *memories) Allocate(capacity, max uint64) experimental.LinearMemory {
	r, err := reserve(max)
	m.mu.Lock()
	defer m.mu.Unlock()
	if err != nil || m.released {
		if err == nil {
			err = errors.New("instance already closed")
		}
		m.err = errors.Join(m.err, err)
		if r != nil {
			_ = r.unmap()
		}
		return &sliceMemory{buf: make([]byte, 0, capacity), max: max}
	}
	m.regions = append(m.regions, r)
	return r
}

// fallback returns why a memory of the instance is a Go slice rather than
// a reservation, or nil.
func (m *memories) fallback() error {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.err
}

// release unmaps every memory of the instance. See memories for when it may
// be called.
func (m *memories) release() error {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	regions := m.regions
	m.regions, m.released = nil, true
	m.mu.Unlock()
	var errs []error
	for _, r := range regions {
		errs = append(errs, r.unmap())
	}
	return errors.Join(errs...)
}

// reserved returns the bytes reserved and the bytes committed (readable and
// writable), for tests.
func (m *memories) reserved() (reserved, committed uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, r := range m.regions {
		r.mu.Lock()
		reserved += uint64(len(r.mem))
		committed += r.committed
		r.mu.Unlock()
	}
	return reserved, committed
}

// region is one linear memory: an mmap reservation, its first committed
// bytes readable and writable, the rest PROT_NONE.
type region struct {
	mu        sync.Mutex
	mem       []byte // the reservation as mmap returned it; nil once unmapped
	committed uint64
	sized     bool // Reallocate was called: the memory exists
}

// reserve maps max bytes of address space, inaccessible.
func reserve(max uint64) (*region, error) {
	if max == 0 {
		return &region{}, nil
	}
	if max > math.MaxInt {
		return nil, fmt.Errorf("reserve %d bytes: too large", max)
	}
	mem, err := syscall.Mmap(-1, 0, int(max), syscall.PROT_NONE, syscall.MAP_PRIVATE|syscall.MAP_ANONYMOUS|syscall.MAP_NORESERVE)
	if err != nil {
		return nil, fmt.Errorf("reserve %d bytes: mmap: %w", max, err)
	}
	return &region{mem: mem}, nil
}

// Reallocate implements experimental.LinearMemory: the memory's first size
// bytes, made accessible if they were not yet. The address never changes
// (so a shared memory may use it too); nil refuses growth past the
// reservation, after unmap, or when the system will not commit the pages.
func (r *region) Reallocate(size uint64) []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	if size > uint64(len(r.mem)) {
		return nil
	}
	if size == 0 && r.mem == nil {
		return []byte{}
	}
	first := !r.sized
	r.sized = true
	if size > r.committed {
		// Wasm sizes are whole 64 KiB pages, so r.committed is aligned on
		// the system's pages.
		if err := syscall.Mprotect(r.mem[r.committed:size], syscall.PROT_READ|syscall.PROT_WRITE); err != nil {
			if first {
				panic(&errCommit{fmt.Errorf("commit %d bytes of linear memory: mprotect: %w", size, err)})
			}
			return nil
		}
		r.committed = size
	}
	return r.mem[:size:size]
}

// Free implements experimental.LinearMemory and does nothing: wazero calls
// it when it closes a module, which may be while the instance is still in
// use (see memories); release unmaps.
func (r *region) Free() {}

// unmap returns the reservation to the system.
func (r *region) unmap() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.mem == nil {
		return nil
	}
	err := syscall.Munmap(r.mem)
	r.mem, r.committed = nil, 0
	if err != nil {
		return fmt.Errorf("munmap: %w", err)
	}
	return nil
}

// sliceMemory is a linear memory in a Go slice, as wazero makes them: the
// fallback when a reservation fails.
type sliceMemory struct {
	buf []byte
	max uint64
}

// Reallocate implements experimental.LinearMemory.
func (s *sliceMemory) Reallocate(size uint64) []byte {
	if size > s.max {
		return nil
	}
	if size > uint64(cap(s.buf)) {
		grown := make([]byte, size, min(s.max, max(size, 2*uint64(cap(s.buf)))))
		copy(grown, s.buf)
		s.buf = grown
	}
	s.buf = s.buf[:size]
	return s.buf
}

// Free implements experimental.LinearMemory; the garbage collector frees
// the slice.
func (s *sliceMemory) Free() {}
