package bridge

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// A JSON Schema names properties exactly, but encoding/json, and so the Go
// SDK's decoding of tool arguments, matches keys case-insensitively (the
// last of several wins). Arguments {"mode": "read", "MODE": "delete"}
// pass a schema that allows only "read" for mode (MODE is just another
// property to it), and a Go plugin then reads mode as "delete": the
// schema checked one value and the plugin used another (the class of bug
// behind a go-sdk advisory, DESIGN.md). So an argument key that equals a
// property the schema declares anywhere, except for case, is refused
// before the plugin sees it.

// declaredNames are the property names a schema declares (under
// "properties", or "required", at any depth).
type declaredNames struct {
	exact  map[string]bool
	folded map[string]string // foldKey(name) → the first name of that form
}

// collectDeclaredNames returns the names doc, a decoded JSON Schema,
// declares. It reads every "properties" object and "required" list at any
// depth, a few that are not keywords (a property named "properties")
// included: a name too many only refuses more.
func collectDeclaredNames(doc any) declaredNames {
	d := declaredNames{exact: map[string]bool{}, folded: map[string]string{}}
	add := func(name string) {
		d.exact[name] = true
		if _, ok := d.folded[foldKey(name)]; !ok {
			d.folded[foldKey(name)] = name
		}
	}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if props, ok := v["properties"].(map[string]any); ok {
				for name := range props {
					add(name)
				}
			}
			if req, ok := v["required"].([]any); ok {
				for _, name := range req {
					if s, ok := name.(string); ok {
						add(s)
					}
				}
			}
			for _, child := range v {
				walk(child)
			}
		case []any:
			for _, child := range v {
				walk(child)
			}
		}
	}
	walk(doc)
	return d
}

// check refuses v, decoded tool arguments, if an object in it at any
// depth has a key that is not a declared name but equals one except for
// case.
func (d declaredNames) check(v any) error {
	if len(d.folded) == 0 {
		return nil
	}
	switch v := v.(type) {
	case map[string]any:
		for key, child := range v {
			if !d.exact[key] { // a key declared as it is, the common case, is not folded
				if declared, ok := d.folded[foldKey(key)]; ok {
					return fmt.Errorf("argument %s differs from the property %s only in case: refused, since a plugin that matches keys case-insensitively (encoding/json, the Go SDK) would read it as %s",
						strconv.QuoteToASCII(key), strconv.QuoteToASCII(declared), strconv.QuoteToASCII(declared))
				}
			}
			if err := d.check(child); err != nil {
				return err
			}
		}
	case []any:
		for _, child := range v {
			if err := d.check(child); err != nil {
				return err
			}
		}
	}
	return nil
}

// foldKey returns the form of s that strings.EqualFold compares: every
// rune replaced by the least of its simple case-folding orbit (for an
// ASCII letter, its upper case: 'k', 'K' and the Kelvin sign all give
// 'K'), so that foldKey(a) == foldKey(b) exactly when
// strings.EqualFold(a, b), which is how encoding/json matches keys.
func foldKey(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			ascii = false
			break
		}
	}
	if ascii {
		return strings.ToUpper(s)
	}
	var b strings.Builder
	for _, r := range s {
		least := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			least = min(least, f)
		}
		b.WriteRune(least)
	}
	return b.String()
}
