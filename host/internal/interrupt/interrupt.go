// Package interrupt makes a Wasm module stoppable by its host at a low
// cost per call.
//
// Instrument rewrites a module so that every function entry and every loop
// iteration calls a small added function, tick, that takes one unit from a
// budget held in a new mutable global; bulk memory and table operations
// take more, inline. When the budget runs out the module calls an imported
// host function (ImportModule, ImportName). That function stops the call by
// trapping when the call's context has ended, and otherwise returns the next
// budget. Between two such calls the module runs without leaving compiled
// code.
//
// This replaces wazero's WithCloseOnContextDone, which in wazero 1.12 leaves
// compiled code for Go on every loop iteration and starts a goroutine for
// every call into the module, and which does not check function entries, so
// a call tree with no loops (a deep fan-out of calls, or tail calls) cannot
// be stopped.
//
// The rewrite refuses what it does not understand (ErrUnsupported): a caller
// then runs the original module under wazero's own checks.
package interrupt

import (
	"bytes"
	"errors"
	"fmt"
)

const (
	// ImportModule and ImportName name the host function an instrumented
	// module imports. Its type is () -> i32: it returns the next budget, or
	// traps to stop the call.
	ImportModule = "mcphost:interrupt"
	ImportName   = "check"

	// Budget is the number of function entries and loop iterations between
	// two calls to the host function.
	Budget = 1024

	// bulkCost is what one memory.fill, memory.copy, memory.init,
	// table.fill, table.copy or table.init takes from the budget: each can
	// touch the whole memory, so at most Budget/bulkCost of them run between
	// two checks.
	bulkCost = Budget / 16
)

// ErrUnsupported is returned for modules that use an encoding or a feature
// the rewrite does not handle.
var ErrUnsupported = errors.New("not supported by the interrupt instrumentation")

// Section ids of the Wasm binary format.
const (
	secCustom    = 0
	secType      = 1
	secImport    = 2
	secFunction  = 3
	secTable     = 4
	secMemory    = 5
	secGlobal    = 6
	secExport    = 7
	secStart     = 8
	secElement   = 9
	secCode      = 10
	secData      = 11
	secDataCount = 12
	secTag       = 13
)

// sectionOrder ranks the known sections in the order the format requires.
var sectionOrder = map[byte]int{
	secType: 1, secImport: 2, secFunction: 3, secTable: 4, secMemory: 5,
	secTag: 6, secGlobal: 7, secExport: 8, secStart: 9, secElement: 10,
	secDataCount: 11, secCode: 12, secData: 13,
}

type section struct {
	id   byte
	body []byte
}

// module holds what the rewrite needs to know about the original module.
type module struct {
	types           uint32 // entries in the type section
	importedFuncs   uint32
	importedGlobals uint32
	definedGlobals  uint32
	definedFuncs    uint32
	// globalRefs and funcRefs are one more than the highest global and
	// function index the module names.
	globalRefs, funcRefs uint32
}

// globals is the number of globals of the original module.
func (m *module) globals() uint32 { return m.importedGlobals + m.definedGlobals }

// checkFunc is the index of the imported host function in the rewritten
// module, and counter the index of the budget global, added after the
// original globals.
func (m *module) checkFunc() uint32 { return m.importedFuncs }
func (m *module) counter() uint32   { return m.globals() }

// tickFunc is the index of the function the rewrite adds, which takes one
// unit from the budget and calls checkFunc when it is spent.
func (m *module) tickFunc() uint32 { return m.importedFuncs + 1 + m.definedFuncs }

// funcIndex maps a function index of the original module to the rewritten
// one: the new import comes after the original imports, so every function
// defined in the module moves up by one.
func (m *module) funcIndex(i uint32) uint32 {
	m.funcRefs = max(m.funcRefs, i+1)
	return m.movedFunc(i)
}

// movedFunc is funcIndex for the name section, which may name functions
// that do not exist.
func (m *module) movedFunc(i uint32) uint32 {
	if i >= m.importedFuncs {
		return i + 1
	}
	return i
}

// Instrument returns a copy of the Wasm module b with the budget checks
// described in the package documentation. It does not validate b: the
// result is only as valid as the input, and the runtime validates it. It
// does refuse a module that names a global or a function it does not
// define, since after the rewrite that index would reach what was added.
func Instrument(b []byte) ([]byte, error) {
	if len(b) < 8 || !bytes.Equal(b[:4], []byte("\x00asm")) {
		return nil, errors.New("not a WebAssembly module")
	}
	if !bytes.Equal(b[4:8], []byte{1, 0, 0, 0}) {
		return nil, fmt.Errorf("binary format version %x: %w", b[4:8], ErrUnsupported)
	}
	sections, err := readSections(b[8:])
	if err != nil {
		return nil, err
	}
	var m module
	for _, s := range sections {
		var err error
		switch s.id {
		case secType:
			m.types, err = countTypes(s.body)
		case secImport:
			m.importedFuncs, m.importedGlobals, err = countImports(s.body)
		case secGlobal:
			m.definedGlobals, err = countGlobals(s.body)
		case secFunction:
			r := &reader{b: s.body}
			m.definedFuncs = r.u32()
			err = r.err
		}
		if err != nil {
			return nil, fmt.Errorf("section %d: %w", s.id, err)
		}
	}

	out := make([]byte, 8, len(b)+len(b)/8+64) // the checks add ~3%
	copy(out, b[:8])
	emitted := map[byte]bool{}
	emitMissing := func(before int) {
		for _, id := range []byte{secType, secImport, secFunction, secGlobal, secCode} {
			if !emitted[id] && sectionOrder[id] < before {
				emitted[id] = true
				body, _ := m.rewriteSection(id, nil) // cannot fail without a body
				out = appendSection(out, id, body)
			}
		}
	}
	for _, s := range sections {
		if s.id != secCustom {
			emitMissing(sectionOrder[s.id])
			emitted[s.id] = true
		}
		body, err := m.rewrite(s)
		if err != nil {
			return nil, fmt.Errorf("section %d: %w", s.id, err)
		}
		if body != nil {
			out = appendSection(out, s.id, body)
		}
	}
	emitMissing(len(sectionOrder) + 1)
	// An undefined index would now reach what the rewrite added: the budget
	// global, which the module could set to never be checked, or the tick
	// function.
	if m.globalRefs > m.globals() {
		return nil, fmt.Errorf("the module names global %d, which it does not define", m.globalRefs-1)
	}
	if m.funcRefs > m.importedFuncs+m.definedFuncs {
		return nil, fmt.Errorf("the module names function %d, which it does not define", m.funcRefs-1)
	}
	return out, nil
}

// readSections splits the module's body into sections.
func readSections(b []byte) ([]section, error) {
	r := &reader{b: b}
	var sections []section
	for !r.done() {
		id := r.byte()
		size := r.u32()
		body := r.bytes(int(size))
		if r.err != nil {
			return nil, fmt.Errorf("section %d: %w", id, r.err)
		}
		if _, known := sectionOrder[id]; !known && id != secCustom {
			return nil, fmt.Errorf("section id %d: %w", id, ErrUnsupported)
		}
		sections = append(sections, section{id: id, body: body})
	}
	return sections, nil
}

func appendSection(out []byte, id byte, body []byte) []byte {
	out = append(out, id)
	out = appendU32(out, uint32(len(body)))
	return append(out, body...)
}

// rewrite returns the new body of section s; nil drops the section.
func (m *module) rewrite(s section) ([]byte, error) {
	switch s.id {
	case secCustom:
		return m.rewriteCustom(s.body), nil
	case secType, secImport, secFunction, secGlobal:
		return m.rewriteSection(s.id, s.body)
	case secExport:
		return m.rewriteExports(s.body)
	case secStart:
		r := &reader{b: s.body}
		f := r.u32()
		if err := r.end(); err != nil {
			return nil, err
		}
		return appendU32(nil, m.funcIndex(f)), nil
	case secElement:
		return m.rewriteElements(s.body)
	case secCode:
		return m.rewriteCode(s.body)
	case secData:
		return s.body, m.checkData(s.body)
	case secDataCount:
		r := &reader{b: s.body}
		r.u32()
		return s.body, r.end()
	default:
		return s.body, nil
	}
}

// rewriteSection appends what the rewrite adds to the type, import,
// function, global or code section whose original body is body (nil when
// the module has none): two types, the import, the tick function and its
// code, the budget global. The counts in body were read by Instrument.
func (m *module) rewriteSection(id byte, body []byte) ([]byte, error) {
	r := &reader{b: body}
	var count uint32
	if body != nil {
		count = r.u32()
	}
	added := uint32(1)
	if id == secType {
		added = 2
	}
	out := appendU32(nil, count+added)
	switch id {
	case secType:
		out = append(out, body[r.pos:]...)
		out = append(out, 0x60, 0x00, 0x01, 0x7f) // func () -> i32
		out = append(out, 0x60, 0x00, 0x00)       // func () -> ()
	case secImport:
		out = append(out, body[r.pos:]...)
		out = appendName(out, ImportModule)
		out = appendName(out, ImportName)
		out = append(out, 0x00)
		out = appendU32(out, m.types) // the type appended above
	case secFunction:
		out = append(out, body[r.pos:]...)
		out = appendU32(out, m.types+1)
	case secCode:
		// Only when the module has no code section.
		out = m.appendTick(out)
	case secGlobal:
		// The entries were checked by countGlobals; their init expressions
		// may hold ref.func, whose index moves.
		for range count {
			start := r.pos
			r.valType()
			r.byte()
			out = append(out, body[start:r.pos]...)
			out = m.rewriteExpr(r, out, false)
		}
		out = append(out, 0x7f, 0x01, 0x41) // mut i32, i32.const
		out = appendS32(out, Budget)
		out = append(out, 0x0b)
	}
	return out, r.err
}

func countTypes(b []byte) (uint32, error) {
	r := &reader{b: b}
	n := r.count()
	for range n {
		if form := r.byte(); form != 0x60 {
			// Recursive and sub types (the GC proposal) number types
			// differently.
			return 0, fmt.Errorf("type form 0x%x: %w", form, ErrUnsupported)
		}
		for range 2 { // params, results
			for range r.count() {
				r.valType()
			}
		}
		if r.err != nil {
			return 0, r.err
		}
	}
	return n, r.end()
}

func countImports(b []byte) (funcs, globals uint32, err error) {
	r := &reader{b: b}
	for range r.count() {
		r.name()
		r.name()
		switch kind := r.byte(); kind {
		case 0x00: // func
			r.u32()
			funcs++
		case 0x01: // table
			r.valType()
			r.limits()
		case 0x02: // memory
			r.limits()
		case 0x03: // global
			r.valType()
			r.byte()
			globals++
		case 0x04: // tag
			r.byte()
			r.u32()
		default:
			return 0, 0, fmt.Errorf("import kind 0x%x: %w", kind, ErrUnsupported)
		}
		if r.err != nil {
			return 0, 0, r.err
		}
	}
	return funcs, globals, r.end()
}

func countGlobals(b []byte) (uint32, error) {
	r := &reader{b: b}
	n := r.count()
	var m module // only to read the init expressions
	var scratch []byte
	for range n {
		r.valType()
		r.byte()
		scratch = m.rewriteExpr(r, scratch[:0], false)
		if r.err != nil {
			return 0, r.err
		}
	}
	return n, r.end()
}

func (m *module) rewriteExports(b []byte) ([]byte, error) {
	r := &reader{b: b}
	n := r.count()
	out := appendU32(nil, n)
	for range n {
		out = appendName(out, r.name())
		kind := r.byte()
		idx := r.u32()
		switch kind {
		case 0x00:
			idx = m.funcIndex(idx)
		case 0x03:
			if idx >= m.globals() {
				return nil, fmt.Errorf("export of global %d, which is not defined", idx)
			}
		}
		out = append(out, kind)
		out = appendU32(out, idx)
	}
	return out, r.end()
}

func (m *module) rewriteElements(b []byte) ([]byte, error) {
	r := &reader{b: b}
	n := r.count()
	out := appendU32(nil, n)
	for range n {
		flags := r.u32()
		out = appendU32(out, flags)
		if flags > 7 {
			return nil, fmt.Errorf("element segment flags %d: %w", flags, ErrUnsupported)
		}
		active, explicitTable, exprs := flags&1 == 0, flags&2 != 0, flags&4 != 0
		if active && explicitTable {
			out = appendU32(out, r.u32())
		}
		if active {
			out = m.rewriteExpr(r, out, false)
		}
		if !active || explicitTable { // elemkind or reftype
			if exprs {
				start := r.pos
				r.valType()
				out = append(out, b[start:r.pos]...)
			} else {
				out = append(out, r.byte())
			}
		}
		count := r.count()
		out = appendU32(out, count)
		for range count {
			if exprs {
				out = m.rewriteExpr(r, out, false)
			} else {
				out = appendU32(out, m.funcIndex(r.u32()))
			}
		}
		if r.err != nil {
			return nil, r.err
		}
	}
	return out, r.end()
}

// checkData reads the data section for the global indices its offset
// expressions name; the section itself is kept as it is.
func (m *module) checkData(b []byte) error {
	r := &reader{b: b}
	var scratch []byte
	for range r.count() {
		switch mode := r.u32(); mode {
		case 0:
			scratch = m.rewriteExpr(r, scratch[:0], false)
		case 1:
		case 2:
			r.u32()
			scratch = m.rewriteExpr(r, scratch[:0], false)
		default:
			return fmt.Errorf("data segment mode %d: %w", mode, ErrUnsupported)
		}
		r.bytes(int(r.u32()))
		if r.err != nil {
			return r.err
		}
	}
	return r.end()
}

func (m *module) rewriteCode(b []byte) ([]byte, error) {
	r := &reader{b: b}
	n := r.count()
	out := make([]byte, 0, len(b)+len(b)/8)
	out = appendU32(out, n+1)
	var body []byte
	for i := range n {
		size := r.u32()
		fr := &reader{b: r.bytes(int(size))}
		if r.err != nil {
			return nil, r.err
		}
		body = body[:0]
		for range fr.count() { // local declarations
			fr.u32()
			fr.valType()
		}
		body = append(body, fr.b[:fr.pos]...)
		if !startsWithLoop(fr) {
			body = m.appendTickCall(body) // function entry
		}
		body = m.rewriteExpr(fr, body, true)
		if fr.err == nil && !fr.done() {
			fr.err = errors.New("bytes after the end of the function body")
		}
		if fr.err != nil {
			return nil, fmt.Errorf("function %d: %w", m.importedFuncs+i, fr.err)
		}
		out = appendU32(out, uint32(len(body)))
		out = append(out, body...)
	}
	return m.appendTick(out), r.end()
}

// appendTick appends the code section entry of the tick function.
func (m *module) appendTick(out []byte) []byte {
	body := m.appendCheck([]byte{0x00}, 1) // no locals
	body = append(body, 0x0b)
	out = appendU32(out, uint32(len(body)))
	return append(out, body...)
}

// startsWithLoop reports whether the code at r's position enters a loop
// before it does anything else (through blocks only, which fall into their
// body): the loop's own check then also counts the function's entry, and a
// second check would only slow the function down.
func startsWithLoop(r *reader) bool {
	peek := *r
	for peek.err == nil && !peek.done() {
		switch peek.byte() {
		case 0x02: // block
			peek.blockType()
		case 0x03: // loop
			peek.blockType()
			return peek.err == nil
		default:
			return false
		}
	}
	return false
}

// rewriteCustom drops DWARF sections, whose code offsets the rewrite
// invalidates (a stack trace would point at the wrong lines), and moves the
// function indices of the name section. A name section it cannot read is
// dropped: names only decorate stack traces.
func (m *module) rewriteCustom(b []byte) []byte {
	r := &reader{b: b}
	name := r.name()
	if r.err != nil || bytes.HasPrefix(name, []byte(".debug_")) {
		return nil
	}
	if string(name) != "name" {
		return b
	}
	out := appendName(nil, name)
	for !r.done() {
		id := r.byte()
		sub := &reader{b: r.bytes(int(r.u32()))}
		if r.err != nil {
			return nil
		}
		var body []byte
		switch id {
		case 1: // function names: map from function index
			n := sub.count()
			body = appendU32(body, n)
			for range n {
				body = appendU32(body, m.movedFunc(sub.u32()))
				body = appendName(body, sub.name())
			}
		case 2, 3: // local and label names: maps of maps, by function index
			n := sub.count()
			body = appendU32(body, n)
			for range n {
				body = appendU32(body, m.movedFunc(sub.u32()))
				inner := sub.count()
				body = appendU32(body, inner)
				for range inner {
					body = appendU32(body, sub.u32())
					body = appendName(body, sub.name())
				}
			}
		default:
			body = sub.b
			sub.pos = len(sub.b)
		}
		if sub.err != nil || !sub.done() {
			return nil
		}
		out = append(out, id)
		out = appendU32(out, uint32(len(body)))
		out = append(out, body...)
	}
	return out
}

// appendTickCall appends a call of the tick function, which takes one unit
// from the budget. Function entries and loop heads call it rather than
// holding the check inline: the Go guest's echo ran 60-75 µs that way and
// 105-125 µs with the check inline at both (BenchmarkExtismFloor), the
// inline code making every function larger.
func (m *module) appendTickCall(out []byte) []byte {
	out = append(out, 0x10)
	return appendU32(out, m.tickFunc())
}

// appendCheck appends code that takes cost from the budget and calls the
// host when it is spent:
//
//	global.set $budget (i32.sub (global.get $budget) (i32.const cost))
//	(if (i32.le_s (global.get $budget) (i32.const 0))
//	  (then (global.set $budget (call $check))))
//
// It leaves the operand stack as it found it, so it fits before any
// instruction.
func (m *module) appendCheck(out []byte, cost int32) []byte {
	g, f := m.counter(), m.checkFunc()
	out = append(out, 0x23)
	out = appendU32(out, g)
	out = append(out, 0x41)
	out = appendS32(out, cost)
	out = append(out, 0x6b, 0x24) // i32.sub, global.set
	out = appendU32(out, g)
	out = append(out, 0x23)
	out = appendU32(out, g)
	out = append(out, 0x41, 0x00, 0x4c, 0x04, 0x40, 0x10) // i32.const 0, i32.le_s, if, call
	out = appendU32(out, f)
	out = append(out, 0x24) // global.set
	out = appendU32(out, g)
	return append(out, 0x0b) // end
}
