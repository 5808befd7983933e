//go:build !linux

package plugin

import "context"

// memories is empty where memories are wazero's own (Go slices): only
// Linux reserves them outside the Go heap.
type memories struct{}

// newMemories returns nil: wazero allocates the memories.
func newMemories() *memories { return nil }

// context returns ctx: wazero's own allocator.
func (m *memories) context(ctx context.Context) context.Context { return ctx }

// release does nothing; the garbage collector frees Go slices.
func (m *memories) release() error { return nil }

// fallback reports nothing: there is nothing to fall back from.
func (m *memories) fallback() error { return nil }
