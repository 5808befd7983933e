package interrupt

import (
	"errors"
	"fmt"
	"io"
)

// rewriteExpr copies one expression (a function body or a constant
// expression) from r to out, up to and including its final end, moving
// function indices and, when checks is set, adding a budget check at the
// head of every loop and before every bulk memory or table operation.
// Unchanged instructions are copied in runs, from flushed up to where
// something changes. Problems are left in r.err.
func (m *module) rewriteExpr(r *reader, out []byte, checks bool) []byte {
	depth := 0
	flushed := r.pos
	for r.err == nil {
		if r.done() {
			r.err = errors.New("expression without an end")
			break
		}
		start := r.pos
		op := r.byte()
		switch {
		case op == 0x02 || op == 0x04: // block, if
			r.blockType()
			depth++
		case op == 0x03: // loop: the check runs on every iteration
			r.blockType()
			depth++
			if checks && r.err == nil {
				out = append(out, r.b[flushed:r.pos]...)
				flushed = r.pos
				out = m.appendTickCall(out)
			}
		case op == 0x1f: // try_table
			r.blockType()
			for range r.count() {
				switch kind := r.byte(); kind {
				case 0x00, 0x01: // catch, catch_ref: tag, label
					r.u32()
					r.u32()
				case 0x02, 0x03: // catch_all, catch_all_ref: label
					r.u32()
				default:
					r.fail(fmt.Errorf("try_table catch kind 0x%x: %w", kind, ErrUnsupported))
				}
			}
			depth++
		case op == 0x0b: // end
			if depth == 0 {
				return append(out, r.b[flushed:r.pos]...)
			}
			depth--
		case op == 0x10 || op == 0x12 || op == 0xd2: // call, return_call, ref.func
			f := r.u32()
			if r.err == nil {
				out = append(out, r.b[flushed:start]...)
				out = append(out, op)
				out = appendU32(out, m.funcIndex(f))
				flushed = r.pos
			}
		case op == 0x23 || op == 0x24: // global.get, global.set
			m.globalRefs = max(m.globalRefs, r.u32()+1)
		case op <= 0x01, op == 0x05, op == 0x0a, op == 0x0f, op == 0x1a, op == 0x1b,
			op >= 0x45 && op <= 0xc4, op == 0xd1, op == 0xd3, op == 0xd5:
			// no immediates: unreachable, nop, else, throw_ref, return,
			// drop, select, numeric operators, ref.is_null,
			// ref.as_non_null, ref.eq
		case op == 0x0c || op == 0x0d || op == 0xd4 || op == 0xd6: // br, br_if, br_on_null, br_on_non_null
			r.u32()
		case op == 0x0e: // br_table
			for range r.count() {
				r.u32()
			}
			r.u32()
		case op == 0x11 || op == 0x13: // call_indirect, return_call_indirect: type, table
			r.u32()
			r.u32()
		case op == 0x08 || op == 0x14 || op == 0x15: // throw, call_ref, return_call_ref
			r.u32()
		case op == 0x1c: // select with types
			for range r.count() {
				r.valType()
			}
		case op >= 0x20 && op <= 0x22, op == 0x25, op == 0x26: // locals, table.get/set
			r.u32()
		case op >= 0x28 && op <= 0x3e: // loads and stores
			r.memarg()
		case op == 0x3f || op == 0x40: // memory.size, memory.grow
			r.u32()
		case op == 0x41:
			r.skipLEB(5)
		case op == 0x42:
			r.skipLEB(10)
		case op == 0x43:
			r.bytes(4)
		case op == 0x44:
			r.bytes(8)
		case op == 0xd0: // ref.null
			r.heapType()
		case op == 0xfc:
			if r.misc() && checks && r.err == nil {
				out = append(out, r.b[flushed:start]...)
				flushed = start
				out = m.appendCheck(out, bulkCost)
			}
		case op == 0xfd:
			r.simd()
		case op == 0xfe: // atomics
			switch sub := r.u32(); {
			case sub == 0x03: // atomic.fence
				r.byte()
			case sub <= 0x4e:
				r.memarg()
			default:
				r.fail(fmt.Errorf("opcode 0xfe %d: %w", sub, ErrUnsupported))
			}
		default:
			r.fail(fmt.Errorf("opcode 0x%x: %w", op, ErrUnsupported))
		}
	}
	return out
}

// misc reads the rest of a 0xfc instruction and reports whether it is a
// bulk memory or table operation, which gets a check before it, weighted
// by bulkCost.
func (r *reader) misc() (bulk bool) {
	switch sub := r.u32(); {
	case sub <= 7: // saturating truncations
	case sub == 8 || sub == 10 || sub == 12 || sub == 14: // memory.init, memory.copy, table.init, table.copy
		r.u32()
		r.u32()
		return true
	case sub == 11 || sub == 17: // memory.fill, table.fill
		r.u32()
		return true
	case sub == 9 || sub == 13 || sub == 15 || sub == 16: // data.drop, elem.drop, table.grow, table.size
		r.u32()
	default:
		r.fail(fmt.Errorf("opcode 0xfc %d: %w", sub, ErrUnsupported))
	}
	return false
}

// simd reads the rest of a 0xfd (vector) instruction.
func (r *reader) simd() {
	switch sub := r.u32(); {
	case sub <= 11, sub == 92, sub == 93: // loads and stores
		r.memarg()
	case sub == 12 || sub == 13: // v128.const, i8x16.shuffle
		r.bytes(16)
	case sub >= 21 && sub <= 34: // extract and replace lane
		r.byte()
	case sub >= 84 && sub <= 91: // load and store lane
		r.memarg()
		r.byte()
	case sub <= 0x113:
		// no immediates (including relaxed SIMD)
	default:
		r.fail(fmt.Errorf("opcode 0xfd %d: %w", sub, ErrUnsupported))
	}
}

// reader reads the Wasm binary encoding. The first problem sticks in err;
// reads after it return zero values.
type reader struct {
	b   []byte
	pos int
	err error
}

func (r *reader) done() bool { return r.pos >= len(r.b) }

func (r *reader) fail(err error) {
	if r.err == nil {
		r.err = err
	}
}

// end reports r's error, or one if bytes are left over.
func (r *reader) end() error {
	if r.err == nil && !r.done() {
		r.err = fmt.Errorf("%d unexpected bytes", len(r.b)-r.pos)
	}
	return r.err
}

func (r *reader) byte() byte {
	if r.err != nil || r.done() {
		r.fail(io.ErrUnexpectedEOF)
		return 0
	}
	r.pos++
	return r.b[r.pos-1]
}

func (r *reader) bytes(n int) []byte {
	if r.err != nil || n < 0 || n > len(r.b)-r.pos {
		r.fail(io.ErrUnexpectedEOF)
		return nil
	}
	r.pos += n
	return r.b[r.pos-n : r.pos]
}

// u32 reads an unsigned LEB128 number of at most 32 bits.
func (r *reader) u32() uint32 {
	var v uint32
	for shift := 0; shift < 35; shift += 7 {
		b := r.byte()
		if r.err != nil {
			return 0
		}
		if shift == 28 && b > 0x0f {
			r.fail(errors.New("u32 out of range"))
			return 0
		}
		v |= uint32(b&0x7f) << shift
		if b&0x80 == 0 {
			return v
		}
	}
	return 0
}

// count reads the length of a vector. Every element takes at least one
// byte, so a length beyond the bytes left is an error, found before a loop
// spins through billions of elements that are not there.
func (r *reader) count() uint32 {
	n := r.u32()
	if int64(n) > int64(len(r.b)-r.pos) {
		r.fail(fmt.Errorf("a vector of %d elements in %d bytes", n, len(r.b)-r.pos))
		return 0
	}
	return n
}

// s33 reads a signed LEB128 number of at most 33 bits.
func (r *reader) s33() int64 {
	var v int64
	shift := 0
	for {
		b := r.byte()
		if r.err != nil {
			return 0
		}
		v |= int64(b&0x7f) << shift
		shift += 7
		if b&0x80 == 0 {
			if shift < 64 && b&0x40 != 0 {
				v |= -1 << shift
			}
			return v
		}
		if shift >= 35 {
			r.fail(errors.New("s33 out of range"))
			return 0
		}
	}
}

// skipLEB skips a LEB128 number of at most maxBytes bytes.
func (r *reader) skipLEB(maxBytes int) {
	for range maxBytes {
		if r.byte()&0x80 == 0 {
			return
		}
	}
	r.fail(errors.New("LEB128 number too long"))
}

func (r *reader) name() []byte { return r.bytes(int(r.u32())) }

// Reference type prefixes that are followed by a heap type.
const (
	refNullable = -0x1d // 0x63
	refNonNull  = -0x1c // 0x64
)

// valType reads a value type.
func (r *reader) valType() {
	switch int8(r.byte()<<1) >> 1 { // the byte as a one-byte s33
	case refNullable, refNonNull:
		r.heapType()
	}
}

// heapType reads a heap type: an abstract one, or a type index.
func (r *reader) heapType() { r.s33() }

// blockType reads a block type: empty, a value type, or a type index.
func (r *reader) blockType() {
	switch r.s33() {
	case refNullable, refNonNull:
		r.heapType()
	}
}

// memarg reads an alignment (whose bit 6 announces a memory index) and an
// offset.
func (r *reader) memarg() {
	if align := r.u32(); align&0x40 != 0 {
		r.u32()
	}
	r.skipLEB(10)
}

// limits reads the limits of a table or memory.
func (r *reader) limits() {
	flags := r.byte()
	r.skipLEB(10)
	if flags&1 != 0 {
		r.skipLEB(10)
	}
}

func appendU32(out []byte, v uint32) []byte {
	for v >= 0x80 {
		out = append(out, byte(v)|0x80)
		v >>= 7
	}
	return append(out, byte(v))
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

func appendName[T string | []byte](out []byte, s T) []byte {
	out = appendU32(out, uint32(len(s)))
	return append(out, s...)
}
