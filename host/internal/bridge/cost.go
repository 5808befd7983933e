package bridge

import (
	"errors"
	"fmt"
	"reflect"
)

// What one validation may cost. jsonschema-go's validate recurses once per
// subschema it applies, has no budget of its own, and builds its errors as
// it unwinds: each level wraps the message below it, and anyOf joins the
// messages of all its branches, printing the value being validated in
// each. A 28 KB schema nesting anyOf branches that all fail made one
// validation of a one-property value take 3 s and allocate 5.8 GiB, for a
// 62 MB error. So before validate runs, bound estimates its work and the
// memory its errors may take, from the schema and the value, and refuses
// the value unchecked if either exceeds the budget.
const (
	// maxValidationDepth bounds how deep validation recurses.
	maxValidationDepth = 128
	// A validation may take workBase + workPerUnit × the value's size in
	// units: one per value, one per 64 bytes of strings. A unit of work is
	// about one subschema applied to a value. The work of an ordinary
	// schema is linear in the value; this refuses a schema that multiplies
	// it (allOf [{$ref a}, {$ref a}] nested doubles it at each level).
	workBase    = 100_000
	workPerUnit = 64
	// A validation's errors may allocate errorBase + errorPerUnit × the
	// value's size in units, in bytes: an item that fails one branch of an
	// anyOf on its way to another costs a few hundred bytes of error.
	errorBase    = 4 << 20
	errorPerUnit = 2 << 10
)

var (
	errTooCostly = errors.New("would take too much work (the schema applies too many subschemas to it)")
	errTooDeep   = fmt.Errorf("would nest deeper than %d subschemas", maxValidationDepth)
)

// meter counts down the work a validation may take, and remembers the
// sizes of the value's objects and arrays (each is measured once, however
// often it is met).
type meter struct {
	work  int
	sizes map[sizeKey]size
}

type sizeKey struct {
	p uintptr
	n int
}

// size is a value's size in units (see workPerUnit) and its printed size
// in bytes (roughly what fmt's %v makes of it, as validate's errors do).
type size struct{ units, bytes int }

// estimate is what applying a subschema to a value may cost in memory:
// the bytes of the error message it returns if it fails, and the bytes it
// allocates in all when it succeeds and when it fails.
type estimate struct{ msg, ok, fail int }

// bound estimates validating v against n and refuses v if the work or the
// memory of the errors could exceed the budget.
func (n *node) bound(v any) error {
	e, sz, err := n.estimate(v)
	if err != nil {
		return err
	}
	if most := errorBase + errorPerUnit*sz.units; max(e.ok, e.fail) > most {
		return fmt.Errorf("could take too much memory (its errors could take %d MiB, at most %d MiB)", max(e.ok, e.fail)>>20, most>>20)
	}
	return nil
}

// estimate estimates validating v against n, within v's work budget.
func (n *node) estimate(v any) (estimate, size, error) {
	m := &meter{sizes: map[sizeKey]size{}}
	sz := m.size(v)
	m.work = workBase + workPerUnit*sz.units
	e, err := n.cost(v, 1, m)
	return e, sz, err
}

// cost charges m for applying n to v as jsonschema-go's validate would,
// and estimates its memory. It over-approximates: it visits both then and
// else, every anyOf and oneOf branch, unevaluated* as if nothing else
// evaluated anything, and never stops at a failure; and it assumes every
// message as long as it could be.
func (n *node) cost(v any, depth int, m *meter) (estimate, error) {
	if depth > maxValidationDepth {
		return estimate{}, errTooDeep
	}
	m.work -= 1 + n.work
	own := n.text
	if n.printsValue {
		own = sum(own, m.size(v).bytes)
	}
	switch v := v.(type) {
	case string:
		if n.scansString {
			m.work -= len(v) / 64
		}
	case []any:
		if n.unique {
			m.work -= m.size(v).units
		}
	case map[string]any:
		if n.scansProps {
			m.work -= len(v)
		}
		if len(n.patterns) > 0 {
			for name := range v {
				m.work -= len(n.patterns) * (1 + len(name)/64)
			}
		}
		if n.listsExtra {
			for name := range v {
				own = sum(own, len(name)+3)
			}
		}
	}
	if m.work < 0 {
		return estimate{}, errTooCostly
	}

	// must: their errors become this one's, and a failure stops the
	// others (a loop over items or properties stops at the first that
	// fails). anyOf: all their messages are joined into this one's.
	// may: their errors are dropped, but built all the same.
	var mustOK, mustWorse, mustMsg, anyMsg, dropped int
	must := func(c *node, v any) error {
		e, err := c.cost(v, depth+1, m)
		mustOK = sum(mustOK, e.ok)
		mustWorse = max(mustWorse, e.fail-e.ok)
		mustMsg = max(mustMsg, e.msg)
		return err
	}
	may := func(c *node, v any) (estimate, error) {
		e, err := c.cost(v, depth+1, m)
		dropped = sum(dropped, max(e.ok, e.fail))
		return e, err
	}
	for _, c := range n.must {
		if err := must(c, v); err != nil {
			return estimate{}, err
		}
	}
	for _, c := range n.anyOf {
		e, err := may(c, v)
		if err != nil {
			return estimate{}, err
		}
		anyMsg = sum(anyMsg, e.msg)
	}
	for _, c := range n.may {
		if _, err := may(c, v); err != nil {
			return estimate{}, err
		}
	}
	switch v := v.(type) {
	case []any:
		for i, item := range v {
			if i < len(n.positional) {
				for _, c := range n.positional[i] {
					if err := must(c, item); err != nil {
						return estimate{}, err
					}
				}
			}
			for _, c := range n.everyItem {
				if err := must(c, item); err != nil {
					return estimate{}, err
				}
			}
			if n.contains != nil {
				if _, err := may(n.contains, item); err != nil {
					return estimate{}, err
				}
			}
		}
	case map[string]any:
		if !n.scansProps {
			// Only properties: validate looks up each of the schema's.
			for name, c := range n.props {
				if item, ok := v[name]; ok {
					if err := must(c, item); err != nil {
						return estimate{}, err
					}
				}
			}
			break
		}
		for name, item := range v {
			matched := false
			if c, ok := n.props[name]; ok {
				matched = true
				if err := must(c, item); err != nil {
					return estimate{}, err
				}
			}
			for _, p := range n.patterns {
				if p.re.MatchString(name) {
					matched = true
					if err := must(p.n, item); err != nil {
						return estimate{}, err
					}
				}
			}
			if !matched && n.additional != nil {
				if err := must(n.additional, item); err != nil {
					return estimate{}, err
				}
			}
			for _, c := range n.everyValue {
				if err := must(c, item); err != nil {
					return estimate{}, err
				}
			}
			if n.names != nil {
				if err := must(n.names, name); err != nil {
					return estimate{}, err
				}
			}
		}
	}
	msg := sum(own, max(mustMsg, anyMsg))
	return estimate{
		msg: msg,
		ok:  sum(mustOK, dropped),
		// A failure formats its message about three times (the error,
		// validate's wrapping, fmt's %v of a joined error).
		fail: sum(sum(3*min(msg, maxEstimate/3), mustOK), sum(mustWorse, dropped)),
	}, nil
}

// maxEstimate caps estimates, so that sums cannot overflow.
const maxEstimate = 1 << 60

func sum(a, b int) int {
	if a > maxEstimate-b {
		return maxEstimate
	}
	return a + b
}

// size measures v, once per object or array.
func (m *meter) size(v any) size {
	var key sizeKey
	switch x := v.(type) {
	case []any:
		key = sizeKey{reflect.ValueOf(x).Pointer(), len(x)}
	case map[string]any:
		key = sizeKey{reflect.ValueOf(x).Pointer(), len(x)}
	default:
		return size{valueSize(v), printedSize(v)}
	}
	if s, ok := m.sizes[key]; ok {
		return s
	}
	s := size{units: 1, bytes: 2}
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			es := m.size(e)
			s.units, s.bytes = s.units+es.units, s.bytes+es.bytes+1
		}
	case map[string]any:
		s.bytes += len("map")
		for k, e := range x {
			es := m.size(e)
			s.units, s.bytes = s.units+1+len(k)/64+es.units, s.bytes+len(k)+2+es.bytes
		}
	}
	m.sizes[key] = s
	return s
}

// valueSize is the size of a decoded JSON value in units: one per value,
// and one per 64 bytes of strings.
func valueSize(v any) int {
	switch v := v.(type) {
	case string:
		return 1 + len(v)/64
	case []any:
		n := 1
		for _, e := range v {
			n += valueSize(e)
		}
		return n
	case map[string]any:
		n := 1
		for k, e := range v {
			n += 1 + len(k)/64 + valueSize(e)
		}
		return n
	default:
		return 1
	}
}

// printedSize is about how many bytes fmt's %v (or %q) prints of a
// decoded JSON value.
func printedSize(v any) int {
	switch v := v.(type) {
	case string:
		return len(v) + 2
	case []any:
		n := 2
		for _, e := range v {
			n += printedSize(e) + 1
		}
		return n
	case map[string]any:
		n := 5
		for k, e := range v {
			n += len(k) + 2 + printedSize(e)
		}
		return n
	case nil, bool:
		return 5
	default:
		return 24
	}
}
