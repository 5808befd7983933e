package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
)

// What the reference does the way JavaScript and zod do it, done the same
// way here: coercing arguments, ordering an object's keys, quoting a
// string in JSON.stringify, measuring a string in UTF-16 units.

// booleanProblem is the message of the reference's coercedBoolean for a
// string that is neither "true" nor "false" (in any case).
func booleanProblem(val, at string) string {
	return fmt.Sprintf("Expected boolean or \"true\"/\"false\" string, received \"%s\" at %s", val, at)
}

// parseThought decodes the arguments as the reference's zod schema would
// after the host checked them against the same schema as JSON Schema (so
// every present value has a declared type): unknown keys are dropped,
// booleans may be "true"/"false" strings in any case. problems are zod's
// messages for strings that are not booleans, in the schema's order; err
// is for arguments the host should not have let through.
func parseThought(args json.RawMessage) (t thought, problems []string, err error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(args, &fields); err != nil {
		return t, nil, fmt.Errorf("arguments: %w", err)
	}
	if err := decodeField(fields, "thought", &t.Thought, true); err != nil {
		return t, nil, err
	}
	boolean := func(name string, to *bool, required bool) error {
		raw, ok := fields[name]
		if !ok {
			if required {
				return fmt.Errorf("%s is missing", name)
			}
			return nil
		}
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		switch v := v.(type) {
		case bool:
			*to = v
		case string:
			switch strings.ToLower(v) {
			case "true":
				*to = true
			case "false":
				*to = false
			default:
				problems = append(problems, booleanProblem(v, name))
			}
		default:
			return fmt.Errorf("%s is neither a boolean nor a string", name)
		}
		return nil
	}
	var needsMore bool // checked, as the reference does, and not used
	steps := []func() error{
		func() error { return boolean("nextThoughtNeeded", &t.NextThoughtNeeded, true) },
		func() (err error) { t.ThoughtNumber, err = requiredInteger(fields, "thoughtNumber"); return err },
		func() (err error) { t.TotalThoughts, err = requiredInteger(fields, "totalThoughts"); return err },
		func() error { return boolean("isRevision", &t.IsRevision, false) },
		func() (err error) { t.RevisesThought, err = positiveInteger(fields, "revisesThought"); return err },
		func() (err error) {
			t.BranchFromThought, err = positiveInteger(fields, "branchFromThought")
			return err
		},
		func() error { return boolean("needsMoreThoughts", &needsMore, false) },
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return t, nil, err
		}
	}
	if _, ok := fields["branchId"]; ok {
		t.BranchID = new(string)
		if err := decodeField(fields, "branchId", t.BranchID, true); err != nil {
			return t, nil, err
		}
	}
	return t, problems, nil
}

// decodeField decodes the string fields[name] into to.
func decodeField(fields map[string]json.RawMessage, name string, to *string, required bool) error {
	raw, ok := fields[name]
	if !ok {
		if required {
			return fmt.Errorf("%s is missing", name)
		}
		return nil
	}
	if err := json.Unmarshal(raw, to); err != nil {
		return fmt.Errorf("%s is not a string", name)
	}
	return nil
}

// requiredInteger is positiveInteger of a field that must be there.
func requiredInteger(fields map[string]json.RawMessage, name string) (int64, error) {
	n, err := positiveInteger(fields, name)
	if err == nil && n == nil {
		err = fmt.Errorf("%s is missing", name)
	}
	if err != nil {
		return 0, err
	}
	return *n, nil
}

// positiveInteger decodes fields[name], an integer from 1 to 2^53-1 (nil
// when absent).
func positiveInteger(fields map[string]json.RawMessage, name string) (*int64, error) {
	raw, ok := fields[name]
	if !ok {
		return nil, nil
	}
	var f float64
	if err := json.Unmarshal(raw, &f); err != nil {
		return nil, fmt.Errorf("%s is not a number", name)
	}
	if f != math.Trunc(f) || f < 1 || f > 1<<53-1 {
		return nil, errors.New(name + " is not an integer from 1 to 9007199254740991")
	}
	n := int64(f)
	return &n, nil
}

// objectPrototype are the properties every JavaScript object inherits
// (Node 22): the reference's this.branches[id] finds them for these IDs.
var objectPrototype = map[string]bool{
	"constructor": true, "__defineGetter__": true, "__defineSetter__": true, "hasOwnProperty": true,
	"__lookupGetter__": true, "__lookupSetter__": true, "isPrototypeOf": true, "propertyIsEnumerable": true,
	"toString": true, "valueOf": true, "__proto__": true, "toLocaleString": true,
}

// objectKeys is Object.keys of an object whose keys were added in the
// order of ids: array indices (canonical decimal integers below 2^32-1)
// first, in ascending order, then the others in the order they were added.
func objectKeys(ids []string) []string {
	var indices []uint64
	index := map[uint64]string{}
	keys := make([]string, 0, len(ids))
	for _, id := range ids {
		if n, ok := arrayIndex(id); ok {
			indices = append(indices, n)
			index[n] = id
		}
	}
	slices.Sort(indices)
	for _, n := range indices {
		keys = append(keys, index[n])
	}
	for _, id := range ids {
		if _, ok := arrayIndex(id); !ok {
			keys = append(keys, id)
		}
	}
	return keys
}

// arrayIndex reports whether s is an array index of ECMAScript: the
// canonical decimal form of an integer from 0 to 2^32-2.
func arrayIndex(s string) (uint64, bool) {
	if s == "" || len(s) > 10 || (len(s) > 1 && s[0] == '0') {
		return 0, false
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil || n >= 1<<32-1 {
		return 0, false
	}
	return n, true
}

// jsString is s quoted as JSON.stringify quotes it: only '"', '\\' and
// control characters escaped (lower-case hex), the rest as it is.
func jsString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if r < 0x20 {
				fmt.Fprintf(&b, `\u%04x`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// length16 is s.length in JavaScript: its UTF-16 code units.
func length16(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// formatThought is the reference's formatThought, without chalk's colours
// (which it leaves out too when stderr is not a terminal).
func formatThought(t thought) string {
	prefix, context := "💭 Thought", ""
	switch {
	case t.IsRevision:
		prefix, context = "🔄 Revision", " (revising thought "+jsValue(t.RevisesThought)+")"
	case t.BranchFromThought != nil:
		id := "undefined"
		if t.BranchID != nil {
			id = *t.BranchID
		}
		prefix, context = "🌿 Branch", " (from thought "+itoa(*t.BranchFromThought)+", ID: "+id+")"
	}
	header := prefix + " " + itoa(t.ThoughtNumber) + "/" + itoa(t.TotalThoughts) + context
	width := max(length16(header), length16(t.Thought)) + 4
	border := strings.Repeat("─", width)
	pad := max(width-2-length16(t.Thought), 0)
	return "\n┌" + border + "┐\n│ " + header + " │\n├" + border + "┤\n│ " + t.Thought + strings.Repeat(" ", pad) + " │\n└" + border + "┘"
}

// jsValue is an optional number as a template literal shows it.
func jsValue(n *int64) string {
	if n == nil {
		return "undefined"
	}
	return itoa(*n)
}
