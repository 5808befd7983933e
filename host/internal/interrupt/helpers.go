package interrupt

import "github.com/mcphost/mcphost/host/internal/wasmbin"

// extras holds the functions and types the rewrite adds to a module while
// it rewrites the code: the helpers that run bulk operations in chunks
// (bulk.go) and the block types of the stack accounting (stack.go). They
// are made only when some code needs them, at most once each, and
// appended after the module's own: after its types (and the types of the
// imports the rewrite adds) and after its defined functions, so no index
// the module uses moves.
type extras struct {
	types [][]byte          // encoded function types, from type index typeBase
	funcs []extraFunc       // helper functions, from function index funcBase
	keys  map[string]uint32 // what each helper or type is, to its position
}

// extraFunc is one helper function: its type (an index into
// extras.types) and its code entry body (local declarations, then code).
type extraFunc struct {
	typ  uint32
	body []byte
}

// typeBase is the index of the first type the rewrite adds after the
// module's own and those of the imports it adds.
func (m *module) typeBase() uint32 { return m.types + m.addedImports() }

// funcBase is the index of the first helper function: after the imports
// (the module's and the rewrite's) and the module's defined functions.
func (m *module) funcBase() uint32 { return m.importedFuncs + m.addedImports() + m.definedFuncs }

// extraType returns the index of the function type encoded as typ (0x60,
// params, results), adding it once.
func (m *module) extraType(typ []byte) uint32 {
	key := "type:" + string(typ)
	if i, ok := m.extra.keys[key]; ok {
		return m.typeBase() + i
	}
	if m.extra.keys == nil {
		m.extra.keys = map[string]uint32{}
	}
	i := uint32(len(m.extra.types))
	m.extra.types = append(m.extra.types, typ)
	m.extra.keys[key] = i
	return m.typeBase() + i
}

// helper returns the function index of the helper named key, making it
// with build the first time: build returns its type and its body.
func (m *module) helper(key string, build func() (typ, body []byte)) uint32 {
	key = "func:" + key
	if i, ok := m.extra.keys[key]; ok {
		return m.funcBase() + i
	}
	typ, body := build()
	t := m.extraType(typ) - m.typeBase()
	i := uint32(len(m.extra.funcs))
	m.extra.funcs = append(m.extra.funcs, extraFunc{typ: t, body: body})
	m.extra.keys[key] = i
	return m.funcBase() + i
}

// appendExtraTypes appends the added types to a type section's entries.
func (m *module) appendExtraTypes(out []byte) []byte {
	for _, t := range m.extra.types {
		out = append(out, t...)
	}
	return out
}

// appendExtraFuncs appends the added functions' type indices to a function
// section's entries.
func (m *module) appendExtraFuncs(out []byte) []byte {
	for _, f := range m.extra.funcs {
		out = wasmbin.AppendU32(out, m.typeBase()+f.typ)
	}
	return out
}

// appendExtraCode appends the added functions' code entries to a code
// section's entries.
func (m *module) appendExtraCode(out []byte) []byte {
	for _, f := range m.extra.funcs {
		out = wasmbin.AppendU32(out, uint32(len(f.body)))
		out = append(out, f.body...)
	}
	return out
}

// funcType encodes a function type.
func funcType(params, results []byte) []byte {
	out := append([]byte{0x60}, wasmbin.AppendU32(nil, uint32(len(params)))...)
	out = append(out, params...)
	out = wasmbin.AppendU32(out, uint32(len(results)))
	return append(out, results...)
}
