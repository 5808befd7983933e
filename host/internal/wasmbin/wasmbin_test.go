package wasmbin

import (
	"errors"
	"io"
	"strings"
	"testing"
)

func TestSections(t *testing.T) {
	body := AppendSection(AppendSection(nil, 1, []byte{0}), 0, AppendName(nil, "name"))
	s, err := Sections(body)
	if err != nil || len(s) != 2 || s[0].ID != 1 || string(s[0].Body) != "\x00" || s[1].ID != 0 || string(s[1].Body) != "\x04name" {
		t.Fatalf("Sections = %+v, %v", s, err)
	}
	if _, err := Sections(body[:len(body)-1]); err == nil || !strings.HasPrefix(err.Error(), "section 0: ") || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("a cut-short section: %v", err)
	}
	if err := CheckMagic([]byte("\x00asm")); err != ErrNotWasm {
		t.Errorf("CheckMagic of 4 bytes = %v", err)
	}
	if err := CheckMagic(Header); err != nil {
		t.Errorf("CheckMagic(Header) = %v", err)
	}
}

func TestNumbers(t *testing.T) {
	for _, v := range []uint32{0, 1, 127, 128, 1<<32 - 1} {
		r := &Reader{B: AppendU32(nil, v)}
		if got := r.U32(); got != v || r.End() != nil {
			t.Errorf("U32 of %d = %d, %v", v, got, r.Err)
		}
	}
	r := &Reader{B: []byte{0xff, 0xff, 0xff, 0xff, 0x10}} // 2^32
	if r.U32(); r.Err == nil {
		t.Error("U32 read 2^32")
	}
	r = &Reader{B: []byte{0x7f}} // -1
	if v := r.S33(); v != -1 || r.Err != nil {
		t.Errorf("S33 = %d, %v", v, r.Err)
	}
	r = &Reader{B: []byte{5, 1, 2}}
	if n := r.Count(); n != 0 || r.Err == nil {
		t.Errorf("a vector of 5 in 2 bytes: %d, %v", n, r.Err)
	}
	r = &Reader{B: []byte{1}}
	r.Byte()
	if r.Byte(); !errors.Is(r.Err, io.ErrUnexpectedEOF) {
		t.Errorf("reading past the end: %v", r.Err)
	}
}
