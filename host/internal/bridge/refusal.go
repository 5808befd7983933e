package bridge

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Refusal is an item a plugin listed that the host leaves out, and why.
// Its Error is the line the host logs; its fields say the same for a
// report (`mcphost validate`, `plugin test`, `plugin inspect`).
type Refusal struct {
	// Export is the list export that listed the item ("list_tools", …).
	Export string
	// Kind is "tool", "prompt", "resource" or "template".
	Kind string
	// Name is the item's name (tools, prompts) or URI (resources,
	// templates) as listed, "" when it has none. It may be long or hide
	// characters: quote it (strconv.QuoteToASCII) before showing it.
	Name string
	// Index is the item's position in its list, from 1; 0 when it is not
	// known, or the refusal covers the items past max_items (then Err says
	// which).
	Index int
	// Pointer is the JSON Pointer, within the item, of the part at fault
	// ("" for the item as a whole).
	Pointer string
	// Err says what is wrong.
	Err error
	// Hostile is set when the fault is no mistake: text hidden from
	// whoever reviews the definition, or a look-alike name (IsHostile).
	// The host then leaves the whole plugin out.
	Hostile bool
}

// Error names the export, the item (by its name when that is fit to print,
// else by its position) and the fault.
func (r *Refusal) Error() string {
	switch {
	case r.Index > 0:
		return fmt.Sprintf("%s: %s %s: %v", r.Export, r.Kind, itemName(r.Index-1, printableKey(r.Kind, r.Name)), r.Err)
	case r.Name != "":
		return fmt.Sprintf("%s: %s %s: %v", r.Export, r.Kind, ShowName(r.Name), r.Err)
	}
	return fmt.Sprintf("%s: %v", r.Export, r.Err)
}

// Unwrap returns Err.
func (r *Refusal) Unwrap() error { return r.Err }

// printableKey is key when a log line may quote it as the item's name: a
// tool or prompt name only when it is a valid one, so that a name that is
// itself the fault is named by position.
func printableKey(kind, key string) string {
	if (kind == "tool" || kind == "prompt") && !validToolName.MatchString(key) {
		return ""
	}
	return key
}

// refuse makes the Refusal of item i (from 0) of export, named key, for
// err.
func refuse(export, kind string, i int, key string, err error) Refusal {
	return Refusal{Export: export, Kind: kind, Name: key, Index: i + 1, Pointer: pointerOf(err), Err: err, Hostile: IsHostile(err)}
}

// pointed is an error about the part of a value at a JSON Pointer. Its
// text is its cause's, which names the place already.
type pointed struct {
	pointer string
	err     error
}

func (e *pointed) Error() string { return e.err.Error() }
func (e *pointed) Unwrap() error { return e.err }

// at marks err as being about the part at pointer.
func at(pointer string, err error) error { return &pointed{pointer: pointer, err: err} }

// under is err, about a part of the member at prefix (a JSON Pointer),
// with label before its text: the pointer err carries is made relative to
// the whole item.
func under(prefix, label string, err error) error {
	return &pointed{pointer: prefix + pointerOf(err), err: fmt.Errorf("%s: %w", label, err)}
}

// pointerOf returns the JSON Pointer err is about ("" when it names none:
// the value as a whole).
func pointerOf(err error) string {
	var p *pointed
	if errors.As(err, &p) {
		return p.pointer
	}
	return ""
}

// hostile marks a fault that is no mistake: a plugin hiding text from
// whoever reviews its definitions, or offering a name made to pass for
// another.
type hostile struct{ err error }

func (e *hostile) Error() string { return e.err.Error() }
func (e *hostile) Unwrap() error { return e.err }

// IsHostile reports whether err is, or wraps, a fault that only a hostile
// plugin commits: hidden text (see visibleText) or a look-alike name (see
// lookAlike).
func IsHostile(err error) bool {
	var h *hostile
	return errors.As(err, &h)
}

// unmarshalPointer is the JSON Pointer of the member encoding/json failed
// to decode into (its Field, dotted), or "" when it does not say.
func unmarshalPointer(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		var p strings.Builder
		for _, seg := range strings.Split(te.Field, ".") {
			p.WriteString("/" + pointerSegment(seg))
		}
		return p.String()
	}
	return ""
}

// ShowName quotes an item's name or URI for a report: ASCII only (hidden
// characters escaped), and shortened when long.
func ShowName(name string) string {
	const most = 64
	if len(name) <= most {
		return strconv.QuoteToASCII(name)
	}
	cut := most
	for cut > 0 && name[cut]&0xC0 == 0x80 { // not inside a UTF-8 sequence
		cut--
	}
	return fmt.Sprintf("%s… (%d bytes)", strconv.QuoteToASCII(name[:cut]), len(name))
}
