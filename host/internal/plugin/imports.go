package plugin

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	extism "github.com/extism/go-sdk"

	"github.com/mcphost/mcphost/host/internal/hostfn"
)

// extismEnv is the import module of Extism's kernel functions.
const extismEnv = "extism:host/env"

// importName is one import's module and field name.
type importName struct{ module, name string }

// redirectedImports are the imports redirected to the host's own
// functions: Extism's built-in http_request, which checks only the first
// host, follows redirects anywhere and dials private addresses, goes to
// hostfn's, which applies the egress policy. The target module's "mcphost:"
// prefix is reserved: the interrupt rewrite refuses a module that imports
// from it itself, so only this redirect reaches it. (http_status_code and http_headers
// stay Extism's: they read what the host's http_request recorded.) The
// kernel functions go to kernelImports, which keep them per instance
// (kernelfuncs.go).
var redirectedImports = func() map[importName]importName {
	m := kernelRedirects()
	m[importName{extismEnv, "http_request"}] = importName{hostfn.ExtismHTTPNamespace, "http_request"}
	return m
}()

// renameImports returns b with the imports named in renames renamed; the
// rest of the module is kept byte for byte. A module without such an import
// is returned unchanged.
func renameImports(b []byte, renames map[importName]importName) ([]byte, error) {
	if len(b) < 8 || string(b[:4]) != "\x00asm" {
		return nil, errors.New("not a WebAssembly module")
	}
	out := bytes.NewBuffer(make([]byte, 0, len(b)))
	out.Write(b[:8])
	r := &reader{b: b, off: 8}
	changed := false
	for r.off < len(b) {
		start := r.off
		id, body, err := r.section()
		if err != nil {
			return nil, err
		}
		if id != 2 { // not the import section
			out.Write(b[start:r.off])
			continue
		}
		section, n, err := renameInSection(body, renames)
		if err != nil {
			return nil, fmt.Errorf("import section: %w", err)
		}
		changed = changed || n > 0
		out.WriteByte(id)
		out.Write(binary.AppendUvarint(nil, uint64(len(section))))
		out.Write(section)
	}
	if !changed {
		return b, nil
	}
	return out.Bytes(), nil
}

// renameInSection rewrites an import section's body, returning it and the
// number of imports renamed.
func renameInSection(body []byte, renames map[importName]importName) ([]byte, int, error) {
	r := &reader{b: body}
	count, err := r.u32()
	if err != nil {
		return nil, 0, err
	}
	out := binary.AppendUvarint(nil, uint64(count))
	renamed := 0
	for i := uint32(0); i < count; i++ {
		module, err := r.name()
		if err != nil {
			return nil, 0, fmt.Errorf("import %d: %w", i, err)
		}
		name, err := r.name()
		if err != nil {
			return nil, 0, fmt.Errorf("import %d: %w", i, err)
		}
		descStart := r.off
		if err := r.skipImportDesc(); err != nil {
			return nil, 0, fmt.Errorf("import %d (%s.%s): %w", i, module, name, err)
		}
		if to, ok := renames[importName{module, name}]; ok {
			module, name = to.module, to.name
			renamed++
		}
		out = appendName(out, module)
		out = appendName(out, name)
		out = append(out, body[descStart:r.off]...)
	}
	if r.off != len(body) {
		return nil, 0, errors.New("trailing bytes")
	}
	return out, renamed, nil
}

func appendName(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// reader reads the parts of a module renameImports needs.
type reader struct {
	b   []byte
	off int
}

var errTruncated = errors.New("truncated")

// section reads the next section: its id and its body.
func (r *reader) section() (id byte, body []byte, err error) {
	if id, err = r.byte(); err != nil {
		return 0, nil, err
	}
	size, err := r.u32()
	if err != nil {
		return 0, nil, err
	}
	if body, err = r.bytes(int(size)); err != nil {
		return 0, nil, fmt.Errorf("section %d: %w", id, err)
	}
	return id, body, nil
}

func (r *reader) byte() (byte, error) {
	if r.off >= len(r.b) {
		return 0, errTruncated
	}
	r.off++
	return r.b[r.off-1], nil
}

func (r *reader) u32() (uint32, error) {
	var v uint64
	for shift := 0; shift < 35; shift += 7 {
		c, err := r.byte()
		if err != nil {
			return 0, err
		}
		v |= uint64(c&0x7f) << shift
		if c&0x80 == 0 {
			if v > 1<<32-1 {
				return 0, errors.New("integer too large")
			}
			return uint32(v), nil
		}
	}
	return 0, errors.New("integer too long")
}

func (r *reader) bytes(n int) ([]byte, error) {
	if n < 0 || n > len(r.b)-r.off {
		return nil, errTruncated
	}
	r.off += n
	return r.b[r.off-n : r.off], nil
}

func (r *reader) name() (string, error) {
	n, err := r.u32()
	if err != nil {
		return "", err
	}
	b, err := r.bytes(int(n))
	return string(b), err
}

// skipImportDesc skips an import descriptor: a function's type index, a
// table's type, a memory's limits or a global's type.
func (r *reader) skipImportDesc() error {
	kind, err := r.byte()
	if err != nil {
		return err
	}
	switch kind {
	case 0x00: // func: type index
		_, err = r.u32()
	case 0x01: // table: reference type, limits
		if _, err = r.byte(); err == nil {
			err = r.skipLimits()
		}
	case 0x02: // memory: limits
		err = r.skipLimits()
	case 0x03: // global: value type, mutability
		if _, err = r.byte(); err == nil {
			_, err = r.byte()
		}
	default:
		err = fmt.Errorf("unknown import kind 0x%02x", kind)
	}
	return err
}

func (r *reader) skipLimits() error {
	flags, err := r.byte()
	if err != nil {
		return err
	}
	if flags > 0x03 { // bit 0: a maximum follows; bit 1: shared
		return fmt.Errorf("unsupported limits flags 0x%02x", flags)
	}
	if _, err := r.u32(); err != nil {
		return err
	}
	if flags&1 != 0 {
		_, err = r.u32()
	}
	return err
}

// isExtismHTTP reports whether fn answers the redirected http_request.
func isExtismHTTP(fn extism.HostFunction) bool {
	return fn.Namespace == hostfn.ExtismHTTPNamespace && fn.Name == "http_request"
}

// refuseExtismHTTP answers the redirected http_request when the embedder
// gave no egress (no host functions): every request is refused, as
// Extism's own refuses a host not allowed.
func refuseExtismHTTP() extism.HostFunction {
	fn := extism.NewHostFunctionWithStack("http_request", func(context.Context, *extism.CurrentPlugin, []uint64) {
		panic(errors.New("http_request: no network is granted"))
	}, []extism.ValueType{extism.ValueTypeI64, extism.ValueTypeI64}, []extism.ValueType{extism.ValueTypeI64})
	fn.SetNamespace(hostfn.ExtismHTTPNamespace)
	return fn
}

// exportedFunctions returns the names of the functions a module exports.
func exportedFunctions(b []byte) (map[string]bool, error) {
	if len(b) < 8 || string(b[:4]) != "\x00asm" {
		return nil, errors.New("not a WebAssembly module")
	}
	r := &reader{b: b, off: 8}
	for r.off < len(b) {
		id, body, err := r.section()
		if err != nil {
			return nil, err
		}
		if id != 7 { // not the export section
			continue
		}
		s := &reader{b: body}
		count, err := s.u32()
		if err != nil {
			return nil, fmt.Errorf("export section: %w", err)
		}
		names := map[string]bool{}
		for i := uint32(0); i < count; i++ {
			name, err := s.name()
			if err != nil {
				return nil, fmt.Errorf("export %d: %w", i, err)
			}
			kind, err := s.byte()
			if err != nil {
				return nil, fmt.Errorf("export %d: %w", i, err)
			}
			if _, err := s.u32(); err != nil {
				return nil, fmt.Errorf("export %d: %w", i, err)
			}
			if kind == 0x00 {
				names[name] = true
			}
		}
		return names, nil
	}
	return map[string]bool{}, nil
}
