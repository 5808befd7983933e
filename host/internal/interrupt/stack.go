package interrupt

import (
	"github.com/mcphost/mcphost/host/internal/wasmbin"
)

// Call stacks. wazero runs compiled code on a stack it allocates on the Go
// heap for each function handle it calls, doubles it when a call needs
// more, up to ~400 MB, and keeps it at its largest for the life of the
// instance: 16 concurrent calls recursing 2,500 frames deep took a host
// from 40 MiB to over 600 MiB, outside memory_mb and the memory budget,
// and the idle instances kept it.
//
// With Limits.StackBytes set, the rewrite keeps the stack a call uses in a
// global: every function adds an estimate of its frame (frameCost) at its
// entry and takes it off on its way out. To have one way out, the body is
// wrapped in a block of the function's result type: a branch to the
// function's label now ends that block, and return becomes such a branch,
// so every exit that returns passes the one decrement after it. (A trap
// skips it; the host discards an instance after any trap.)
//
// When the use passes a mark, held in a second global and first
// Limits.StackReport, the function calls the host's stack function
// (ImportModule, StackImportName) with it, which traps when it is over
// the limit and otherwise returns the next mark, at most the limit: an
// instance that went that deep is one the host discards after its call,
// so that its large stack is not kept idle. A call that stays below the
// mark never leaves compiled code for it.

// StackImportName names the host function an instrumented module with
// stack accounting imports from ImportModule. Its type is (i32) -> i32:
// it is given the stack in use (estimated bytes) past the mark, traps when
// that is over the limit, and returns the next mark.
const StackImportName = "stack"

// MaxStackBytes is the largest Limits.StackBytes: it keeps the sums of the
// accounting far from overflowing an i32.
const MaxStackBytes = 1 << 30

// Frame estimate, in bytes (see frameCost).
const (
	frameBase     = 128 // return address, frame pointer, saved registers, alignment
	frameSlot     = 32  // per parameter, local and result
	frameBodyByte = 2   // per byte of body: the values it computes
	frameResult   = 40  // per frameValues: a parameter or result of a function it calls
	// A vector value takes v128Results frameValues (a result, or what a
	// vector instruction computes), a vector local v128Slots frameSlots:
	// wazero 1.12 took ~175 bytes of frame for every vector live across a
	// call.
	v128Results = 8
	v128Slots   = 6
)

// stackOn reports whether the rewrite adds the stack accounting.
func (m *module) stackOn() bool { return m.limits.StackBytes > 0 && !m.kernel }

// addedImports is how many functions the rewrite imports: the check, and
// the stack function when the accounting is on.
func (m *module) addedImports() uint32 {
	if m.stackOn() {
		return 2
	}
	return 1
}

// stackFunc is the index of the imported stack function, and stackUsed
// and stackMark those of the accounting's globals, after the budget's.
func (m *module) stackFunc() uint32  { return m.importedFuncs + 1 }
func (m *module) stackUsed() uint32  { return m.globals() + 1 }
func (m *module) stackMark() uint32  { return m.globals() + 2 }
func (m *module) stackStart() uint32 { return min(m.limits.StackReport, m.limits.StackBytes) }

// funcSig is what the stack accounting needs of a function type.
type funcSig struct {
	params     uint32
	paramTypes []byte // value types
	results    []byte
}

// readSigs reads the type section (already checked by countTypes).
func readSigs(b []byte) []funcSig {
	r := newReader(b)
	n := r.Count()
	sigs := make([]funcSig, 0, n)
	for range n {
		r.Byte() // 0x60
		var s funcSig
		s.params = r.Count()
		pstart := r.Pos
		for range s.params {
			r.valType()
		}
		s.paramTypes = r.B[pstart:r.Pos]
		k := r.Count()
		start := r.Pos
		for range k {
			r.valType()
		}
		s.results = r.B[start:r.Pos]
		if r.Err != nil {
			return nil
		}
		sigs = append(sigs, s)
	}
	return sigs
}

// readFuncTypes reads the type index of every defined function (already
// checked by countFunctions).
func readFuncTypes(b []byte) []uint32 {
	r := newReader(b)
	n := r.Count()
	types := make([]uint32, 0, n)
	for range n {
		types = append(types, r.U32())
	}
	return types
}

// readTableTypes reads the reference type of every defined table.
func readTableTypes(b []byte) []byte {
	r := newReader(b)
	n := r.Count()
	types := make([]byte, 0, n)
	for range n {
		types = append(types, r.Byte())
		if flags := r.Byte(); flags == 1 {
			r.U32()
		}
		r.U32()
		if r.Err != nil {
			return nil
		}
	}
	return types
}

// sig returns the type of defined function i, and false when the module
// does not say (it is then invalid, and wazero refuses it).
func (m *module) sig(i uint32) (funcSig, bool) {
	if i >= uint32(len(m.funcTypes)) || m.funcTypes[i] >= uint32(len(m.sigs)) {
		return funcSig{}, false
	}
	return m.sigs[m.funcTypes[i]], true
}

// frameCost estimates the bytes of wazero stack a frame of defined
// function i takes, from its parameters, locals, results, body size and
// the results of the calls it makes (frameValues, counted by rewriteExpr),
// rounded up to 16 and never more than the limit plus one (a function
// whose frame alone is over the limit traps at its entry). wazero gives
// every value its register allocator spills a slot of its own, never
// reused, and passes arguments and results on the stack past a few
// registers, so a frame grows with the values that live across calls: the
// locals, what the body computes, what the calls return. The constants
// cover the shapes measured against wazero 1.12 on amd64
// (TestFrameCostCoversWazero, RATIONALE.md "Call stacks").
func (m *module) frameCost(i uint32, locals uint64, bodySize int, frameValues uint64) uint32 {
	s, _ := m.sig(i)
	slots := locals + uint64(len(s.results))
	for _, p := range s.paramTypes {
		if p == typeV128 {
			slots += v128Slots
		} else {
			slots++
		}
	}
	cost := uint64(frameBase) + frameSlot*slots +
		frameBodyByte*uint64(bodySize) + frameResult*frameValues
	cost = (cost + 15) &^ 15
	return uint32(min(cost, uint64(m.limits.StackBytes)+1))
}

// countResults adds to m.frameValues the parameters and results of a call
// of a function of type t, as frameCost weighs them.
func (m *module) countResults(t uint32) {
	if !m.stackOn() || t >= uint32(len(m.sigs)) {
		return
	}
	for _, v := range append(m.sigs[t].paramTypes[:len(m.sigs[t].paramTypes):len(m.sigs[t].paramTypes)], m.sigs[t].results...) {
		if v == typeV128 {
			m.frameValues += v128Results
		} else {
			m.frameValues++
		}
	}
}

// countV128 counts a vector instruction's value for the frame estimate.
func (m *module) countV128() {
	if m.stackOn() {
		m.frameValues += v128Results
	}
}

// typeOf returns the type index of function f (original index: the
// module's imports, then its definitions), or false.
func (m *module) typeOf(f uint32) (uint32, bool) {
	if f < uint32(len(m.importTypes)) {
		return m.importTypes[f], true
	}
	f -= uint32(len(m.importTypes))
	if f < uint32(len(m.funcTypes)) {
		return m.funcTypes[f], true
	}
	return 0, false
}

// readImportTypes reads the type index of every imported function (the
// section was checked by countImports).
func readImportTypes(b []byte) []uint32 {
	r := newReader(b)
	var types []uint32
	for range r.Count() {
		r.Name()
		r.Name()
		switch r.Byte() {
		case 0x00:
			types = append(types, r.U32())
		case 0x02:
			r.limits()
		case 0x03:
			r.valType()
			r.mutability()
		default:
			return nil
		}
		if r.Err != nil {
			return nil
		}
	}
	return types
}

// appendStackEntry appends the accounting at a function's entry:
//
//	global.set $used (i32.add (global.get $used) (i32.const cost))
//	(if (i32.gt_u (global.get $used) (global.get $mark))
//	  (then (global.set $mark (call $stack (global.get $used)))))
//	block (type of the function's results)
func (m *module) appendStackEntry(out []byte, i, cost uint32) []byte {
	used, mark := m.stackUsed(), m.stackMark()
	out = append(out, opGlobalGet)
	out = wasmbin.AppendU32(out, used)
	out = append(out, opI32Const)
	out = appendS32(out, int32(cost))
	out = append(out, opI32Add, opGlobalSet)
	out = wasmbin.AppendU32(out, used)
	out = append(out, opGlobalGet)
	out = wasmbin.AppendU32(out, used)
	out = append(out, opGlobalGet)
	out = wasmbin.AppendU32(out, mark)
	out = append(out, 0x4b, opIfEmpty, emptyBlock, opGlobalGet) // i32.gt_u
	out = wasmbin.AppendU32(out, used)
	out = append(out, 0x10) // call
	out = wasmbin.AppendU32(out, m.stackFunc())
	out = append(out, opGlobalSet)
	out = wasmbin.AppendU32(out, mark)
	out = append(out, opBlockEnd, 0x02) // block
	return m.appendBlockType(out, i)
}

// appendStackExit appends, after the end of the block appendStackEntry
// opened, the decrement that every return passes:
//
//	global.set $used (i32.sub (global.get $used) (i32.const cost))
func (m *module) appendStackExit(out []byte, cost uint32) []byte {
	used := m.stackUsed()
	out = append(out, opGlobalGet)
	out = wasmbin.AppendU32(out, used)
	out = append(out, opI32Const)
	out = appendS32(out, int32(cost))
	out = append(out, opI32Sub, opGlobalSet)
	return wasmbin.AppendU32(out, used)
}

// appendBlockType appends the block type of defined function i's results:
// empty, one value type, or a type index -- the function's own type when it
// has no parameters, else one the rewrite adds.
func (m *module) appendBlockType(out []byte, i uint32) []byte {
	s, _ := m.sig(i)
	switch {
	case len(s.results) == 0:
		return append(out, emptyBlock)
	case len(s.results) == 1:
		return append(out, s.results[0])
	case s.params == 0:
		return appendS32(out, int32(m.funcTypes[i]))
	default:
		return appendS32(out, int32(m.extraType(funcType(nil, s.results))))
	}
}
