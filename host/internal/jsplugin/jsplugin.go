// Package jsplugin makes and reads JavaScript plugins: the shared
// JavaScript engine module (host/internal/jsengine/engine.wasm, QuickJS plus
// mcphost's ABI glue) with the plugin's bundled ES module in a custom
// section named SectionName (abi/ABI.md §17).
//
// A JavaScript plugin is therefore one .wasm file, which push, sign, pull,
// the lock file and hot reload treat like any other. The host removes the
// section before compiling (package plugin), so every JavaScript plugin on
// the same engine compiles to the same code, once, and hands the source to
// the engine through the js_source_length and js_source_read host
// functions.
package jsplugin

import (
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/mcphost/mcphost/host/internal/wasmbin"
)

// SectionName is the name of the custom section that holds a plugin's
// JavaScript source.
const SectionName = "mcphost.js"

// MaxSourceBytes bounds the source a plugin may carry: a larger section is
// refused when built and when loaded. QuickJS parses it at every instance's
// first call, and every instance keeps its compiled form, so it is bounded
// well below any memory cap that can run it.
const MaxSourceBytes = 4 << 20

// Build returns engine (a module with no SectionName section) with source,
// an ES module of UTF-8 text, appended in a SectionName section.
func Build(engine, source []byte) ([]byte, error) {
	if len(source) == 0 {
		return nil, errors.New("the JavaScript source is empty")
	}
	if len(source) > MaxSourceBytes {
		return nil, fmt.Errorf("the JavaScript source is %d bytes, more than a plugin may carry (%d)", len(source), MaxSourceBytes)
	}
	if !utf8.Valid(source) {
		return nil, errors.New("the JavaScript source is not UTF-8 text")
	}
	if _, found, err := Find(engine); err != nil {
		return nil, fmt.Errorf("read the engine: %w", err)
	} else if found {
		return nil, fmt.Errorf("the engine module already carries a %s section: build from the engine itself, not from a plugin", SectionName)
	}
	body := wasmbin.AppendName(nil, SectionName)
	body = append(body, source...)
	out := make([]byte, 0, len(engine)+len(body)+8)
	out = append(out, engine...)
	return wasmbin.AppendSection(out, 0, body), nil
}

// Find returns the JavaScript source a module carries; found is false when
// it has no SectionName section. A module with two, or one over
// MaxSourceBytes, or whose sections cannot be split, is an error.
func Find(wasm []byte) (source []byte, found bool, err error) {
	if err := wasmbin.CheckMagic(wasm); err != nil {
		return nil, false, err
	}
	r := &wasmbin.Reader{B: wasm, Pos: len(wasmbin.Header)}
	for !r.Done() {
		s, err := r.Section()
		if err != nil {
			return nil, false, fmt.Errorf("read the module's sections: %w", err)
		}
		if s.ID != 0 {
			continue
		}
		sr := &wasmbin.Reader{B: s.Body}
		name := sr.Name()
		if sr.Err != nil || string(name) != SectionName {
			continue
		}
		if found {
			return nil, false, fmt.Errorf("the module has two %s sections", SectionName)
		}
		source, found = s.Body[sr.Pos:], true
		if len(source) > MaxSourceBytes {
			return nil, false, fmt.Errorf("its JavaScript source (%s section) is %d bytes, more than a plugin may carry (%d)", SectionName, len(source), MaxSourceBytes)
		}
	}
	return source, found, nil
}
