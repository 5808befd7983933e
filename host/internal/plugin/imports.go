package plugin

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	extism "github.com/extism/go-sdk"

	"github.com/mcphost/mcphost/host/internal/hostfn"
	"github.com/mcphost/mcphost/host/internal/wasmbin"
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
// from it itself, so only this redirect reaches it. (http_status_code
// stays Extism's: it reads what the host's http_request recorded.) The
// kernel functions go to kernelImports, which keep them per instance
// (kernelfuncs.go), and Extism's functions that read blocks of the
// plugin's choosing (config_get, var_*, log_*, http_headers) to
// envFunctions, which read no more than they need (envfuncs.go).
var redirectedImports = func() map[importName]importName {
	m := kernelRedirects()
	for from, to := range envRedirects() {
		m[from] = to
	}
	m[importName{extismEnv, "http_request"}] = importName{hostfn.ExtismHTTPNamespace, "http_request"}
	return m
}()

// renameImports returns b with the imports named in renames renamed; the
// rest of the module is kept byte for byte. A module without such an import
// is returned unchanged.
func renameImports(b []byte, renames map[importName]importName) ([]byte, error) {
	if err := wasmbin.CheckMagic(b); err != nil {
		return nil, err
	}
	out := bytes.NewBuffer(make([]byte, 0, len(b)))
	out.Write(b[:8])
	r := &wasmbin.Reader{B: b, Pos: 8}
	changed := false
	for !r.Done() {
		start := r.Pos
		s, err := r.Section()
		if err != nil {
			return nil, err
		}
		if s.ID != 2 { // not the import section
			out.Write(b[start:r.Pos])
			continue
		}
		section, n, err := renameInSection(s.Body, renames)
		if err != nil {
			return nil, fmt.Errorf("import section: %w", err)
		}
		changed = changed || n > 0
		out.Write(wasmbin.AppendSection(nil, s.ID, section))
	}
	if !changed {
		return b, nil
	}
	return out.Bytes(), nil
}

// renameInSection rewrites an import section's body, returning it and the
// number of imports renamed.
func renameInSection(body []byte, renames map[importName]importName) ([]byte, int, error) {
	r := &wasmbin.Reader{B: body}
	count := r.Count()
	out := wasmbin.AppendU32(nil, count)
	renamed := 0
	for i := uint32(0); i < count && r.Err == nil; i++ {
		module, name := string(r.Name()), string(r.Name())
		if r.Err != nil {
			return nil, 0, fmt.Errorf("import %d: %w", i, r.Err)
		}
		descStart := r.Pos
		if err := skipImportDesc(r); err != nil {
			return nil, 0, fmt.Errorf("import %d (%s.%s): %w", i, module, name, err)
		}
		if to, ok := renames[importName{module, name}]; ok {
			module, name = to.module, to.name
			renamed++
		}
		out = wasmbin.AppendName(out, module)
		out = wasmbin.AppendName(out, name)
		out = append(out, body[descStart:r.Pos]...)
	}
	if err := r.End(); err != nil {
		return nil, 0, err
	}
	return out, renamed, nil
}

// skipImportDesc skips an import descriptor: a function's type index, a
// table's type, a memory's limits or a global's type.
func skipImportDesc(r *wasmbin.Reader) error {
	switch kind := r.Byte(); kind {
	case 0x00: // func: type index
		r.U32()
	case 0x01: // table: reference type, limits
		r.Byte()
		skipLimits(r)
	case 0x02: // memory: limits
		skipLimits(r)
	case 0x03: // global: value type, mutability
		r.Byte()
		r.Byte()
	default:
		r.Fail(fmt.Errorf("unknown import kind 0x%02x", kind))
	}
	return r.Err
}

// skipLimits skips a table's or memory's limits.
func skipLimits(r *wasmbin.Reader) {
	flags := r.Byte()
	if flags > 0x03 { // bit 0: a maximum follows; bit 1: shared
		r.Fail(fmt.Errorf("unsupported limits flags 0x%02x", flags))
		return
	}
	r.U32()
	if flags&1 != 0 {
		r.U32()
	}
}

// isExtismHTTP reports whether fn answers the redirected http_request.
func isExtismHTTP(fn extism.HostFunction) bool {
	return fn.Namespace == hostfn.ExtismHTTPNamespace && fn.Name == "http_request"
}

// refuseExtismHTTP answers the redirected http_request when the embedder
// gave no egress (no host functions): every request is refused, as
// Extism's own refuses a host not allowed.
func refuseExtismHTTP() extism.HostFunction {
	fn := extism.NewHostFunctionWithStack("http_request", func(ctx context.Context, _ *extism.CurrentPlugin, _ []uint64) {
		hostfn.CheckDeadline(ctx, "http_request")
		panic(errors.New("http_request: no network is granted"))
	}, []extism.ValueType{extism.ValueTypeI64, extism.ValueTypeI64}, []extism.ValueType{extism.ValueTypeI64})
	fn.SetNamespace(hostfn.ExtismHTTPNamespace)
	return fn
}

// exportedFunctions returns the names of the functions a module exports.
func exportedFunctions(b []byte) (map[string]bool, error) {
	if err := wasmbin.CheckMagic(b); err != nil {
		return nil, err
	}
	names := map[string]bool{}
	for sr := (&wasmbin.Reader{B: b, Pos: 8}); !sr.Done(); {
		s, err := sr.Section()
		if err != nil {
			return nil, err
		}
		if s.ID != 7 { // not the export section
			continue
		}
		r := &wasmbin.Reader{B: s.Body}
		count := r.Count()
		if r.Err != nil {
			return nil, fmt.Errorf("export section: %w", r.Err)
		}
		for i := uint32(0); i < count; i++ {
			name := r.Name()
			kind := r.Byte()
			r.U32()
			if r.Err != nil {
				return nil, fmt.Errorf("export section: export %d: %w", i, r.Err)
			}
			if kind == 0x00 {
				names[string(name)] = true
			}
		}
		return names, nil
	}
	return names, nil
}
