package bridge

import (
	"fmt"
	"slices"
	"strconv"
	"unicode"
	"unicode/utf8"
)

// maxTextBytes bounds any one string in a definition a plugin offers.
const maxTextBytes = 64 << 10

// checkText walks a definition a plugin offers (a tool, prompt, resource or
// resource template, as decoded JSON) and refuses it if any string in it,
// keys included, hides something from the person who reviews it: a client
// shows or hands to a model titles and descriptions, but also annotations,
// schemas (property names and descriptions, enum values, defaults,
// examples), prompt arguments, URIs and icons. Every string is checked, so
// that a field a client starts to show tomorrow is already covered. The
// error names the JSON Pointer of the first offending string (for a key,
// the member it names), and carries it (pointerOf); hidden text is hostile
// (IsHostile).
func checkText(v any) error {
	var path []string
	var walk func(v any) error
	walk = func(v any) error {
		switch v := v.(type) {
		case string:
			if err := visibleText(v); err != nil {
				p := joinPointer(path)
				return at(p, fmt.Errorf("string at %s %w", showPath(p), err))
			}
		case []any:
			for i, e := range v {
				path = append(path, strconv.Itoa(i))
				if err := walk(e); err != nil {
					return err
				}
				path = path[:len(path)-1]
			}
		case map[string]any:
			keys := make([]string, 0, len(v))
			for k := range v {
				keys = append(keys, k)
			}
			slices.Sort(keys) // report the same string every time
			for _, k := range keys {
				if err := visibleText(k); err != nil {
					p := joinPointer(path)
					return at(p+"/"+pointerSegment(k), fmt.Errorf("key %s at %s %w", strconv.QuoteToASCII(k), showPath(p), err))
				}
				path = append(path, k)
				if err := walk(v[k]); err != nil {
					return err
				}
				path = path[:len(path)-1]
			}
		}
		return nil
	}
	return walk(v)
}

func joinPointer(segments []string) string {
	var p string
	for _, s := range segments {
		p += "/" + pointerSegment(s)
	}
	return p
}

// visibleText refuses a string that is oversized, not UTF-8, or holds a
// character that renders as nothing, or reorders what is around it, while a
// model still reads it: control characters other than tab and line breaks;
// format characters (Cf: bidirectional overrides such as U+202E, zero-width
// spaces and joiners such as U+200B, the tag characters U+E0000–U+E007F that
// can spell out a whole hidden text); the other default-ignorable code
// points (e.g. U+115F, U+3164 Hangul fillers); and variation selectors,
// which can carry arbitrary bytes, except one U+FE0E or U+FE0F right after
// a visible character (text or emoji presentation, as in ❤️). Such a
// character is hostile (IsHostile): it hides text from whoever reviews the
// definition, which no plugin does by mistake; a string too long or not
// UTF-8 is a mere fault.
func visibleText(s string) error {
	if len(s) > maxTextBytes {
		return fmt.Errorf("is %d bytes (at most %d)", len(s), maxTextBytes)
	}
	return VisibleText(s)
}

// VisibleText is visibleText without its length bound, for text of any
// size a plugin ships (the files of its skills): it refuses a string that
// is not UTF-8, or holds a character that renders as nothing or reorders
// what is around it (see visibleText); such a character is hostile
// (IsHostile).
func VisibleText(s string) error {
	if !utf8.ValidString(s) {
		return fmt.Errorf("is not valid UTF-8")
	}
	prevVisible := false
	for i, r := range s {
		hidden := false
		switch {
		case r >= ' ' && r < 0x7f: // printable ASCII, most of any text: no table lookups
		case r == '\t' || r == '\n' || r == '\r':
		case unicode.IsControl(r), unicode.In(r, unicode.Cf, unicode.Other_Default_Ignorable_Code_Point):
			hidden = true
		case unicode.Is(unicode.Variation_Selector, r):
			hidden = !prevVisible || (r != '\uFE0E' && r != '\uFE0F')
			prevVisible = false
			if !hidden {
				continue
			}
		}
		if hidden {
			return &hostile{fmt.Errorf("has an invisible or control character %U at byte %d", r, i)}
		}
		prevVisible = !unicode.IsSpace(r)
	}
	return nil
}
