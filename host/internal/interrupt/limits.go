package interrupt

import (
	"bytes"
	"errors"
	"fmt"
)

// ModuleLimits bound what a module may declare. CheckLimits checks a
// module against them before anything compiles it: wazero trusts the
// module it decodes (it allocates a function's declared locals up front,
// so 2^32-1 locals in a 1 KB file end the process), and the time it takes
// to compile grows faster than the module with some shapes (nesting
// depth; locals read across many branches; one listener trampoline per
// type). A zero field is no limit.
//
// The defaults (DefaultModuleLimits) are the WebAssembly JS-API's
// embedding limits, which every browser enforces, tightened where the
// host needs it; RATIONALE.md ("Module limits") gives the measurements
// behind each.
type ModuleLimits struct {
	// ModuleBytes caps the size of the whole module.
	ModuleBytes uint64
	// Types caps the entries of the type section.
	Types uint32
	// Params and Results cap each function type.
	Params, Results uint32
	// Functions caps the functions, imported and defined.
	Functions uint32
	// Imports and Exports cap the import and export sections.
	Imports, Exports uint32
	// Globals caps the globals, imported and defined.
	Globals uint32
	// Tables caps the tables a module defines.
	Tables uint32
	// DataSegments and ElementSegments cap the data and element sections.
	DataSegments, ElementSegments uint32
	// Elements caps the elements of all element segments together: wazero
	// holds each as an index when it decodes the module, and again as a
	// reference in every instance.
	Elements uint32
	// FunctionBodyBytes caps one function's body; CodeBytes the code
	// section as a whole.
	FunctionBodyBytes, CodeBytes uint32
	// FunctionLocals caps one function's locals, its parameters included;
	// TotalLocals the locals of every function together.
	FunctionLocals uint32
	TotalLocals    uint64
	// NestingDepth caps the blocks, loops and ifs open at once in one
	// function.
	NestingDepth uint32
	// BranchCost caps, per function, its control points (blocks, loops,
	// ifs, elses and branches) squared, times its locals (parameters
	// included) plus 4: wazero's compiler walks chains of blocks for every
	// local it reads and for the function's dominator tree, and a function
	// of 1,000 branches and 100 locals, or of 10,000 branches and none,
	// took it seconds to compile. Real modules stay below 1/7 of the
	// default (RATIONALE.md, "Module limits").
	BranchCost uint64
}

// DefaultModuleLimits are the limits the host applies to every plugin.
var DefaultModuleLimits = ModuleLimits{
	ModuleBytes:       256 << 20,
	Types:             2048,
	Params:            1000,
	Results:           1000,
	Functions:         200_000,
	Imports:           10_000,
	Exports:           10_000,
	Globals:           10_000,
	Tables:            100,
	DataSegments:      100_000,
	ElementSegments:   100_000,
	Elements:          1_000_000,
	FunctionBodyBytes: 7_654_321,
	CodeBytes:         128 << 20,
	FunctionLocals:    50_000,
	TotalLocals:       4_000_000,
	NestingDepth:      2048,
	BranchCost:        1 << 27,
}

// LimitError is a module that exceeds one of its ModuleLimits.
type LimitError struct {
	// Where names the part of the module, e.g. "function 12" (its index
	// among all functions, imported ones first) or "type section".
	Where string
	// What is what was counted, e.g. "locals (parameters included)".
	What string
	// Limit names the limit, as ModuleLimits and the docs do.
	Limit string
	// Got is what the module declares (at least: counting stops at the
	// first excess), Max the limit.
	Got, Max uint64
}

// Error implements error.
func (e *LimitError) Error() string {
	return fmt.Sprintf("%s: %d %s, over the limit of %d (%s)", e.Where, e.Got, e.What, e.Max, e.Limit)
}

// ModuleStats is what CheckLimits counted, for reports and tests.
type ModuleStats struct {
	Types, Functions, Imports, Exports, Globals        uint32
	MaxParams, MaxResults                              uint32
	MaxFunctionBodyBytes, CodeBytes                    uint32
	MaxFunctionLocals                                  uint32
	TotalLocals                                        uint64
	MaxNestingDepth                                    uint32
	DataSegments, ElementSegments, Tables, MaxBranches uint32
	MaxBranchCost                                      uint64
}

// codeShape is what decoding one function body found that bears on the
// cost of compiling it (rewriteExpr counts it).
type codeShape struct {
	maxDepth int
	branches int // blocks, loops and ifs opened, elses, br, br_if, br_table
	limit    int // the most blocks open at once; 0 is no limit
}

// open records a block, loop or if opened at depth. Past limit (when not
// 0) it stops the decoding: a body of millions of nested blocks is
// refused at the first block too many, before the decoder's own record
// of open blocks grows with it.
func (s *codeShape) open(r *reader, depth int) {
	s.branches++
	s.maxDepth = max(s.maxDepth, depth)
	if s.limit > 0 && depth > s.limit {
		r.Fail(errNestingDepth)
	}
}

// errNestingDepth stops the decoding of a body nested deeper than its
// limit (codeShape.limit).
var errNestingDepth = errors.New("nesting depth over the limit")

// CheckLimits checks the module b against l, reading every section
// without allocating in proportion to anything the module declares, and
// decoding every function body. It returns a *LimitError for the first
// limit exceeded, or an error for a module it cannot read; a body whose
// instructions it cannot decode (ErrUnsupported) is bounded instead by a
// count of the bytes that could open a block, which is never less than
// its nesting depth or its blocks.
func CheckLimits(b []byte, l ModuleLimits) (ModuleStats, error) {
	var st ModuleStats
	if len(b) < 8 || !bytes.Equal(b[:4], []byte("\x00asm")) {
		return st, errors.New("not a WebAssembly module")
	}
	if !bytes.Equal(b[4:8], []byte{1, 0, 0, 0}) {
		return st, fmt.Errorf("binary format version %x: %w", b[4:8], ErrUnsupported)
	}
	if err := over("module", "bytes", "module bytes", uint64(len(b)), l.ModuleBytes); err != nil {
		return st, err
	}
	sections, err := readSections(b[8:])
	if err != nil {
		return st, err
	}
	c := limitChecker{l: l, st: &st}
	for _, s := range sections {
		if err := c.section(s); err != nil {
			return st, err
		}
	}
	return st, nil
}

// limitChecker checks one module's sections in order.
type limitChecker struct {
	l          ModuleLimits
	st         *ModuleStats
	typeParams []uint32 // parameters of each type
	funcTypes  []uint32 // type of each defined function
	imported   uint32   // imported functions
}

// over returns a *LimitError when got exceeds a non-zero max.
func over(where, what, limit string, got, max uint64) error {
	if max != 0 && got > max {
		return &LimitError{Where: where, What: what, Limit: limit, Got: got, Max: max}
	}
	return nil
}

func (c *limitChecker) section(s section) error {
	r := newReader(s.Body)
	switch s.ID {
	case secType:
		return c.types(r)
	case secImport:
		return c.imports(r)
	case secFunction:
		n := r.Count()
		if err := over("function section", "functions (imported ones included)", "functions", uint64(c.imported)+uint64(n), uint64(c.l.Functions)); err != nil {
			return err
		}
		c.funcTypes = make([]uint32, 0, n)
		for range n {
			c.funcTypes = append(c.funcTypes, r.U32())
		}
		c.st.Functions = c.imported + n
		return r.End()
	case secTable:
		n := r.Count()
		c.st.Tables = n
		return over("table section", "tables", "tables", uint64(n), uint64(c.l.Tables))
	case secGlobal:
		n := r.Count()
		c.st.Globals += n
		return over("global section", "globals (imported ones included)", "globals", uint64(c.st.Globals), uint64(c.l.Globals))
	case secExport:
		n := r.Count()
		c.st.Exports = n
		return over("export section", "exports", "exports", uint64(n), uint64(c.l.Exports))
	case secElement:
		return c.elements(r)
	case secData:
		n := r.Count()
		c.st.DataSegments = n
		return over("data section", "segments", "data segments", uint64(n), uint64(c.l.DataSegments))
	case secCode:
		return c.code(r)
	}
	return r.Err
}

// elements checks the element section: its segments, and their elements
// together. The segments are read as the rewrite reads them
// (rewriteElements).
func (c *limitChecker) elements(r *reader) error {
	n := r.Count()
	c.st.ElementSegments = n
	if err := over("element section", "segments", "element segments", uint64(n), uint64(c.l.ElementSegments)); err != nil {
		return err
	}
	var m module // only to read constant expressions
	var scratch []byte
	var total uint64
	for i := range n {
		flags := r.U32()
		if flags > 7 && r.Err == nil {
			return fmt.Errorf("element segment %d: flags %d: %w", i, flags, ErrUnsupported)
		}
		active, explicitTable, exprs := flags&1 == 0, flags&2 != 0, flags&4 != 0
		if active && explicitTable {
			r.U32()
		}
		if active {
			scratch = m.rewriteExpr(r, scratch[:0], false)
		}
		if !active || explicitTable {
			if exprs {
				r.valType()
			} else {
				r.Byte()
			}
		}
		count := r.Count()
		total += uint64(count)
		if err := over("element section", "elements in all segments", "elements", total, uint64(c.l.Elements)); err != nil {
			return err
		}
		for range count {
			if exprs {
				scratch = m.rewriteExpr(r, scratch[:0], false)
			} else {
				r.U32()
			}
		}
		if r.Err != nil {
			return fmt.Errorf("element segment %d: %w", i, r.Err)
		}
	}
	return r.End()
}

func (c *limitChecker) types(r *reader) error {
	n := r.Count()
	c.st.Types = n
	if err := over("type section", "types", "types", uint64(n), uint64(c.l.Types)); err != nil {
		return err
	}
	c.typeParams = make([]uint32, 0, n)
	for i := range n {
		if form := r.Byte(); form != 0x60 && r.Err == nil {
			return fmt.Errorf("type %d: form 0x%x: %w", i, form, ErrUnsupported)
		}
		params := r.Count()
		if err := over(fmt.Sprintf("type %d", i), "parameters", "params", uint64(params), uint64(c.l.Params)); err != nil {
			return err
		}
		for range params {
			r.valType()
		}
		results := r.Count()
		if err := over(fmt.Sprintf("type %d", i), "results", "results", uint64(results), uint64(c.l.Results)); err != nil {
			return err
		}
		for range results {
			r.valType()
		}
		if r.Err != nil {
			return fmt.Errorf("type %d: %w", i, r.Err)
		}
		c.typeParams = append(c.typeParams, params)
		c.st.MaxParams = max(c.st.MaxParams, params)
		c.st.MaxResults = max(c.st.MaxResults, results)
	}
	return r.End()
}

func (c *limitChecker) imports(r *reader) error {
	n := r.Count()
	c.st.Imports = n
	if err := over("import section", "imports", "imports", uint64(n), uint64(c.l.Imports)); err != nil {
		return err
	}
	for range n {
		r.Name()
		r.Name()
		switch kind := r.Byte(); kind {
		case 0x00:
			r.U32()
			c.imported++
		case 0x01:
			r.refType()
			r.tableLimits()
		case 0x02:
			r.limits()
		case 0x03:
			r.valType()
			r.mutability()
			c.st.Globals++
		default:
			if r.Err == nil {
				return fmt.Errorf("import kind 0x%x: %w", kind, ErrUnsupported)
			}
		}
		if r.Err != nil {
			return fmt.Errorf("import section: %w", r.Err)
		}
	}
	c.st.Functions = c.imported
	if err := over("import section", "functions", "functions", uint64(c.imported), uint64(c.l.Functions)); err != nil {
		return err
	}
	return r.End()
}

// tableLimits reads a table's limits (flags, minimum, maximum).
func (r *reader) tableLimits() {
	flags := r.Byte()
	r.U32()
	if flags&1 != 0 {
		r.U32()
	}
}

func (c *limitChecker) code(r *reader) error {
	c.st.CodeBytes = uint32(len(r.B))
	if err := over("code section", "bytes", "code bytes", uint64(len(r.B)), uint64(c.l.CodeBytes)); err != nil {
		return err
	}
	n := r.Count()
	if int(n) != len(c.funcTypes) {
		return fmt.Errorf("code section: %d bodies for %d functions", n, len(c.funcTypes))
	}
	var scratch []byte
	for i := range n {
		index := c.imported + i
		where := fmt.Sprintf("function %d", index)
		size := r.U32()
		if err := over(where, "bytes of body", "function body bytes", uint64(size), uint64(c.l.FunctionBodyBytes)); err != nil {
			return err
		}
		body := newReader(r.Bytes(int(size)))
		if r.Err != nil {
			return fmt.Errorf("%s: %w", where, r.Err)
		}
		c.st.MaxFunctionBodyBytes = max(c.st.MaxFunctionBodyBytes, size)
		var locals uint64
		if t := c.funcTypes[i]; int(t) < len(c.typeParams) {
			locals = uint64(c.typeParams[t])
		} else {
			return fmt.Errorf("%s has type %d, which is not defined", where, t)
		}
		for range body.Count() {
			locals += uint64(body.U32())
			body.valType()
			if body.Err != nil {
				return fmt.Errorf("%s: locals: %w", where, body.Err)
			}
			if err := over(where, "locals (parameters included)", "function locals", locals, uint64(c.l.FunctionLocals)); err != nil {
				return err
			}
		}
		c.st.MaxFunctionLocals = max(c.st.MaxFunctionLocals, uint32(locals))
		c.st.TotalLocals += locals
		if err := over(where, "locals in all functions so far", "total locals", c.st.TotalLocals, c.l.TotalLocals); err != nil {
			return err
		}
		depth, branches, err := shapeOf(body, &scratch, int(c.l.NestingDepth))
		if err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
		c.st.MaxNestingDepth = max(c.st.MaxNestingDepth, uint32(depth))
		c.st.MaxBranches = max(c.st.MaxBranches, uint32(branches))
		if err := over(where, "blocks open at once", "nesting depth", uint64(depth), uint64(c.l.NestingDepth)); err != nil {
			return err
		}
		cost := uint64(branches) * uint64(branches) * (locals + 4)
		c.st.MaxBranchCost = max(c.st.MaxBranchCost, cost)
		if err := over(where, fmt.Sprintf("as branch cost (%d control points squared x (%d locals + 4))", branches, locals), "branch cost", cost, c.l.BranchCost); err != nil {
			return err
		}
	}
	return r.End()
}

// shapeOf decodes the instructions of a function body, r positioned after
// its locals, for its nesting depth and control points. A body with an
// instruction the decoding does not know is bounded by its bytes instead:
// every block, loop, if, else and branch begins with one of the bytes
// 0x02-0x05 or 0x0c-0x0e, so their number bounds both.
func shapeOf(r *reader, scratch *[]byte, depthLimit int) (depth, branches int, err error) {
	m := module{shape: codeShape{limit: depthLimit}}
	start := r.Pos
	*scratch = m.rewriteExpr(r, (*scratch)[:0], false)
	if r.Err == nil && !r.Done() {
		r.Err = errors.New("bytes after the end of the function body")
	}
	switch {
	case r.Err == nil, errors.Is(r.Err, errNestingDepth):
		return m.shape.maxDepth, m.shape.branches, nil
	case errors.Is(r.Err, ErrUnsupported):
		var opens, points int
		for _, b := range r.B[start:] {
			switch b {
			case 0x02, 0x03, 0x04:
				opens++
				points++
			case 0x05, 0x0c, 0x0d, 0x0e:
				points++
			}
		}
		return opens, points, nil
	default:
		return 0, 0, r.Err
	}
}
