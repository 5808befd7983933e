package sdk

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"
)

// Types decodeArgs is checked with: those its fast path decodes, then
// those it leaves to encoding/json.

type argsName string

type argsAll struct {
	S      string `json:"s"`
	B      bool
	I      int `json:"i,omitempty"`
	I8     int8
	I16    int16
	I32    int32
	I64    int64 `json:"i64"`
	U      uint
	U8     uint8 `json:"u8"`
	U16    uint16
	U32    uint32
	U64    uint64 `json:"u64"`
	Up     uintptr
	F32    float32         `json:"f32"`
	F64    float64         `json:"f64"`
	Raw    json.RawMessage `json:"raw"`
	Named  argsName        `json:"named"`
	Skip   string          `json:"-"`
	Dash   string          `json:"-,"`
	Odd    string          `json:"a\"b"` // not a valid tag name: the field's name
	Omit   string          `json:",omitempty"`
	hidden string
}

// argsFold has names that fold together: the exact one wins, then the
// first.
type argsFold struct {
	Lower string `json:"a"`
	Upper string `json:"A"`
	K     string `json:"k"`
	S     string `json:"s"`
	AB    string `json:"a_b"`
}

type argsEcho struct {
	Text string `json:"text"`
}

type argsEmpty struct{}

// argsPtrs has pointers, which null sets to nil and a value fills,
// allocating one if nil.
type argsPtrs struct {
	S     *string `json:"s"`
	I8    *int8
	F32   *float32 `json:"f32"`
	B     *bool
	U64   *uint64   `json:"u64"`
	Named *argsName `json:"named"`
	Nil   *string   `json:"nil"`
}

type (
	argsNumber  struct{ N json.Number }
	argsPtrRaw  struct{ R *json.RawMessage }
	argsPtrPtr  struct{ P **string }
	argsPtrTime struct{ T *time.Time }
	argsSlice   struct{ L []int }
	argsQuoted  struct {
		N int `json:",string"`
	}
	argsNonASCII  struct{ Ä string }
	argsTime      struct{ T time.Time }
	argsEmbedded  struct{ argsEcho }
	argsTextUnm   struct{ D argsText }
	argsUnmarshal struct{ s string }
)

func (u *argsUnmarshal) UnmarshalJSON(b []byte) error { u.s = string(b); return nil }

// argsDup returns a pointer to a struct{ A, B string } whose fields are
// both tagged "x", which encoding/json then drops (built here: go vet
// refuses the type written out).
func argsDup() any {
	st := reflect.TypeFor[string]()
	t := reflect.StructOf([]reflect.StructField{
		{Name: "A", Type: st, Tag: `json:"x"`},
		{Name: "B", Type: st, Tag: `json:"x"`},
	})
	v := reflect.New(t)
	v.Elem().Field(0).SetString("pre")
	v.Elem().Field(1).SetString("pre")
	return v.Interface()
}

type argsText struct{ s string }

func (t *argsText) UnmarshalText(b []byte) error { t.s = string(b); return nil }

// argsTargets returns a fresh pre-filled value of each type, pointers to
// them, for decodeArgs and json.Unmarshal to decode into.
func argsTargets() []any { return append(argsFastTargets(), argsSlowTargets()...) }

// argsFastTargets are of the types decodeArgs decodes itself.
func argsFastTargets() []any {
	s, i8, f32, b, u64, n := "pre", int8(-2), float32(1.5), true, uint64(5), argsName("pre")
	return []any{
		&argsAll{S: "pre", B: true, I: -1, I8: -2, I16: -3, I32: -4, I64: -5, U: 1, U8: 2, U16: 3, U32: 4, U64: 5, Up: 6,
			F32: 1.5, F64: -2.5, Raw: json.RawMessage(`{"pre":1}`), Named: "pre", Skip: "pre", Dash: "pre", Odd: "pre", Omit: "pre", hidden: "pre"},
		&argsFold{Lower: "pre", Upper: "pre", K: "pre", S: "pre", AB: "pre"},
		&argsEcho{Text: "pre"},
		&argsEmpty{},
		&argsPtrs{S: &s, I8: &i8, F32: &f32, B: &b, U64: &u64, Named: &n},
	}
}

// argsSlowTargets are of types decodeArgs leaves to encoding/json.
func argsSlowTargets() []any {
	s, raw, t := "pre", json.RawMessage(`"pre"`), time.Unix(1, 0)
	ps := &s
	return []any{
		&argsNumber{N: "1"},
		&argsPtrRaw{R: &raw},
		&argsPtrPtr{P: &ps},
		&argsPtrTime{T: &t},
		&argsSlice{L: []int{1}},
		&argsQuoted{N: 1},
		argsDup(),
		&argsNonASCII{Ä: "pre"},
		&argsTime{},
		&argsEmbedded{argsEcho{Text: "pre"}},
		&argsTextUnm{D: argsText{"pre"}},
		&argsUnmarshal{s: "pre"},
		(*argsEcho)(nil),
		new(*argsEcho),
		new(map[string]any),
		argsEcho{},
	}
}

// checkArgs decodes args into each target with decodeArgs and with
// json.Unmarshal and reports any difference in value or error.
func checkArgs(t *testing.T, args string) {
	t.Helper()
	mine, theirs := argsTargets(), argsTargets()
	for i := range mine {
		err1 := decodeArgs(json.RawMessage(args), mine[i])
		err2 := json.Unmarshal([]byte(args), theirs[i])
		if fmt.Sprint(err1) != fmt.Sprint(err2) {
			t.Fatalf("%T, %q: decodeArgs: %v; json.Unmarshal: %v", mine[i], args, err1, err2)
		}
		// DeepEqual takes -0 for 0; JSON tells them apart.
		j1, _ := json.Marshal(mine[i])
		j2, _ := json.Marshal(theirs[i])
		if !reflect.DeepEqual(mine[i], theirs[i]) || string(j1) != string(j2) {
			t.Fatalf("%T, %q:\ndecodeArgs:     %#v\njson.Unmarshal: %#v", mine[i], args, deref(mine[i]), deref(theirs[i]))
		}
	}
}

func deref(v any) any {
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Pointer && !rv.IsNil() {
		return rv.Elem().Interface()
	}
	return v
}

// argsCases are inputs for TestDecodeArgs and seeds for FuzzDecodeArgs;
// fast says whether decodeArgs decodes them into argsAll itself.
var argsCases = []struct {
	args string
	fast bool
}{
	{`{"text":"hello"}`, true},
	{`{}`, true},
	{` { "s" : "x" , "B" : true } `, true},
	{`null`, true},
	{` null `, true},
	{`{"s":null,"i":null,"raw":null,"B":null}`, true},
	{`{"s":"a","s":"b","S":"c"}`, true}, // the last duplicate wins, case folded
	{`{"b":false,"i8":-128,"I16":32767,"i32":-2147483648,"I64":-9223372036854775808}`, true},
	{`{"u":0,"u8":255,"u16":65535,"u32":4294967295,"u64":18446744073709551615,"up":7}`, true},
	{`{"f32":3.4028235e38,"f64":1.7976931348623157e308}`, true},
	{`{"f32":1e-46,"f64":-0,"F32":-0.0}`, true},
	{`{"f64":1E+2,"f32":2.5e-3}`, true},
	{`{"raw":{"a":[1,2,{"b":null}]},"named":"n"}`, true},
	{`{"raw":"x","raw":[ 1 , 2 ]}`, true},
	{`{"unknown":[1,[2,{"s":"no"}]],"s":"yes"}`, true},
	{`{"-":"dash","Skip":"no","Odd":"odd","omit":"o","hidden":"h"}`, true},
	{`{"a":"exact","A":"exact too"}`, true},
	{`{"a_b":"x","A_B":"y","ab":"z"}`, true},
	{`{"x":"dup","X":"dup2"}`, true},
	{`{"nil":"x","s":null,"i8":5,"f32":null,"B":false,"u64":1,"named":"n","R":"r","p":"p","T":null}`, true},
	{`{"nil":5,"s":{}}`, false},
	{`{"nil":null,"i8":[],"R":{"a":1},"P":null,"t":"2024-01-01T00:00:00Z"}`, false},
	{`{"s":"\u00e9t\u00e9"}`, true}, // escaped: this string by encoding/json
	{`{"s":"été","s":"\n"}`, true},
	{"{\"s\":\"\xff\"}", true},          // invalid UTF-8: this string by encoding/json
	{`{"\u0073":"escaped key"}`, false}, // escaped key
	{`{"ſ":"long s","K":"kelvin"}`, false},
	{`{"i8":128}`, false},
	{`{"i8":-129}`, false},
	{`{"u8":256}`, false},
	{`{"u":-0}`, false},
	{`{"u64":18446744073709551616}`, false},
	{`{"I64":9223372036854775808}`, false},
	{`{"i":1.5}`, false},
	{`{"i":1e2}`, false},
	{`{"f32":3.5e38}`, false},
	{`{"f64":1e400}`, false},
	{`{"s":1}`, false},
	{`{"B":"true"}`, false},
	{`{"i":"1"}`, false},
	{`{"s":{"nested":1}}`, false},
	{`{"i":[1]}`, false},
	{`{"i":true,"s":"after"}`, false},
	{`[1,2]`, false},
	{`"str"`, false},
	{`42`, false},
	{`true`, false},
	{``, false},
	{`{"s":"x"`, false},
	{`{"s":"x"} x`, false},
	{`{"s":"x",}`, false},
}

func TestDecodeArgs(t *testing.T) {
	for _, tc := range argsCases {
		checkArgs(t, tc.args)
		var all argsAll
		if fast := planArgs(reflect.TypeFor[argsAll]()).fast([]byte(tc.args), &all); fast != tc.fast {
			t.Errorf("%q: decoded without encoding/json = %v, want %v", tc.args, fast, tc.fast)
		}
	}
	// Types with anything the fast path does not decode have no plan.
	for _, v := range argsSlowTargets() {
		if t := reflect.TypeOf(v); t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct || reflect.ValueOf(v).IsNil() {
			continue // not a struct type: no plan to check
		}
		if p := planArgs(reflect.TypeOf(v).Elem()); p.ok {
			t.Errorf("%T: fast plan %+v, want encoding/json", v, p.fields)
		}
	}
	for _, v := range argsFastTargets() {
		if p := planArgs(reflect.TypeOf(v).Elem()); !p.ok {
			t.Errorf("%T: no fast plan", v)
		}
	}
}

// TestDecodeArgsPointers checks what the differential checks cannot see:
// a value goes where a pointer field already points, as encoding/json
// puts it.
func TestDecodeArgsPointers(t *testing.T) {
	for _, decode := range []func([]byte, any) error{json.Unmarshal, func(b []byte, v any) error { return decodeArgs(b, v) }} {
		s, s2 := "pre", "pre"
		v := argsPtrs{S: &s, Nil: &s2}
		if err := decode([]byte(`{"s":"new","nil":null}`), &v); err != nil {
			t.Fatal(err)
		}
		if s != "new" || v.S != &s || v.Nil != nil || s2 != "pre" {
			t.Errorf("after decoding: s = %q, v = %+v", s, v)
		}
	}
}

// FuzzDecodeArgs checks that decodeArgs and json.Unmarshal agree, in value
// and error, on any input and every type of argsTargets.
func FuzzDecodeArgs(f *testing.F) {
	for _, tc := range argsCases {
		f.Add(tc.args)
	}
	f.Fuzz(func(t *testing.T, args string) {
		checkArgs(t, args)
	})
}

func BenchmarkDecodeArgs(b *testing.B) {
	for _, bc := range []struct {
		name string
		args string
		v    func() any
	}{
		{"echo", `{"text":"hello"}`, func() any { return new(argsEcho) }},
		{"fields", `{"s":"hello","B":true,"i":42,"f64":1.5,"u8":7,"unknown":[1,2]}`, func() any { return new(argsAll) }},
	} {
		args := json.RawMessage(bc.args)
		b.Run(bc.name+"/decodeArgs", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := decodeArgs(args, bc.v()); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(bc.name+"/json.Unmarshal", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := json.Unmarshal(args, bc.v()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
