// Package wasmgen builds WebAssembly modules of chosen shapes in memory:
// the hostile modules the host's tests load (a function with 2^32-1
// locals, 100,000 nested blocks, a million types, ...), which no
// assembler writes and which are too large to commit. Every module it
// builds is a valid mcphost plugin as far as its imports go: it imports
// nothing and exports its functions by the names given.
package wasmgen

import "github.com/mcphost/mcphost/host/internal/wasmbin"

// Func is one function of a module: its type index, its locals
// (declared as LocalGroups groups of Locals/LocalGroups i32 each, so a
// huge count fits in a few bytes) and its body without the final end.
type Func struct {
	Type   uint32
	Locals uint32
	// LocalGroups splits Locals into this many declarations (at least 1
	// when Locals > 0).
	LocalGroups uint32
	Body        []byte
	// Export, when set, exports the function under this name.
	Export string
}

// Module is a module to build.
type Module struct {
	// Types is the number of function types: type 0 is () -> (), type 1
	// () -> i32, and the rest repeat () -> ().
	Types uint32
	Funcs []Func
	// MemoryPages, when above 0, defines a memory of that many pages
	// (and as many at most) exported as "memory".
	MemoryPages uint32
	// Elements, when above 0, defines a table and an active element
	// segment of that many references to function 0.
	Elements uint32
}

// Bytes encodes m.
func (m Module) Bytes() []byte {
	out := append([]byte(nil), wasmbin.Header...)
	types := max(m.Types, 2)
	var body []byte
	body = wasmbin.AppendU32(body, types)
	body = append(body, 0x60, 0x00, 0x00)       // () -> ()
	body = append(body, 0x60, 0x00, 0x01, 0x7f) // () -> i32
	for range types - 2 {
		body = append(body, 0x60, 0x00, 0x00)
	}
	out = wasmbin.AppendSection(out, 1, body)

	body = wasmbin.AppendU32(nil, uint32(len(m.Funcs)))
	for _, f := range m.Funcs {
		body = wasmbin.AppendU32(body, f.Type)
	}
	out = wasmbin.AppendSection(out, 3, body)

	if m.Elements > 0 {
		body = []byte{1, 0x70, 0x00} // one funcref table, no maximum
		body = wasmbin.AppendU32(body, m.Elements)
		out = wasmbin.AppendSection(out, 4, body)
	}

	if m.MemoryPages > 0 {
		body = []byte{1, 1}
		body = wasmbin.AppendU32(body, m.MemoryPages)
		body = wasmbin.AppendU32(body, m.MemoryPages)
		out = wasmbin.AppendSection(out, 5, body)
	}

	var exports []byte
	n := uint32(0)
	if m.MemoryPages > 0 {
		exports = wasmbin.AppendName(exports, "memory")
		exports = append(exports, 0x02, 0x00)
		n++
	}
	for i, f := range m.Funcs {
		if f.Export != "" {
			exports = wasmbin.AppendName(exports, f.Export)
			exports = append(exports, 0x00)
			exports = wasmbin.AppendU32(exports, uint32(i))
			n++
		}
	}
	out = wasmbin.AppendSection(out, 7, append(wasmbin.AppendU32(nil, n), exports...))

	if m.Elements > 0 {
		body = []byte{1, 0x00, 0x41, 0x00, 0x0b} // one active segment at offset 0
		body = wasmbin.AppendU32(body, m.Elements)
		for range m.Elements {
			body = append(body, 0x00)
		}
		out = wasmbin.AppendSection(out, 9, body)
	}

	body = wasmbin.AppendU32(nil, uint32(len(m.Funcs)))
	for _, f := range m.Funcs {
		var fn []byte
		groups := f.LocalGroups
		if f.Locals > 0 {
			groups = max(groups, 1)
		} else {
			groups = 0
		}
		fn = wasmbin.AppendU32(fn, groups)
		left := f.Locals
		for g := range groups {
			count := f.Locals / groups
			if g == groups-1 {
				count = left
			}
			left -= count
			fn = wasmbin.AppendU32(fn, count)
			fn = append(fn, 0x7f)
		}
		fn = append(fn, f.Body...)
		fn = append(fn, 0x0b)
		body = wasmbin.AppendU32(body, uint32(len(fn)))
		body = append(body, fn...)
	}
	return wasmbin.AppendSection(out, 10, body)
}

// Nested is a body of depth blocks, each inside the last.
func Nested(depth int) []byte {
	b := make([]byte, 0, 3*depth)
	for range depth {
		b = append(b, 0x02, 0x40)
	}
	for range depth {
		b = append(b, 0x0b)
	}
	return b
}

// BranchesThenReads is a body of branches br_if instructions in one block,
// after which it reads each of locals locals: the shape that makes a
// compiler resolve every local through every branch.
func BranchesThenReads(branches, locals int) []byte {
	b := []byte{0x02, 0x40}
	for range branches {
		b = append(b, 0x41, 0x00, 0x0d, 0x00) // i32.const 0, br_if 0
	}
	b = append(b, 0x0b)
	for i := range locals {
		b = append(b, 0x20)
		b = wasmbin.AppendU32(b, uint32(i))
		b = append(b, 0x1a) // drop
	}
	return b
}
