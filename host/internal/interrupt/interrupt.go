// Package interrupt makes a Wasm module stoppable by its host at a low
// cost per call.
//
// Instrument rewrites a module so that every function entry, every loop
// iteration and every run of straightRun instructions without either
// takes one unit from a budget held in a new mutable global, with a check
// inline (a "tick"); bulk memory and table operations take in proportion
// to what they move, in chunks (bulk.go). When the
// budget runs out the module calls an imported
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
// The rewrite reads code exactly as wazero 1.12 does for
// api.CoreFeaturesV2 and refuses what it does not understand, or what
// wazero could read otherwise than the standard (ErrUnsupported): a caller
// refuses such a module, or runs it under wazero's own checks when told
// to. InstrumentKernel does the same for Extism's kernel, with fuel in
// place of the host's check.
package interrupt

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/mcphost/mcphost/host/internal/wasmbin"
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

	// reservedPrefix begins the names of the modules the host provides to
	// instrumented code; a plugin may not import from them itself.
	reservedPrefix = "mcphost:"
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

// section is a section of the module: its id and body.
type section = wasmbin.Section

// module holds what the rewrite needs to know about the original module.
type module struct {
	types           uint32 // entries in the type section
	importedFuncs   uint32
	importedGlobals uint32
	definedGlobals  uint32
	definedFuncs    uint32
	tables          uint32 // defined tables
	// growsTables is set when the code holds a table.grow: only then may
	// a table outgrow its minimum, and only then does its maximum depend
	// on Limits.TableElements (rewriteTables).
	growsTables bool
	// globalRefs and funcRefs are one more than the highest global and
	// function index the module names.
	globalRefs, funcRefs uint32
	limits               Limits
	// kernel selects InstrumentKernel's checks; refillFunc is then the
	// function (original index) whose entry fills the fuel.
	kernel     bool
	refillFunc uint32
	// shape is what rewriteExpr found of the code it read (limits.go).
	shape codeShape

	// What the bulk helpers and the stack accounting read of the module
	// (bulk.go, stack.go): each type's signature, each defined function's
	// type, each defined table's reference type.
	sigs        []funcSig
	importTypes []uint32
	funcTypes   []uint32
	tableTypes  []byte
	// frameValues counts the values the function being rewritten makes
	// beyond one a byte (the results of its calls, its vectors), for its
	// frame estimate.
	frameValues uint64
	// extra holds the functions and types the rewrite of the code adds.
	extra extras
	// stackCode is a buffer for the stack accounting's rewrite of a body.
	stackCode []byte
}

// Limits bound what a module may hold besides its memory, which the
// runtime bounds.
type Limits struct {
	// TableElements is the most elements the module's tables may hold
	// between them (each costs the host 8 bytes, outside the memory cap):
	// the rewrite gives every table a maximum of its share, which
	// table.grow cannot pass, and refuses a table whose minimum is larger.
	TableElements uint32
	// StackBytes, when above 0, bounds the call stack (estimated bytes of
	// wazero stack) a call may use; past it the call traps in the host's
	// stack function. At most MaxStackBytes. See stack.go.
	StackBytes uint32
	// StackReport is the stack use from which the module first calls the
	// host's stack function (capped at StackBytes): a call that goes
	// deeper is reported, and the host discards its instance after it.
	StackReport uint32
}

// globals is the number of globals of the original module.
func (m *module) globals() uint32 { return m.importedGlobals + m.definedGlobals }

// checkFunc is the index of the imported host function in the rewritten
// module, counter the index of the budget global, added after the
// original globals, and fuel that of the kernel's fuel, after it.
func (m *module) checkFunc() uint32 { return m.importedFuncs }
func (m *module) counter() uint32   { return m.globals() }
func (m *module) fuel() uint32      { return m.globals() + 1 }

// importName is the module and name of the function the rewrite imports.
func (m *module) importName() (module, name string) {
	if m.kernel {
		return "wasi_snapshot_preview1", "sched_yield"
	}
	return ImportModule, ImportName
}

// funcIndex maps a function index of the original module to the rewritten
// one: the new imports come after the original imports, so every function
// defined in the module moves up by their number.
func (m *module) funcIndex(i uint32) uint32 {
	m.funcRefs = max(m.funcRefs, i+1)
	return m.movedFunc(i)
}

// movedFunc is funcIndex for the name section, which may name functions
// that do not exist.
func (m *module) movedFunc(i uint32) uint32 {
	if i >= m.importedFuncs {
		return i + m.addedImports()
	}
	return i
}

// Instrument returns a copy of the Wasm module b with the budget checks
// described in the package documentation. It does not validate b: the
// result is only as valid as the input, and the runtime validates it. It
// does refuse a module that names a global or a function it does not
// define, since after the rewrite that index would reach what was added.
func Instrument(b []byte, limits Limits) ([]byte, error) {
	return instrument(b, module{limits: limits, refillFunc: noFunc})
}

// InstrumentKernel rewrites Extism's kernel module (extism-runtime.wasm),
// which Extism calls from Go with contexts that carry no deadline (and
// without the values its host functions need), so it cannot ask the host
// whether its call has ended. Instead, every time its budget is spent it
// calls WASI's sched_yield, which returns to Go (so that the goroutine
// can be preempted and the garbage collector never waits on it), and
// takes one from a fuel of KernelFuel budgets that its export "reset" --
// which Extism calls before every call of a plugin -- fills again, unless
// the call returns 1 (WASI's returns 0; a host that redirects the import
// to its own function may return 1 where it checks a deadline itself). A
// kernel call that spends it all traps: without such a host, the kernel
// calls between two resets run at most KernelFuel*Budget loop iterations
// and function entries, whatever a plugin wrote into the kernel's memory.
func InstrumentKernel(b []byte) ([]byte, error) {
	return instrument(b, module{kernel: true, refillFunc: noFunc})
}

// KernelFuel is how many budgets the instrumented kernel may spend
// between two resets where nothing checks a deadline (its yield returns
// 0): 2^26 loop iterations and function entries, about 0.3 s, a backstop
// for the kernel calls Extism makes from Go without a deadline. mcphost
// checks the call's deadline at every yield of a call that has one, and
// spends no fuel there (package plugin, kernelYield).
const KernelFuel = 1 << 16

// noFunc stands for no function index.
const noFunc = ^uint32(0)

func instrument(b []byte, m module) ([]byte, error) {
	if len(b) < 8 || !bytes.Equal(b[:4], []byte("\x00asm")) {
		return nil, errors.New("not a WebAssembly module")
	}
	if m.limits.StackBytes > MaxStackBytes {
		return nil, fmt.Errorf("a call stack limit of %d bytes is over the most the rewrite counts, %d", m.limits.StackBytes, MaxStackBytes)
	}
	if !bytes.Equal(b[4:8], []byte{1, 0, 0, 0}) {
		return nil, fmt.Errorf("binary format version %x: %w", b[4:8], ErrUnsupported)
	}
	sections, err := readSections(b[8:])
	if err != nil {
		return nil, err
	}
	for _, s := range sections {
		var err error
		switch s.ID {
		case secType:
			m.types, err = countTypes(s.Body)
			if err == nil {
				m.sigs = readSigs(s.Body)
			}
		case secImport:
			m.importedFuncs, m.importedGlobals, err = countImports(s.Body, m.types)
			if err == nil {
				m.importTypes = readImportTypes(s.Body)
			}
		case secTable:
			m.tables, err = countTables(s.Body)
			m.tableTypes = readTableTypes(s.Body)
		case secGlobal:
			m.definedGlobals, err = countGlobals(s.Body)
		case secFunction:
			m.definedFuncs, err = countFunctions(s.Body, m.types)
			if err == nil {
				m.funcTypes = readFuncTypes(s.Body)
			}
		}
		if err != nil {
			return nil, fmt.Errorf("section %d: %w", s.ID, err)
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
				out = wasmbin.AppendSection(out, id, body)
			}
		}
	}
	// The type and function sections are rewritten last: they get the
	// helpers that the rewrite of the code adds (helpers.go). So is the
	// table section: its maximums depend on whether the code grows a table.
	last := func(id byte) bool { return id == secType || id == secFunction || id == secTable }
	bodies := make([][]byte, len(sections))
	for i, s := range sections {
		if last(s.ID) {
			continue
		}
		if bodies[i], err = m.rewrite(s); err != nil {
			return nil, fmt.Errorf("section %d: %w", s.ID, err)
		}
	}
	for i, s := range sections {
		if s.ID != secCustom {
			emitMissing(sectionOrder[s.ID])
			emitted[s.ID] = true
		}
		body := bodies[i]
		if last(s.ID) {
			if body, err = m.rewrite(s); err != nil {
				return nil, fmt.Errorf("section %d: %w", s.ID, err)
			}
		}
		if body != nil {
			out = wasmbin.AppendSection(out, s.ID, body)
		}
	}
	emitMissing(len(sectionOrder) + 1)
	// An undefined index would now reach what the rewrite added: the budget
	// global, which the module could set to never be checked.
	if m.globalRefs > m.globals() {
		return nil, fmt.Errorf("the module names global %d, which it does not define", m.globalRefs-1)
	}
	if m.funcRefs > m.importedFuncs+m.definedFuncs {
		return nil, fmt.Errorf("the module names function %d, which it does not define", m.funcRefs-1)
	}
	return out, nil
}

// readSections splits the module's body into sections, refusing, in
// order, one that is cut short or that the rewrite does not know.
func readSections(b []byte) ([]section, error) {
	r := newReader(b)
	var sections []section
	for !r.Done() {
		s, err := r.Section()
		if err != nil {
			return nil, err
		}
		if _, known := sectionOrder[s.ID]; (!known && s.ID != secCustom) || s.ID == secTag {
			return nil, fmt.Errorf("section id %d: %w", s.ID, ErrUnsupported)
		}
		sections = append(sections, s)
	}
	return sections, nil
}

// rewrite returns the new body of section s; nil drops the section.
func (m *module) rewrite(s section) ([]byte, error) {
	switch s.ID {
	case secCustom:
		return m.rewriteCustom(s.Body), nil
	case secType, secImport, secFunction, secGlobal:
		return m.rewriteSection(s.ID, s.Body)
	case secTable:
		return m.rewriteTables(s.Body)
	case secExport:
		return m.rewriteExports(s.Body)
	case secStart:
		r := newReader(s.Body)
		f := r.U32()
		if err := r.End(); err != nil {
			return nil, err
		}
		return wasmbin.AppendU32(nil, m.funcIndex(f)), nil
	case secElement:
		return m.rewriteElements(s.Body)
	case secCode:
		return m.rewriteCode(s.Body)
	case secData:
		return s.Body, m.checkData(s.Body)
	case secDataCount:
		r := newReader(s.Body)
		r.U32()
		return s.Body, r.End()
	default:
		return s.Body, nil
	}
}

// rewriteSection appends what the rewrite adds to the type, import,
// function, global or code section whose original body is body (nil when
// the module has none): the import's type, the import, the budget global
// (and the kernel's fuel). The function and code sections get nothing: a
// module without them gets them empty. The counts in body were read by
// Instrument.
func (m *module) rewriteSection(id byte, body []byte) ([]byte, error) {
	r := newReader(body)
	var count uint32
	if body != nil {
		count = r.U32()
	}
	var added uint32
	switch id {
	case secType:
		added = m.addedImports() + uint32(len(m.extra.types))
	case secImport:
		added = m.addedImports()
	case secFunction:
		added = uint32(len(m.extra.funcs))
	case secGlobal:
		switch {
		case m.kernel:
			added = 2 // the budget, the fuel
		case m.stackOn():
			added = 3 // the budget, the stack in use, its mark
		default:
			added = 1
		}
	}
	out := wasmbin.AppendU32(nil, count+added)
	switch id {
	case secType:
		out = append(out, body[r.Pos:]...)
		out = append(out, 0x60, 0x00, 0x01, 0x7f) // func () -> i32
		if m.stackOn() {
			out = append(out, 0x60, 0x01, 0x7f, 0x01, 0x7f) // func (i32) -> i32
		}
		out = m.appendExtraTypes(out)
	case secImport:
		out = append(out, body[r.Pos:]...)
		module, name := m.importName()
		out = wasmbin.AppendName(out, module)
		out = wasmbin.AppendName(out, name)
		out = append(out, 0x00)
		out = wasmbin.AppendU32(out, m.types) // the type appended above
		if m.stackOn() {
			out = wasmbin.AppendName(out, ImportModule)
			out = wasmbin.AppendName(out, StackImportName)
			out = append(out, 0x00)
			out = wasmbin.AppendU32(out, m.types+1)
		}
	case secFunction:
		out = append(out, body[r.Pos:]...)
		out = m.appendExtraFuncs(out)
	case secCode:
		// A code section the module has goes to rewriteCode, so only a
		// missing one comes here, and is emitted empty.
		out = append(out, body[r.Pos:]...)
	case secGlobal:
		// The entries were checked by countGlobals; their init expressions
		// may hold ref.func, whose index moves.
		for range count {
			start := r.Pos
			r.valType()
			r.mutability()
			out = append(out, body[start:r.Pos]...)
			out = m.rewriteExpr(r, out, false)
		}
		out = append(out, 0x7f, 0x01, 0x41) // mut i32, i32.const
		out = appendS32(out, Budget)
		out = append(out, 0x0b)
		if m.kernel {
			out = append(out, 0x7f, 0x01, 0x41)
			out = appendS32(out, KernelFuel)
			out = append(out, 0x0b)
		}
		if m.stackOn() {
			out = append(out, 0x7f, 0x01, 0x41, 0x00, 0x0b, 0x7f, 0x01, 0x41) // used = 0, mark
			out = appendS32(out, int32(m.stackStart()))
			out = append(out, 0x0b)
		}
	}
	return out, r.Err
}

func countTypes(b []byte) (uint32, error) {
	r := newReader(b)
	n := r.Count()
	for range n {
		if form := r.Byte(); form != 0x60 {
			// Recursive and sub types (the GC proposal) number types
			// differently.
			return 0, fmt.Errorf("type form 0x%x: %w", form, ErrUnsupported)
		}
		for range 2 { // params, results
			for range r.Count() {
				r.valType()
			}
		}
		if r.Err != nil {
			return 0, r.Err
		}
	}
	return n, r.End()
}

func countImports(b []byte, types uint32) (funcs, globals uint32, err error) {
	r := newReader(b)
	for range r.Count() {
		module := r.Name()
		r.Name()
		if strings.HasPrefix(string(module), reservedPrefix) {
			return 0, 0, fmt.Errorf("imports from %q, a module name reserved for the host", module)
		}
		switch kind := r.Byte(); kind {
		case 0x00: // func
			if t := r.U32(); t >= types && r.Err == nil {
				return 0, 0, fmt.Errorf("import of type %d, which is not defined", t)
			}
			funcs++
		case 0x01: // table
			// Nothing provides one, and its size would escape Limits.
			return 0, 0, fmt.Errorf("imports a table from %q, which the host does not provide", module)
		case 0x02: // memory
			r.limits()
		case 0x03: // global
			r.valType()
			r.mutability()
			globals++
		default:
			return 0, 0, fmt.Errorf("import kind 0x%x: %w", kind, ErrUnsupported)
		}
		if r.Err != nil {
			return 0, 0, r.Err
		}
	}
	return funcs, globals, r.End()
}

// countFunctions counts the functions the function section declares, and
// checks their types: wazero 1.12 validates a call before it checks the
// type of the function called, and an undefined one makes it panic.
func countFunctions(b []byte, types uint32) (uint32, error) {
	r := newReader(b)
	n := r.Count()
	for i := range n {
		if t := r.U32(); t >= types && r.Err == nil {
			return 0, fmt.Errorf("function %d has type %d, which is not defined", i, t)
		}
	}
	return n, r.End()
}

// countTables counts the tables the table section defines; rewriteTables
// reads them.
func countTables(b []byte) (uint32, error) {
	r := newReader(b)
	return r.Count(), r.Err
}

// rewriteTables gives every table a maximum of at most its share of
// Limits.TableElements, and refuses a table that starts out larger. When
// the code holds no table.grow, no table can outgrow its minimum, and that
// is its maximum: the rewritten module, and so its compiled code, is then
// the same whatever memory_mb (hence TableElements) is, and plugins of one
// file with different memory caps share it.
func (m *module) rewriteTables(b []byte) ([]byte, error) {
	share := m.limits.TableElements / max(m.tables, 1)
	r := newReader(b)
	n := r.Count()
	out := wasmbin.AppendU32(nil, n)
	for i := range n {
		start := r.Pos
		r.refType()
		out = append(out, b[start:r.Pos]...)
		flags := r.Byte()
		if flags > 1 && r.Err == nil {
			return nil, fmt.Errorf("table %d: limits flags 0x%x: %w", i, flags, ErrUnsupported)
		}
		minimum, maximum := r.U32(), share
		if flags == 1 {
			maximum = min(r.U32(), share)
		}
		if r.Err != nil {
			return nil, r.Err
		}
		if minimum > maximum {
			return nil, fmt.Errorf("table %d starts with %d elements; the cap is %d (memory_mb bounds tables too)", i, minimum, share)
		}
		if !m.growsTables {
			maximum = minimum
		}
		out = append(out, 0x01)
		out = wasmbin.AppendU32(out, minimum)
		out = wasmbin.AppendU32(out, maximum)
	}
	return out, r.End()
}

func countGlobals(b []byte) (uint32, error) {
	r := newReader(b)
	n := r.Count()
	var m module // only to read the init expressions
	var scratch []byte
	for range n {
		r.valType()
		r.mutability()
		scratch = m.rewriteExpr(r, scratch[:0], false)
		if r.Err != nil {
			return 0, r.Err
		}
	}
	return n, r.End()
}

func (m *module) rewriteExports(b []byte) ([]byte, error) {
	r := newReader(b)
	n := r.Count()
	out := wasmbin.AppendU32(nil, n)
	for range n {
		name := r.Name()
		out = wasmbin.AppendName(out, name)
		kind := r.Byte()
		idx := r.U32()
		switch kind {
		case 0x00:
			if m.kernel && string(name) == "reset" {
				m.refillFunc = idx
			}
			idx = m.funcIndex(idx)
		case 0x03:
			if idx >= m.globals() {
				return nil, fmt.Errorf("export of global %d, which is not defined", idx)
			}
		}
		out = append(out, kind)
		out = wasmbin.AppendU32(out, idx)
	}
	return out, r.End()
}

func (m *module) rewriteElements(b []byte) ([]byte, error) {
	r := newReader(b)
	n := r.Count()
	out := wasmbin.AppendU32(nil, n)
	for range n {
		flags := r.U32()
		out = wasmbin.AppendU32(out, flags)
		if flags > 7 {
			return nil, fmt.Errorf("element segment flags %d: %w", flags, ErrUnsupported)
		}
		active, explicitTable, exprs := flags&1 == 0, flags&2 != 0, flags&4 != 0
		if active && explicitTable {
			out = wasmbin.AppendU32(out, r.U32())
		}
		if active {
			out = m.rewriteExpr(r, out, false)
		}
		if !active || explicitTable { // elemkind or reftype
			if exprs {
				start := r.Pos
				r.valType()
				out = append(out, b[start:r.Pos]...)
			} else {
				out = append(out, r.Byte())
			}
		}
		count := r.Count()
		out = wasmbin.AppendU32(out, count)
		for range count {
			if exprs {
				out = m.rewriteExpr(r, out, false)
			} else {
				out = wasmbin.AppendU32(out, m.funcIndex(r.U32()))
			}
		}
		if r.Err != nil {
			return nil, r.Err
		}
	}
	return out, r.End()
}

// checkData reads the data section for the global indices its offset
// expressions name; the section itself is kept as it is.
func (m *module) checkData(b []byte) error {
	r := newReader(b)
	var scratch []byte
	for range r.Count() {
		switch mode := r.U32(); mode {
		case 0:
			scratch = m.rewriteExpr(r, scratch[:0], false)
		case 1:
		case 2:
			r.U32()
			scratch = m.rewriteExpr(r, scratch[:0], false)
		default:
			return fmt.Errorf("data segment mode %d: %w", mode, ErrUnsupported)
		}
		r.Bytes(int(r.U32()))
		if r.Err != nil {
			return r.Err
		}
	}
	return r.End()
}

func (m *module) rewriteCode(b []byte) ([]byte, error) {
	r := newReader(b)
	n := r.Count()
	out := make([]byte, 0, len(b)+len(b)/8)
	var body []byte
	for i := range n {
		size := r.U32()
		fr := newReader(r.Bytes(int(size)))
		if r.Err != nil {
			return nil, r.Err
		}
		body = body[:0]
		var locals uint64
		for range fr.Count() { // local declarations
			n := uint64(fr.U32())
			fr.valType()
			if fr.Err == nil && fr.B[fr.Pos-1] == typeV128 {
				n *= v128Slots
			}
			locals += n
		}
		body = append(body, fr.B[:fr.Pos]...)
		// With the stack accounting, the rewritten code goes into code
		// and after the entry, which needs what the rewrite counts.
		code := body
		if m.stackOn() {
			code = m.stackCode[:0]
			m.frameValues = 0
		}
		if m.importedFuncs+i == m.refillFunc {
			body = append(body, 0x41)
			body = appendS32(body, KernelFuel)
			body = append(body, 0x24)
			body = wasmbin.AppendU32(body, m.fuel())
		}
		if !startsWithLoop(fr) {
			code = m.appendTick(code) // function entry
		}
		code = m.rewriteExpr(fr, code, true)
		if m.stackOn() {
			m.stackCode = code
			frame := m.frameCost(i, locals, int(size), m.frameValues)
			body = m.appendStackEntry(body, i, frame)
			body = append(body, code...)
			// The body's end closed the block appendStackEntry opened.
			body = m.appendStackExit(body, frame)
			body = append(body, opBlockEnd)
		} else {
			body = code
		}
		if fr.Err == nil && !fr.Done() {
			fr.Err = errors.New("bytes after the end of the function body")
		}
		if fr.Err != nil {
			return nil, fmt.Errorf("function %d: %w", m.importedFuncs+i, fr.Err)
		}
		out = wasmbin.AppendU32(out, uint32(len(body)))
		out = append(out, body...)
	}
	if err := r.End(); err != nil {
		return nil, err
	}
	out = m.appendExtraCode(out)
	head := wasmbin.AppendU32(nil, n+uint32(len(m.extra.funcs)))
	return append(head, out...), nil
}

// startsWithLoop reports whether the code at r's position enters a loop
// before it does anything else (through blocks only, which fall into their
// body): the loop's own check then also counts the function's entry, and a
// second check would only slow the function down.
func startsWithLoop(r *reader) bool {
	peek := *r
	for peek.Err == nil && !peek.Done() {
		switch peek.Byte() {
		case 0x02: // block
			peek.blockType()
		case 0x03: // loop
			peek.blockType()
			return peek.Err == nil
		default:
			return false
		}
	}
	return false
}

// shippedDescription is the name of the custom section that holds a
// plugin's description (shipped.SectionName).
const shippedDescription = "mcphost.description"

// jsSource is the name of the custom section that holds a JavaScript
// plugin's source (jsplugin.SectionName): the host hands it to the engine
// through a host function, so that every JavaScript plugin on the same
// engine compiles to the same code.
const jsSource = "mcphost.js"

// skillsSection is the name of the custom section that holds the Agent
// Skills a plugin ships (skills.SectionName): the host reads them from the
// module file, so they need not be compiled, and a new skill leaves the
// compiled code (and its cache entry) as it was.
const skillsSection = "mcphost.skills"

// rewriteCustom drops DWARF sections, whose code offsets the rewrite
// invalidates (a stack trace would point at the wrong lines), and the
// plugin's shipped description (package shipped: the host reads it from
// the module as given, and the code compiled need not change with it) and
// a JavaScript plugin's source (package jsplugin, read likewise) and the
// Agent Skills a plugin ships (package skills, likewise), and moves the
// function indices of the name section. A name section it
// cannot read is dropped: names only decorate stack traces.
func (m *module) rewriteCustom(b []byte) []byte {
	r := newReader(b)
	name := r.Name()
	if r.Err != nil || bytes.HasPrefix(name, []byte(".debug_")) || string(name) == shippedDescription || string(name) == jsSource || string(name) == skillsSection {
		return nil
	}
	if string(name) != "name" {
		return b
	}
	out := wasmbin.AppendName(nil, name)
	for !r.Done() {
		id := r.Byte()
		sub := newReader(r.Bytes(int(r.U32())))
		if r.Err != nil {
			return nil
		}
		var body []byte
		switch id {
		case 1: // function names: map from function index
			n := sub.Count()
			body = wasmbin.AppendU32(body, n)
			for range n {
				body = wasmbin.AppendU32(body, m.movedFunc(sub.U32()))
				body = wasmbin.AppendName(body, sub.Name())
			}
		case 2, 3: // local and label names: maps of maps, by function index
			n := sub.Count()
			body = wasmbin.AppendU32(body, n)
			for range n {
				body = wasmbin.AppendU32(body, m.movedFunc(sub.U32()))
				inner := sub.Count()
				body = wasmbin.AppendU32(body, inner)
				for range inner {
					body = wasmbin.AppendU32(body, sub.U32())
					body = wasmbin.AppendName(body, sub.Name())
				}
			}
		default:
			body = sub.B
			sub.Pos = len(sub.B)
		}
		if sub.Err != nil || !sub.Done() {
			return nil
		}
		out = append(out, id)
		out = wasmbin.AppendU32(out, uint32(len(body)))
		out = append(out, body...)
	}
	return out
}

// appendTick appends a tick: the check of appendCheck, inline, taking one
// unit. Until stop 23 a tick was a call of a function the rewrite added;
// inline, a Go guest's echo hop is 11-12% shorter and a 4 KiB echo 20%
// (BenchmarkWasmHop, same run, both builds of the rewrite), for a module
// 3% larger that compiles 5% slower (RATIONALE.md, "Interrupts").
func (m *module) appendTick(out []byte) []byte { return m.appendCheck(out, 1) }

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
	g := m.counter()
	out = append(out, 0x23)
	out = wasmbin.AppendU32(out, g)
	out = append(out, 0x41)
	out = appendS32(out, cost)
	out = append(out, 0x6b, 0x24) // i32.sub, global.set
	out = wasmbin.AppendU32(out, g)
	out = append(out, 0x23)
	out = wasmbin.AppendU32(out, g)
	out = append(out, 0x41, 0x00, 0x4c, 0x04, 0x40) // i32.const 0, i32.le_s, if
	out = m.appendRefill(out)
	return append(out, 0x0b) // end
}

// appendRefill appends what runs when the budget is spent. In a plugin:
//
//	(global.set $budget (call $check))
//
// In the kernel:
//
//	(global.set $fuel (i32.sub (i32.add (global.get $fuel) (call $sched_yield)) (i32.const 1)))
//	(global.set $budget (i32.const Budget))
//	(if (i32.lt_s (global.get $fuel) (i32.const 0)) (then unreachable))
//
// WASI's sched_yield returns 0 (success), so each budget costs a unit of
// fuel; a host that answers the import itself may return 1 to keep the
// fuel, when it bounds the call by other means (a deadline it checks).
func (m *module) appendRefill(out []byte) []byte {
	g, f := m.counter(), m.checkFunc()
	out = append(out, 0x10) // call
	out = wasmbin.AppendU32(out, f)
	if !m.kernel {
		out = append(out, 0x24) // global.set
		return wasmbin.AppendU32(out, g)
	}
	fuel := m.fuel()
	out = append(out, 0x23) // global.get
	out = wasmbin.AppendU32(out, fuel)
	out = append(out, 0x6a, 0x41, 0x01, 0x6b, 0x24) // i32.add, i32.const 1, i32.sub, global.set
	out = wasmbin.AppendU32(out, fuel)
	out = append(out, 0x41) // i32.const
	out = appendS32(out, Budget)
	out = append(out, 0x24) // global.set
	out = wasmbin.AppendU32(out, g)
	out = append(out, 0x23)
	out = wasmbin.AppendU32(out, fuel)
	return append(out, 0x41, 0x00, 0x48, 0x04, 0x40, 0x00, 0x0b) // i32.const 0, i32.lt_s, if, unreachable, end
}

// StripCustomSections returns a copy of the module b without its custom
// sections (names, DWARF, producers: decoration only). A module the host
// runs without the rewrite is stripped, because wazero 1.12 decodes the
// name section trusting its counts: 29 bytes of name section made it
// allocate 8 GiB, which no recover catches. (The rewrite drops a name
// section it cannot read whole, which bounds every count by the bytes
// that follow it.)
func StripCustomSections(b []byte) ([]byte, error) {
	if len(b) < 8 || !bytes.Equal(b[:4], []byte("\x00asm")) {
		return nil, errors.New("not a WebAssembly module")
	}
	sections, err := readSections(b[8:])
	if err != nil {
		return nil, err
	}
	out := append(make([]byte, 0, len(b)), b[:8]...)
	for _, s := range sections {
		if s.ID != secCustom {
			out = wasmbin.AppendSection(out, s.ID, s.Body)
		}
	}
	return out, nil
}
