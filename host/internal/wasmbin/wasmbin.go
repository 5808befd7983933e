// Package wasmbin reads and writes the WebAssembly binary format at the
// level the host's rewrites need: a module's header and sections, LEB128
// numbers, names and vectors. package interrupt decodes code with it, and
// package plugin renames imports and lists exports; what a section means is
// theirs to decode.
package wasmbin

import (
	"bytes"
	"errors"
	"fmt"
	"io"
)

// Header is the 8 bytes a module of binary format version 1 starts with:
// the magic "\0asm" and the version.
var Header = []byte("\x00asm\x01\x00\x00\x00")

// ErrNotWasm is returned for bytes that do not start with the magic.
var ErrNotWasm = errors.New("not a WebAssembly module")

// CheckMagic returns ErrNotWasm unless b starts with "\0asm" and is at least
// a header long. It does not check the version (Header[4:]).
func CheckMagic(b []byte) error {
	if len(b) < len(Header) || !bytes.Equal(b[:4], Header[:4]) {
		return ErrNotWasm
	}
	return nil
}

// Section is one section of a module: its id and its body.
type Section struct {
	ID   byte
	Body []byte
}

// Sections splits the sections of a module, b without its header, each
// body a slice of b; the error names the section that is cut short.
func Sections(b []byte) ([]Section, error) {
	r := &Reader{B: b}
	var sections []Section
	for !r.Done() {
		s, err := r.Section()
		if err != nil {
			return nil, err
		}
		sections = append(sections, s)
	}
	return sections, nil
}

// Section reads a section: its id, size and body (a slice of B). The error
// names the section when it is cut short.
func (r *Reader) Section() (Section, error) {
	id := r.Byte()
	size := r.U32()
	body := r.Bytes(int(size))
	if r.Err != nil {
		return Section{}, fmt.Errorf("section %d: %w", id, r.Err)
	}
	return Section{ID: id, Body: body}, nil
}

// Reader reads the Wasm binary encoding from B, at Pos. The first problem
// sticks in Err; reads after it return zero values.
type Reader struct {
	B   []byte
	Pos int
	Err error
}

// Done reports whether every byte has been read.
func (r *Reader) Done() bool { return r.Pos >= len(r.B) }

// Fail records err unless a problem is recorded already.
func (r *Reader) Fail(err error) {
	if r.Err == nil {
		r.Err = err
	}
}

// End reports r's error, or one if bytes are left over.
func (r *Reader) End() error {
	if r.Err == nil && !r.Done() {
		r.Err = fmt.Errorf("%d unexpected bytes", len(r.B)-r.Pos)
	}
	return r.Err
}

// Byte reads one byte.
func (r *Reader) Byte() byte {
	if r.Err != nil || r.Done() {
		r.Fail(io.ErrUnexpectedEOF)
		return 0
	}
	r.Pos++
	return r.B[r.Pos-1]
}

// Bytes reads n bytes, a slice of B.
func (r *Reader) Bytes(n int) []byte {
	if r.Err != nil || n < 0 || n > len(r.B)-r.Pos {
		r.Fail(io.ErrUnexpectedEOF)
		return nil
	}
	r.Pos += n
	return r.B[r.Pos-n : r.Pos]
}

// U32 reads an unsigned LEB128 number of at most 32 bits.
func (r *Reader) U32() uint32 {
	var v uint32
	for shift := 0; shift < 35; shift += 7 {
		b := r.Byte()
		if r.Err != nil {
			return 0
		}
		if shift == 28 && b > 0x0f {
			r.Fail(errors.New("u32 out of range"))
			return 0
		}
		v |= uint32(b&0x7f) << shift
		if b&0x80 == 0 {
			return v
		}
	}
	return 0
}

// Count reads the length of a vector. Every element takes at least one
// byte, so a length beyond the bytes left is an error, found before a loop
// spins through billions of elements that are not there.
func (r *Reader) Count() uint32 {
	n := r.U32()
	if int64(n) > int64(len(r.B)-r.Pos) {
		r.Fail(fmt.Errorf("a vector of %d elements in %d bytes", n, len(r.B)-r.Pos))
		return 0
	}
	return n
}

// S33 reads a signed LEB128 number of at most 33 bits.
func (r *Reader) S33() int64 {
	var v int64
	shift := 0
	for {
		b := r.Byte()
		if r.Err != nil {
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
			r.Fail(errors.New("s33 out of range"))
			return 0
		}
	}
}

// SkipLEB skips a LEB128 number of at most maxBytes bytes.
func (r *Reader) SkipLEB(maxBytes int) {
	for range maxBytes {
		if r.Byte()&0x80 == 0 {
			return
		}
	}
	r.Fail(errors.New("LEB128 number too long"))
}

// Name reads a name: its length, then its bytes (a slice of B).
func (r *Reader) Name() []byte { return r.Bytes(int(r.U32())) }

// AppendU32 appends v as an unsigned LEB128 number.
func AppendU32(out []byte, v uint32) []byte {
	for v >= 0x80 {
		out = append(out, byte(v)|0x80)
		v >>= 7
	}
	return append(out, byte(v))
}

// AppendName appends s as a name: its length, then its bytes.
func AppendName[T string | []byte](out []byte, s T) []byte {
	out = AppendU32(out, uint32(len(s)))
	return append(out, s...)
}

// AppendSection appends a section with the given id and body.
func AppendSection(out []byte, id byte, body []byte) []byte {
	out = append(out, id)
	out = AppendU32(out, uint32(len(body)))
	return append(out, body...)
}
