package interrupt

import (
	"errors"
	"fmt"

	"github.com/mcphost/mcphost/host/internal/wasmbin"
)

// rewriteExpr copies one expression (a function body or a constant
// expression) from r to out, up to and including its final end, moving
// function indices and, when checks is set, adding a budget check at the
// head of every loop, and replacing every bulk memory or table operation by
// a call of a helper that does it in chunks (bulk.go).
// Unchanged instructions are copied in runs, from flushed up to where
// something changes. Problems are left in r.Err.
//
// The decoding is wazero's, for the features the host enables
// (api.CoreFeaturesV2, see Features): every instruction is read the way
// wazero's validator (internal/wasm/func_validation.go) and compiler read
// it, so that the rewrite sees the same instruction boundaries wazero
// executes. Where the two could read the same bytes differently (an
// encoding the standard reads one way and wazero another), and for every
// instruction outside those features, the module is refused with
// ErrUnsupported. A rewrite that saw other boundaries than wazero could
// miss a loop, or a global.set of the budget, hidden in an immediate.
func (m *module) rewriteExpr(r *reader, out []byte, checks bool) []byte {
	depth := 0
	flushed := r.Pos
	var run runs
	for r.Err == nil {
		if r.Done() {
			r.Err = errors.New("expression without an end")
			break
		}
		start := r.Pos
		if checks && run.cur >= straightRun {
			out = append(out, r.B[flushed:start]...)
			flushed = start
			out = m.appendTick(out)
			run.cur = 0
		}
		run.cur++
		op := r.Byte()
		switch {
		case op == 0x02 || op == 0x04: // block, if
			r.blockType()
			depth++
			m.shape.open(r, depth)
			run.open(op == 0x04)
		case op == 0x03: // loop: the check runs on every iteration
			r.blockType()
			depth++
			m.shape.open(r, depth)
			run.openLoop()
			if checks && r.Err == nil {
				out = append(out, r.B[flushed:r.Pos]...)
				flushed = r.Pos
				out = m.appendTick(out)
			}
		case op == 0x05: // else
			m.shape.branches++
			run.elseBranch()
		case op == 0x0b: // end
			if depth == 0 {
				return append(out, r.B[flushed:r.Pos]...)
			}
			depth--
			run.end()
		case op == 0x00 || op == 0x0f: // unreachable, return
			if op == 0x0f && checks && m.stackOn() {
				// A branch to the block the stack accounting wraps the
				// body in, which leaves through its decrement.
				out = append(out, r.B[flushed:start]...)
				out = append(out, 0x0c)
				out = wasmbin.AppendU32(out, uint32(depth))
				flushed = r.Pos
			}
			run.stop()
		case op == 0x10 || op == 0xd2: // call, ref.func
			f := r.U32()
			if t, ok := m.typeOf(f); ok && op == 0x10 {
				m.countResults(t)
			}
			if r.Err == nil {
				out = append(out, r.B[flushed:start]...)
				out = append(out, op)
				out = wasmbin.AppendU32(out, m.funcIndex(f))
				flushed = r.Pos
			}
		case op == 0x23 || op == 0x24: // global.get, global.set
			m.globalRefs = max(m.globalRefs, r.U32()+1)
		case op == 0x01, op == 0x1a, op == 0x1b, op >= 0x45 && op <= 0xc4, op == 0xd1:
			// no immediates: nop, drop, select, numeric operators,
			// ref.is_null
		case op == 0x0c || op == 0x0d: // br, br_if
			m.shape.branches++
			run.branch(r.U32())
			if op == 0x0c {
				run.stop()
			}
		case op == 0x0e: // br_table
			m.shape.branches++
			for range r.Count() {
				run.branch(r.U32())
			}
			run.branch(r.U32())
			run.stop()
		case op == 0x11: // call_indirect: type, table
			m.countResults(r.U32())
			r.U32()
		case op == 0x1c: // select with types: wazero reads the count as one byte
			if n := r.Byte(); n != 1 && r.Err == nil {
				r.Fail(fmt.Errorf("typed select with %d types", n))
			}
			r.valType()
		case op >= 0x20 && op <= 0x22, op == 0x25, op == 0x26: // locals, table.get/set
			r.U32()
		case op >= 0x28 && op <= 0x3e: // loads and stores
			r.memarg()
		case op == 0x3f || op == 0x40: // memory.size, memory.grow
			r.zeroByte()
		case op == 0x41:
			r.SkipLEB(5)
		case op == 0x42:
			r.SkipLEB(10)
		case op == 0x43:
			r.Bytes(4)
		case op == 0x44:
			r.Bytes(8)
		case op == 0xd0: // ref.null: wazero reads the type as one byte
			r.refType()
		case op == 0xfc:
			sub, a, b, bulk := r.misc()
			if sub == subTableGrow {
				m.growsTables = true
			}
			if bulk && checks && r.Err == nil {
				out = append(out, r.B[flushed:start]...)
				out = m.appendBulk(out, r.B[start:r.Pos], sub, a, b)
				flushed = r.Pos
			}
		case op == 0xfd:
			r.simd()
			m.countV128() // a vector value takes more stack (frameCost)
		default:
			// Exception handling, tail calls, typed function references,
			// GC and threads are not among the features the host enables:
			// wazero refuses them too.
			r.Fail(fmt.Errorf("opcode 0x%x: %w", op, ErrUnsupported))
		}
	}
	return out
}

// straightRun is the most instructions a function runs between two ticks
// (its entry, a loop head, or one added for this). Without it, code after
// a call would run unchecked: returning up a stack of 100,000 frames, each
// with thousands of instructions after its call, ran for seconds past the
// deadline without leaving Wasm. With it, each frame runs at most
// straightRun instructions of its own before a tick.
const straightRun = 256

// runs follows, along every path through a function body, how many
// instructions have run since the last tick. Branches only go forward,
// except to a loop head, which ticks: at the end of a block the count is
// the largest of those of the paths that meet there.
type runs struct {
	cur    int
	frames []runFrame
}

// runFrame is one open block, if or loop.
type runFrame struct {
	loop, isIf, hasElse bool
	atIf                int // the count where the if began (its false path)
	atEnd               int // the largest count of a branch to its end
}

func (s *runs) open(isIf bool) {
	s.frames = append(s.frames, runFrame{isIf: isIf, atIf: s.cur})
}

func (s *runs) openLoop() {
	s.frames = append(s.frames, runFrame{loop: true})
	s.cur = 0
}

func (s *runs) elseBranch() {
	if len(s.frames) == 0 {
		return // the decoder is not past a valid body; wazero refuses it
	}
	f := &s.frames[len(s.frames)-1]
	f.atEnd = max(f.atEnd, s.cur)
	f.hasElse = true
	s.cur = f.atIf
}

func (s *runs) end() {
	if len(s.frames) == 0 {
		return
	}
	f := s.frames[len(s.frames)-1]
	s.frames = s.frames[:len(s.frames)-1]
	if f.isIf && !f.hasElse {
		s.cur = max(s.cur, f.atIf)
	}
	if !f.loop {
		s.cur = max(s.cur, f.atEnd)
	}
}

// branch records a branch to label: the end of a block or if, the head
// of a loop (which ticks), or the function's end (which returns).
func (s *runs) branch(label uint32) {
	if int64(label) >= int64(len(s.frames)) {
		return
	}
	f := &s.frames[len(s.frames)-1-int(label)]
	if !f.loop {
		f.atEnd = max(f.atEnd, s.cur)
	}
}

// stop follows an instruction after which nothing runs in order.
func (s *runs) stop() { s.cur = 0 }

// misc reads the rest of a 0xfc instruction: its sub-opcode and index
// immediates, and whether it is a bulk memory or table operation, which
// appendBulk replaces. The sub-opcode is a LEB128 number, as wazero reads
// it; the memory indices of the bulk memory operations are single zero
// bytes.
func (r *reader) misc() (sub, a, b uint32, bulk bool) {
	switch sub = r.U32(); {
	case sub <= 7: // saturating truncations
	case sub == 8: // memory.init: data segment, memory
		a = r.U32()
		r.zeroByte()
		return sub, a, 0, true
	case sub == 10: // memory.copy: two memories
		r.zeroByte()
		r.zeroByte()
		return sub, 0, 0, true
	case sub == 11: // memory.fill: memory
		r.zeroByte()
		return sub, 0, 0, true
	case sub == 12 || sub == 14: // table.init (segment, table), table.copy (destination, source)
		a = r.U32()
		b = r.U32()
		return sub, a, b, true
	case sub == 17: // table.fill
		a = r.U32()
		return sub, a, 0, true
	case sub == 9 || sub == 13 || sub == 15 || sub == 16: // data.drop, elem.drop, table.grow, table.size
		r.U32()
	default:
		r.Fail(fmt.Errorf("opcode 0xfc %d: %w", sub, ErrUnsupported))
	}
	return sub, 0, 0, false
}

// simd reads the rest of a 0xfd (vector) instruction the way wazero does:
// the sub-opcode is one byte, where the standard has a LEB128 number. The
// two agree for sub-opcodes below 0x80, and for those from 0x80 when the
// next byte is 0x01 (which wazero then reads as a nop); anything else is
// refused, since wazero would run other instructions than the standard
// describes. Sub-opcodes wazero does not know are refused too.
func (r *reader) simd() {
	sub := r.Byte()
	if r.Err != nil {
		return
	}
	if !knownSIMD[sub] {
		r.Fail(fmt.Errorf("opcode 0xfd 0x%x: %w", sub, ErrUnsupported))
		return
	}
	switch {
	case sub >= 0x80:
		if r.Byte() != 0x01 && r.Err == nil {
			r.Fail(fmt.Errorf("opcode 0xfd 0x%x not followed by 0x01, which wazero reads otherwise than the standard: %w", sub, ErrUnsupported))
		}
	case sub <= 0x0b, sub == 0x5c, sub == 0x5d: // loads and stores
		r.memarg()
	case sub == 0x0c || sub == 0x0d: // v128.const, i8x16.shuffle
		r.Bytes(16)
	case sub >= 0x15 && sub <= 0x22: // extract and replace lane
		r.Byte()
	case sub >= 0x54 && sub <= 0x5b: // load and store lane
		r.memarg()
		r.Byte()
	}
}

// knownSIMD holds the vector sub-opcodes wazero 1.12 validates (the
// OpcodeVec constants of its internal/wasm/instruction.go, which its
// validator accepts): the fixed-width SIMD proposal, without relaxed SIMD.
var knownSIMD = func() (known [256]bool) {
	for op := range 256 {
		known[op] = true
	}
	// Opcodes the SIMD proposal leaves unused (or gave to relaxed SIMD).
	for _, op := range []int{0x9a, 0xa2, 0xa5, 0xa6, 0xaf, 0xb0, 0xb2, 0xb3, 0xb4, 0xbb,
		0xc2, 0xc5, 0xc6, 0xcf, 0xd0, 0xd2, 0xd3, 0xd4, 0xe2, 0xee} {
		known[op] = false
	}
	return known
}()

// reader is a wasmbin.Reader with the decoding of the instructions and
// types the rewrite reads (this file).
type reader struct{ wasmbin.Reader }

func newReader(b []byte) *reader { return &reader{wasmbin.Reader{B: b}} }

// Value types of the features the host enables.
const (
	typeI32       = 0x7f
	typeI64       = 0x7e
	typeF32       = 0x7d
	typeF64       = 0x7c
	typeV128      = 0x7b
	typeFuncref   = 0x70
	typeExternref = 0x6f
)

// valType reads a value type: one byte, as wazero reads it. The reference
// types of the typed function references and GC proposals, which take more
// bytes, are refused.
func (r *reader) valType() {
	switch t := r.Byte(); t {
	case typeI32, typeI64, typeF32, typeF64, typeV128, typeFuncref, typeExternref:
	default:
		if r.Err == nil {
			r.Fail(fmt.Errorf("value type 0x%x: %w", t, ErrUnsupported))
		}
	}
}

// refType reads a reference type (of a table or ref.null): one byte.
func (r *reader) refType() {
	switch t := r.Byte(); t {
	case typeFuncref, typeExternref:
	default:
		if r.Err == nil {
			r.Fail(fmt.Errorf("reference type 0x%x: %w", t, ErrUnsupported))
		}
	}
}

// zeroByte reads a reserved byte (a memory index), which wazero requires
// to be one byte of 0.
func (r *reader) zeroByte() {
	if b := r.Byte(); b != 0 && r.Err == nil {
		r.Fail(fmt.Errorf("reserved byte 0x%x, want 0", b))
	}
}

// blockType reads a block type: empty, a value type, or a type index, as
// a signed LEB128 number (wazero's DecodeBlockType).
func (r *reader) blockType() {
	switch v := r.S33(); {
	case v >= 0: // a type index
	case v == -0x40: // empty
	case v == typeI32-0x80, v == typeI64-0x80, v == typeF32-0x80, v == typeF64-0x80,
		v == typeV128-0x80, v == typeFuncref-0x80, v == typeExternref-0x80:
	default:
		if r.Err == nil {
			r.Fail(fmt.Errorf("block type %d: %w", v, ErrUnsupported))
		}
	}
}

// memarg reads an alignment and an offset, both 32-bit LEB128 numbers as
// wazero reads them. An alignment from 32 up is refused (wazero does too);
// bit 6, which announces a memory index in the multi-memory proposal, is
// among them.
func (r *reader) memarg() {
	if align := r.U32(); align >= 32 && r.Err == nil {
		r.Fail(fmt.Errorf("memory alignment 2^%d: %w", align, ErrUnsupported))
	}
	r.U32()
}

// limits reads the limits of a memory: a minimum and, when the flags say
// so, a maximum. Shared (threads) and 64-bit memories are refused.
func (r *reader) limits() {
	flags := r.Byte()
	if flags > 1 && r.Err == nil {
		r.Fail(fmt.Errorf("limits flags 0x%x: %w", flags, ErrUnsupported))
	}
	r.U32()
	if flags == 1 {
		r.U32()
	}
}

// mutability reads a global's mutability: 0 or 1.
func (r *reader) mutability() {
	if b := r.Byte(); b > 1 && r.Err == nil {
		r.Fail(fmt.Errorf("global mutability 0x%x", b))
	}
}

func appendS32(out []byte, v int32) []byte {
	for {
		b := byte(v & 0x7f)
		v >>= 7
		if (v == 0 && b&0x40 == 0) || (v == -1 && b&0x40 != 0) {
			return append(out, b)
		}
		out = append(out, b|0x80)
	}
}
