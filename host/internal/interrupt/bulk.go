package interrupt

import (
	"fmt"

	"github.com/mcphost/mcphost/host/internal/wasmbin"
)

// Bulk memory and table operations (memory.fill, memory.copy, table.fill,
// table.copy) can each move gigabytes in one instruction, which compiled
// code runs without ever returning to Go: one memory.fill over a 2 GiB
// memory ran for seconds past the deadline, and the garbage collector's
// stop-the-world waited for it, freezing the whole host. So the rewrite
// replaces each such instruction by a call of a helper function it adds,
// which checks the bounds first, exactly as the instruction would (an
// operation that is out of bounds is then run as it is, and traps as it
// would have, before writing anything), and then does the work in chunks
// of at most memChunk bytes or tableChunk elements, each taking from the
// budget in proportion to its size, so that the host's check runs every
// few MiB and the call ends at its deadline. A copy whose destination is
// above its source goes backwards, so that overlapping ranges are copied
// as the instruction copies them.
//
// memory.init and table.init copy from a segment of the module, so their
// length is bounded by the module's size: they are left whole, after a
// call of a helper that takes their length's share from the budget.

const (
	// memChunk is the most bytes one chunk of a memory operation moves.
	memChunk = 64 << 10
	// memUnitShift: a memory operation takes one unit of budget, plus one
	// for every 2^memUnitShift bytes it moves (4 KiB): at most ~4 MiB go
	// between two checks of the host.
	memUnitShift = 12
	// tableChunk is the most elements one chunk of a table operation moves.
	tableChunk = 1024
	// tableUnitShift: a table operation takes one unit, plus one for every
	// 2^tableUnitShift elements (64): wazero moves elements one by one.
	tableUnitShift = 6
)

// Opcodes the helpers use.
const (
	opBlockEnd   = 0x0b
	opIfEmpty    = 0x04 // followed by the empty block type, 0x40
	opLoopEmpty  = 0x03
	opElse       = 0x05
	opBrIf       = 0x0d
	opReturn     = 0x0f
	opSelect     = 0x1b
	opLocalGet   = 0x20
	opLocalSet   = 0x21
	opLocalTee   = 0x22
	opGlobalGet  = 0x23
	opGlobalSet  = 0x24
	opI32Const   = 0x41
	opI64Const   = 0x42
	opI32LtU     = 0x49
	opI32LeS     = 0x4c
	opI32LeU     = 0x4d
	opI64GtU     = 0x56
	opI32Add     = 0x6a
	opI32Sub     = 0x6b
	opI32ShrU    = 0x76
	opI64Add     = 0x7c
	opI64Shl     = 0x86
	opI64ExtendU = 0xad
	opMisc       = 0xfc
	emptyBlock   = 0x40
)

// Sub-opcodes of 0xfc.
const (
	subMemoryInit = 8
	subMemoryCopy = 10
	subMemoryFill = 11
	subTableInit  = 12
	subTableCopy  = 14
	subTableGrow  = 15
	subTableSize  = 16
	subTableFill  = 17
)

// appendBulk appends what replaces the bulk operation instr (sub-opcode
// sub, immediates a and b as misc read them): a call of its helper, or,
// for memory.init and table.init, a call that charges for the length
// followed by instr itself. An operation naming a table the module does
// not define is copied as it is: the module is invalid, and wazero
// refuses it.
func (m *module) appendBulk(out, instr []byte, sub, a, b uint32) []byte {
	var f uint32
	switch sub {
	case subMemoryFill:
		f = m.helper("memory.fill", m.memoryFill)
	case subMemoryCopy:
		f = m.helper("memory.copy", m.memoryCopy)
	case subMemoryInit:
		f = m.helper("charge memory", func() ([]byte, []byte) { return m.charge(memUnitShift) })
	case subTableInit:
		f = m.helper("charge table", func() ([]byte, []byte) { return m.charge(tableUnitShift) })
	case subTableFill:
		if a >= uint32(len(m.tableTypes)) {
			return append(out, instr...)
		}
		f = m.helper(fmt.Sprintf("table.fill %d", a), func() ([]byte, []byte) { return m.tableFill(a) })
	case subTableCopy:
		if a >= uint32(len(m.tableTypes)) || b >= uint32(len(m.tableTypes)) {
			return append(out, instr...)
		}
		f = m.helper(fmt.Sprintf("table.copy %d %d", a, b), func() ([]byte, []byte) { return m.tableCopy(a, b) })
	default:
		return append(out, instr...)
	}
	out = append(out, 0x10) // call
	out = wasmbin.AppendU32(out, f)
	if sub == subMemoryInit || sub == subTableInit {
		out = append(out, instr...)
	}
	return out
}

// charge is a helper (param $n i32) (result i32) that takes 1 +
// $n>>shift from the budget and returns $n, for memory.init and
// table.init, whose length is on top of the stack.
func (m *module) charge(shift byte) (typ, body []byte) {
	body = []byte{0x00} // no locals
	body = m.appendCharge(body, 0, shift)
	body = append(body, opLocalGet, 0, opBlockEnd)
	return funcType([]byte{typeI32}, []byte{typeI32}), body
}

// appendCharge appends code that takes 1 + (local c)>>shift from the
// budget and calls the host when it is spent, as appendCheck does.
func (m *module) appendCharge(out []byte, c, shift byte) []byte {
	g := m.counter()
	out = append(out, opGlobalGet)
	out = wasmbin.AppendU32(out, g)
	out = append(out, opI32Const, 1, opLocalGet, c, opI32Const, shift, opI32ShrU, opI32Add, opI32Sub, opGlobalSet)
	out = wasmbin.AppendU32(out, g)
	out = append(out, opGlobalGet)
	out = wasmbin.AppendU32(out, g)
	out = append(out, opI32Const, 0, opI32LeS, opIfEmpty, emptyBlock)
	out = m.appendRefill(out)
	return append(out, opBlockEnd)
}

// appendChunk appends: c = min(n, chunk), then the charge for c.
func (m *module) appendChunk(out []byte, n, c byte, chunk int32, shift byte) []byte {
	out = append(out, opLocalGet, n, opI32Const)
	out = appendS32(out, chunk)
	out = append(out, opLocalGet, n, opI32Const)
	out = appendS32(out, chunk)
	out = append(out, opI32LtU, opSelect, opLocalSet, c)
	return m.appendCharge(out, c, shift)
}

// appendOutOfBounds appends: if (u64)local x + (u64)local n > size, run
// op on the helper's parameters -- which traps, as the original
// instruction, since it is out of bounds -- and return. size is code
// that pushes the size of the memory in bytes or of the table in
// elements, as an i64.
func appendOutOfBounds(out []byte, x, n byte, size []byte, op []byte, params byte) []byte {
	out = append(out, opLocalGet, x, opI64ExtendU, opLocalGet, n, opI64ExtendU, opI64Add)
	out = append(out, size...)
	out = append(out, opI64GtU, opIfEmpty, emptyBlock)
	for i := range params {
		out = append(out, opLocalGet, i)
	}
	out = append(out, op...)
	return append(out, opReturn, opBlockEnd)
}

// memorySize pushes the size of memory 0 in bytes, as an i64.
var memorySize = []byte{0x3f, 0x00, opI64ExtendU, opI64Const, 16, opI64Shl}

// tableSize pushes the size of table t in elements, as an i64.
func tableSize(t uint32) []byte {
	return append(wasmbin.AppendU32([]byte{opMisc, subTableSize}, t), opI64ExtendU)
}

// memoryFill is the helper (param $d i32) (param $v i32) (param $n i32)
// for memory.fill, with local $c for the chunk.
func (m *module) memoryFill() (typ, body []byte) {
	op := []byte{opMisc, subMemoryFill, 0x00}
	return funcType([]byte{typeI32, typeI32, typeI32}, nil),
		m.fill(op, memorySize, memChunk, memUnitShift)
}

// tableFill is the helper (param $i i32) (param $ref reftype) (param $n
// i32) for table.fill t.
func (m *module) tableFill(t uint32) (typ, body []byte) {
	op := wasmbin.AppendU32([]byte{opMisc, subTableFill}, t)
	return funcType([]byte{typeI32, m.tableTypes[t], typeI32}, nil),
		m.fill(op, tableSize(t), tableChunk, tableUnitShift)
}

// fill is the body of a fill helper over params 0 (start), 1 (value), 2
// (length), and local 3 (the chunk):
//
//	bounds check
//	loop
//	  c = min(n, chunk); charge c
//	  op(d, v, c); d += c; n -= c
//	  br_if 0 (n)
//	end
func (m *module) fill(op, size []byte, chunk int32, shift byte) []byte {
	const d, v, n, c = 0, 1, 2, 3
	body := []byte{0x01, 0x01, typeI32} // one i32 local: c
	body = appendOutOfBounds(body, d, n, size, op, 3)
	body = append(body, opLoopEmpty, emptyBlock)
	body = m.appendChunk(body, n, c, chunk, shift)
	body = append(body, opLocalGet, d, opLocalGet, v, opLocalGet, c)
	body = append(body, op...)
	body = append(body, opLocalGet, d, opLocalGet, c, opI32Add, opLocalSet, d)
	body = append(body, opLocalGet, n, opLocalGet, c, opI32Sub, opLocalTee, n, opBrIf, 0)
	return append(body, opBlockEnd, opBlockEnd)
}

// memoryCopy is the helper (param $d i32) (param $s i32) (param $n i32)
// for memory.copy.
func (m *module) memoryCopy() (typ, body []byte) {
	op := []byte{opMisc, subMemoryCopy, 0x00, 0x00}
	return funcType([]byte{typeI32, typeI32, typeI32}, nil),
		m.copyChunks(op, memorySize, memorySize, memChunk, memUnitShift)
}

// tableCopy is the helper (param $d i32) (param $s i32) (param $n i32)
// for table.copy dst src.
func (m *module) tableCopy(dst, src uint32) (typ, body []byte) {
	op := wasmbin.AppendU32(wasmbin.AppendU32([]byte{opMisc, subTableCopy}, dst), src)
	return funcType([]byte{typeI32, typeI32, typeI32}, nil),
		m.copyChunks(op, tableSize(dst), tableSize(src), tableChunk, tableUnitShift)
}

// copyChunks is the body of a copy helper over params 0 (destination), 1
// (source), 2 (length), and local 3 (the chunk):
//
//	bounds checks of the destination, then the source
//	if d <= s (unsigned)
//	  loop: c = min(n, chunk); charge c; op(d, s, c); d += c; s += c; n -= c; br_if 0 (n)
//	else
//	  loop: c = min(n, chunk); charge c; n -= c; op(d+n, s+n, c); br_if 0 (n)
//	end
//
// Forwards, a chunk's destination ends at or below the start of the
// source not yet copied; backwards, it starts at or above the end of it:
// every byte is copied before it is overwritten, as the instruction does.
func (m *module) copyChunks(op, dstSize, srcSize []byte, chunk int32, shift byte) []byte {
	const d, s, n, c = 0, 1, 2, 3
	body := []byte{0x01, 0x01, typeI32}
	// The instruction checks both ranges before it copies anything, and
	// traps the same way whichever is out.
	body = appendOutOfBounds(body, d, n, dstSize, op, 3)
	body = appendOutOfBounds(body, s, n, srcSize, op, 3)
	body = append(body, opLocalGet, d, opLocalGet, s, opI32LeU, opIfEmpty, emptyBlock)
	// Forwards.
	body = append(body, opLoopEmpty, emptyBlock)
	body = m.appendChunk(body, n, c, chunk, shift)
	body = append(body, opLocalGet, d, opLocalGet, s, opLocalGet, c)
	body = append(body, op...)
	body = append(body, opLocalGet, d, opLocalGet, c, opI32Add, opLocalSet, d)
	body = append(body, opLocalGet, s, opLocalGet, c, opI32Add, opLocalSet, s)
	body = append(body, opLocalGet, n, opLocalGet, c, opI32Sub, opLocalTee, n, opBrIf, 0)
	body = append(body, opBlockEnd, opElse)
	// Backwards.
	body = append(body, opLoopEmpty, emptyBlock)
	body = m.appendChunk(body, n, c, chunk, shift)
	body = append(body, opLocalGet, n, opLocalGet, c, opI32Sub, opLocalSet, n)
	body = append(body, opLocalGet, d, opLocalGet, n, opI32Add)
	body = append(body, opLocalGet, s, opLocalGet, n, opI32Add)
	body = append(body, opLocalGet, c)
	body = append(body, op...)
	body = append(body, opLocalGet, n, opBrIf, 0)
	body = append(body, opBlockEnd)
	return append(body, opBlockEnd, opBlockEnd) // if, function
}
