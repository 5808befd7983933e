package plugin

import (
	"container/list"
	"context"
)

// Two tiers of release. An idle timeout (or Idle, or the memory budget
// taking a plugin's last instance) closes the plugin's instances, the
// Wasm memory that is most of what an active plugin costs, but the plugin
// keeps its compiled module (the Extism compiled plugin: a wazero runtime
// and its CompiledModule over the shared machine code), so that its next
// call only instantiates: wazero's CompileModule decodes and validates the
// whole module again even when its machine code is cached (BENCHMARKS.md,
// issue 27). The modules kept by released plugins are bounded together by
// the CodeCache's keep limit ([server] max_idle_code_mb); beyond it the
// least recently kept is freed, and that plugin compiles again at its next
// activation, as before. See RATIONALE.md, "Released plugins keep their
// compiled module".

// keptCode is the compiled module of a released plugin, kept for its next
// activation. Exactly one of the plugin (taking it back, or closing) or
// the CodeCache (dropping it beyond the bound) ends its keeping: whoever
// moves it out of keptPending or keptListed, under CodeCache.mu.
type keptCode struct {
	a      *activation // its pool closed; compiled and code held
	state  keptState   // guarded by CodeCache.mu
	elem   *list.Element
	done   chan struct{} // closed once a dropped module is freed
	onFree func()        // called (without locks) after a dropped module is freed
}

type keptState int

const (
	keptPending keptState = iota // made, not listed in the cache yet
	keptListed                   // in the cache's list, counted
	keptTaken                    // taken back by its plugin (activation or Close)
	keptDropped                  // freed by the cache to stay within its bound
)

// keptCost is what a kept compiled module is counted at against the keep
// limit, for a module of wasmBytes (after the rewrite): its machine code,
// measured at ~4 times the module for Go and Rust plugins and ~0.5 MiB
// for Extism's kernel beside it, plus the decoded module and the bytes
// Extism keeps on the Go heap (~1.3 times the module for a Go plugin).
// An estimate, since wazero does not say what its code takes; kept
// modules of one digest share their machine code, and each is counted
// whole (the bound errs on the side of less memory).
func keptCost(wasmBytes int) int64 { return 6*int64(wasmBytes) + 1<<20 }

// keep lists k as kept, unless its plugin took it back already, and frees
// the least recently kept modules while the kept ones together pass the
// limit (k itself, when it alone passes it).
func (c *CodeCache) keep(k *keptCode) {
	c.mu.Lock()
	if k.state != keptPending {
		c.mu.Unlock()
		return
	}
	k.state = keptListed
	k.elem = c.kept.PushBack(k)
	c.keptBytes += k.a.cost
	var drop []*keptCode
	for c.keptBytes > c.keepLimit && c.kept.Len() > 0 {
		d := c.kept.Remove(c.kept.Front()).(*keptCode)
		c.keptBytes -= d.a.cost
		d.state, d.elem = keptDropped, nil
		drop = append(drop, d)
	}
	c.mu.Unlock()
	for _, d := range drop {
		c.dropped.Add(1)
		d.a.free(context.Background())
		close(d.done)
		if d.onFree != nil {
			d.onFree()
		}
	}
}

// take ends k's keeping for its plugin, and reports whether the plugin
// has its module back; false: the cache dropped it (see k.done).
func (c *CodeCache) take(k *keptCode) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch k.state {
	case keptPending:
	case keptListed:
		c.kept.Remove(k.elem)
		c.keptBytes -= k.a.cost
		k.elem = nil
	default:
		return false
	}
	k.state = keptTaken
	return true
}

// keeps reports whether released plugins may keep their compiled module.
func (c *CodeCache) keeps() bool { return c.keepLimit > 0 }
