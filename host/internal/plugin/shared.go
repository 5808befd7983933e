package plugin

import (
	"container/list"
	"context"
	"crypto/sha256"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/go-hclog"
	"github.com/tetratelabs/wazero"
)

// Compile once: plugins whose modules are the same bytes (after the
// interrupt rewrite) share one wazero compilation cache, and so one engine
// and one copy of the machine code, while each keeps its own runtime: its
// own host functions (grants, egress policy, notifier), config, memory cap
// and instances. wazero keys compiled code by the module's bytes and its
// termination checks, never by host functions or memory limits, which are
// bound at instantiation; the on-disk cache already relies on the same key.
// See RATIONALE.md, "One compiled module per digest".

// CodeCache shares compiled code between the plugins of one host. The code
// of a digest lives while any plugin holding it is active or keeps it
// (kept.go): the last one to release it closes the shared cache, and the
// code goes with it. The zero value is not usable; make one with
// NewCodeCache. Its methods are safe for concurrent use.
type CodeCache struct {
	mu      sync.Mutex
	entries map[codeKey]*sharedCode
	loads   atomic.Int64

	// The compiled modules released plugins keep (kept.go), least
	// recently kept first, and their estimated bytes; guarded by mu.
	keepLimit int64
	kept      list.List // of *keptCode
	keptBytes int64
	dropped   atomic.Int64 // kept modules freed to stay within keepLimit

	// slots bounds the compiles done in the background (slots.go).
	slots *compileSlots
}

// NewCodeCache returns an empty CodeCache whose released plugins keep
// their compiled modules, up to keepBytes of them together as keptCost
// estimates them ([server] max_idle_code_mb); 0 keeps none.
func NewCodeCache(keepBytes int64) *CodeCache {
	return &CodeCache{entries: map[codeKey]*sharedCode{}, keepLimit: keepBytes, slots: newCompileSlots(BackgroundCompiles)}
}

// codeKey names compiled code: the module as compiled, how its calls are
// interrupted (wazero's termination checks change the code), and the
// on-disk cache it is read from and written to.
type codeKey struct {
	digest     [sha256.Size]byte
	interrupts interrupts
	cacheDir   string
}

// sharedCode is one digest's compilation cache and its users.
type sharedCode struct {
	key   codeKey
	cache wazero.CompilationCache
	users int // activations holding it, active or kept; guarded by CodeCache.mu
	// compileMu serializes compiling over the cache. wazero publishes a
	// module read from the on-disk cache to its in-memory map before it
	// has finished preparing it (engine_cache.go, getCompiledModule), and
	// does not lock against two runtimes compiling the same module at
	// once: only one runtime compiles over a shared cache at a time.
	compileMu sync.Mutex
	loaded    bool // the code is in memory; guarded by compileMu
}

// CodeStats describes a CodeCache: the compiled modules it holds now (one
// per distinct digest in use), the activations holding them (active or
// kept), and how many times code was compiled or read from disk into
// memory since the host started (an activation that finds its digest's
// code in memory, or its own kept module, does not count). Kept is the
// released plugins keeping their compiled module, KeptBytes what keptCost
// estimates they hold, KeepLimit the bound on it, and Dropped the kept
// modules freed to stay within it.
type CodeStats struct {
	Modules   int
	Users     int
	Loads     int64
	Kept      int
	KeptBytes int64
	KeepLimit int64
	Dropped   int64
}

// Stats reports the cache's CodeStats.
func (c *CodeCache) Stats() CodeStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := CodeStats{Modules: len(c.entries), Loads: c.loads.Load(),
		Kept: c.kept.Len(), KeptBytes: c.keptBytes, KeepLimit: c.keepLimit, Dropped: c.dropped.Load()}
	for _, e := range c.entries {
		s.Users += e.users
	}
	return s
}

// acquire returns the shared code of key, opening its cache for the first
// user. A cache directory that cannot be used is logged, and the code is
// compiled in memory.
func (c *CodeCache) acquire(key codeKey, logger hclog.Logger) *sharedCode {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries[key]; ok {
		e.users++
		return e
	}
	cache, err := openCache(key.cacheDir, string(key.interrupts))
	if err != nil {
		logger.Warn("compilation cache unusable; compiling in memory", "dir", key.cacheDir, "error", err)
		cache = wazero.NewCompilationCache()
	}
	e := &sharedCode{key: key, cache: cache, users: 1}
	c.entries[key] = e
	return e
}

// release ends one user's hold on e; the last closes its cache, which drops
// the engine and, once the runtimes compiled over it are closed, the
// machine code.
func (c *CodeCache) release(ctx context.Context, e *sharedCode) error {
	c.mu.Lock()
	e.users--
	last := e.users == 0
	if last {
		delete(c.entries, e.key)
	}
	c.mu.Unlock()
	if !last {
		return nil
	}
	return e.cache.Close(ctx)
}

// compiled records that e's code is in memory after a compile over it, and
// counts it as a load the first time.
func (c *CodeCache) compiled(e *sharedCode) {
	if !e.loaded {
		e.loaded = true
		c.loads.Add(1)
	}
}
