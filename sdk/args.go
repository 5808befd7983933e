package sdk

import (
	"bytes"
	"encoding"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Tool arguments are decoded by decodeArgs, which gives what
// json.Unmarshal gives but decodes the common case itself: a pointer to a
// struct of scalar fields and an object of plain keys. In the Wasm guest
// json.Unmarshal's reflection (a decoder state, the type's field cache,
// indirect, literalStore…) costs ~11 µs for {"text":"hello"}, half of a
// small call; each Go function entry and allocation is dear there.
// Anything unusual is left to json.Unmarshal from the start, so its values
// and errors are encoding/json's own (FuzzDecodeArgs checks the two agree;
// RATIONALE.md "Tool arguments decoded without encoding/json's
// reflection").

// decodeArgs decodes args into v exactly as json.Unmarshal(args, v) does.
func decodeArgs(args json.RawMessage, v any) error {
	t := reflect.TypeOf(v)
	if !fastArgs || t == nil || t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return json.Unmarshal(args, v)
	}
	return planArgs(t.Elem()).decode(args, v)
}

// argsPlans caches an argsPlan per struct type.
var argsPlans sync.Map // reflect.Type → *argsPlan

// planArgs returns t's plan, computing it the first time.
func planArgs(t reflect.Type) *argsPlan {
	if p, ok := argsPlans.Load(t); ok {
		return p.(*argsPlan)
	}
	p, _ := argsPlans.LoadOrStore(t, newArgsPlan(t))
	return p.(*argsPlan)
}

// argsPlan is how decodeArgs sets the fields of one struct type: the
// fields encoding/json would decode into, in field order.
type argsPlan struct {
	ok     bool // false: the type has something decodeArgs leaves to encoding/json
	fields []argsField
}

// argsField is one field of an argsPlan.
type argsField struct {
	name  string       // its JSON name: printable ASCII
	index int          // its index in the struct
	kind  reflect.Kind // the field's, or what it points to
	bits  int          // of a number
	raw   bool         // json.RawMessage
	ptr   bool         // a pointer (unnamed) to a scalar
}

var (
	rawMessageType      = reflect.TypeFor[json.RawMessage]()
	numberType          = reflect.TypeFor[json.Number]()
	unmarshalerType     = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// newArgsPlan computes t's plan, following encoding/json's typeFields for
// the fields it supports: exported fields, not embedded, of kind string,
// bool, int*, uint* or float*, of type json.RawMessage, or unnamed
// pointers to one of these but json.RawMessage; a tag's name if
// it is valid, the field's name otherwise; "-" skips the field;
// unexported fields are skipped. Anything else (",string", an embedded
// field, two fields of one name, a non-ASCII name, a type with its own
// unmarshalling) makes the type one for encoding/json.
func newArgsPlan(t reflect.Type) *argsPlan {
	p := &argsPlan{}
	if hasUnmarshaler(t) {
		return p
	}
	names := map[string]bool{}
	for i := range t.NumField() {
		sf := t.Field(i)
		if sf.Anonymous {
			return p
		}
		if !sf.IsExported() {
			continue
		}
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		for _, o := range strings.Split(opts, ",") {
			if o == "string" {
				return p
			}
		}
		if !validTagName(name) {
			name = sf.Name
		}
		if !printableASCII(name) || names[name] {
			return p
		}
		names[name] = true
		ft := sf.Type
		if ft.Kind() == reflect.Pointer && ft.Name() == "" && ft.Elem() != rawMessageType {
			ft = ft.Elem()
		}
		f := argsField{name: name, index: i, kind: ft.Kind(), ptr: ft != sf.Type}
		switch {
		case ft == rawMessageType:
			f.raw = true
		case hasUnmarshaler(ft) || ft == numberType:
			return p
		}
		switch f.kind {
		case reflect.String, reflect.Bool:
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
			reflect.Float32, reflect.Float64:
			f.bits = ft.Bits()
		default:
			if !f.raw {
				return p
			}
		}
		p.fields = append(p.fields, f)
	}
	p.ok = true
	return p
}

// hasUnmarshaler reports whether encoding/json would decode into t with
// t's own methods.
func hasUnmarshaler(t reflect.Type) bool {
	pt := reflect.PointerTo(t)
	return pt.Implements(unmarshalerType) && t != rawMessageType || pt.Implements(textUnmarshalerType)
}

// validTagName is encoding/json's isValidTag.
func validTagName(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		switch {
		case strings.ContainsRune("!#$%&()*+-./:;<=>?@[]^_{|}~ ", c):
		case !unicode.IsLetter(c) && !unicode.IsDigit(c):
			return false
		}
	}
	return true
}

func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// decode decodes args into v, a pointer to the plan's type: itself when
// it can, with json.Unmarshal otherwise.
func (p *argsPlan) decode(args json.RawMessage, v any) error {
	if p.fast(args, v) {
		return nil
	}
	return json.Unmarshal(args, v)
}

// fast decodes args into v as encoding/json would and reports true, or
// reports false as soon as it meets anything it leaves to encoding/json.
// Then json.Unmarshal decodes args from the start: the fields fast has set
// by then it sets again to the same values, since it decodes the same
// members in the same order.
func (p *argsPlan) fast(args []byte, v any) bool {
	rv := reflect.ValueOf(v)
	if !p.ok || rv.IsNil() || !validJSON(args) {
		return false
	}
	i := skipSpace(args, 0)
	switch args[i] {
	case 'n':
		return true // null: v as it was, as encoding/json leaves it
	case '{':
	default:
		return false
	}
	rv = rv.Elem()
	m, _ := objectMembers(args[i:], "arguments") // an object, so no error
	for m.next() {
		f, ok := p.field(m.key)
		if !ok {
			return false
		}
		if f != nil && !f.set(rv.Field(f.index), m.val) {
			return false
		}
	}
	return true
}

// field returns the field key names as encoding/json matches keys: the
// field of that exact name, otherwise the first whose name equals it
// case-insensitively; nil if none. ok is false for a key that is escaped
// or not ASCII, which it leaves to encoding/json.
func (p *argsPlan) field(key jsonKey) (f *argsField, ok bool) {
	k := key[1 : len(key)-1]
	for _, c := range k {
		if c >= utf8.RuneSelf || c == '\\' {
			return nil, false
		}
	}
	for i := range p.fields {
		if p.fields[i].name == string(k) {
			return &p.fields[i], true
		}
	}
	for i := range p.fields {
		if asciiEqualFold(p.fields[i].name, k) {
			return &p.fields[i], true
		}
	}
	return nil, true
}

// asciiEqualFold reports whether name and k, both ASCII, are equal but for
// the case of letters.
func asciiEqualFold(name string, k []byte) bool {
	if len(name) != len(k) {
		return false
	}
	for i := range len(k) {
		a, b := name[i], k[i]
		if a >= 'A' && a <= 'Z' {
			a += 'a' - 'A'
		}
		if b >= 'A' && b <= 'Z' {
			b += 'a' - 'A'
		}
		if a != b {
			return false
		}
	}
	return true
}

// set sets fv, the field, to val, a valid JSON value, as encoding/json
// would; false when it leaves that to encoding/json (a value of the wrong
// type, a number out of range).
func (f *argsField) set(fv reflect.Value, val []byte) bool {
	if f.ptr {
		// As encoding/json: null sets the pointer to nil; anything else
		// goes where it points, to a new value if it is nil (allocated
		// even when the value then turns out to be of the wrong type,
		// which json.Unmarshal does too).
		if val[0] == 'n' {
			fv.SetZero()
			return true
		}
		if fv.IsNil() {
			fv.Set(reflect.New(fv.Type().Elem()))
		}
		fv = fv.Elem()
	}
	if f.raw {
		fv.SetBytes(append(fv.Bytes()[:0], val...))
		return true
	}
	switch c := val[0]; {
	case c == 'n':
		return true // null: the field as it was
	case c == '"':
		if f.kind != reflect.String {
			return false
		}
		if bytes.IndexByte(val, '\\') < 0 && utf8.Valid(val) {
			fv.SetString(string(val[1 : len(val)-1]))
			return true
		}
		var s string
		if json.Unmarshal(val, &s) != nil {
			return false
		}
		fv.SetString(s)
		return true
	case c == 't' || c == 'f':
		if f.kind != reflect.Bool {
			return false
		}
		fv.SetBool(c == 't')
		return true
	case c == '-' || c >= '0' && c <= '9':
		switch f.kind {
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			n, err := strconv.ParseInt(string(val), 10, f.bits)
			if err != nil {
				return false
			}
			fv.SetInt(n)
			return true
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
			n, err := strconv.ParseUint(string(val), 10, f.bits)
			if err != nil {
				return false
			}
			fv.SetUint(n)
			return true
		case reflect.Float32, reflect.Float64:
			n, err := strconv.ParseFloat(string(val), f.bits)
			if err != nil {
				return false
			}
			fv.SetFloat(n)
			return true
		}
	}
	return false // an object or array, or a type mismatch
}
