package sdk

import (
	"encoding/json"
	"strings"
	"testing"
)

// validSeeds are JSON texts, valid and not, on which validJSON must agree
// with json.Valid; each is also a seed of FuzzValidJSON.
var validSeeds = []string{
	``, ` `, `{}`, `[]`, `null`, `true`, `false`, `0`, `-0`, `1.5e+3`, `"x"`,
	` { "a" : [ 1 , -2.0E-3 , "\"\\\/\b\f\n\r\t\u00e9\uD83D\uDE00" , true , false , null , { } , [ ] ] } `,
	`{"a":1,}`, `[1,]`, `[,1]`, `{,}`, `{"a"}`, `{"a":}`, `{"a" 1}`, `{1:2}`, `{'a':1}`,
	`[1 2]`, `{"a":1 "b":2}`, `[}`, `{]`, `[[]`, `[]]`, `{}}`, `{} {}`, `{}x`, `1 2`,
	`01`, `-`, `-a`, `1.`, `.5`, `1e`, `1e+`, `+1`, `0x10`, `1.5e3.2`, `Infinity`, `NaN`,
	`tru`, `truex`, `nul`, `nulll`, `True`, `"\x"`, `"\u12"`, `"\u12g4"`, `"abc`, `"\`,
	"\"a\tb\"", "\"\x00\"", "\"\x1f\"", "\"\x7f\"", "\"\xff\xfe\"", "\"\xed\xa0\x80\"",
	"\t\n\r {}\t\n\r ", "\v{}", "\u00a0{}", "{}\x00",
	strings.Repeat("[", 10000) + strings.Repeat("]", 10000),
	strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
	strings.Repeat(`{"a":`, 10000) + "1" + strings.Repeat("}", 10000),
	strings.Repeat(`{"a":`, 10001) + "1" + strings.Repeat("}", 10001),
	strings.Repeat("[", 40) + strings.Repeat("]", 39),
}

func TestValidJSONAgreesWithEncodingJSON(t *testing.T) {
	for _, s := range append(validSeeds, envelopeSeeds...) {
		if got, want := validJSON([]byte(s)), json.Valid([]byte(s)); got != want {
			t.Errorf("validJSON(%.60q) = %v, json.Valid = %v", s, got, want)
		}
	}
}

// FuzzValidJSON checks that validJSON accepts exactly what json.Valid
// accepts.
//
//	go test -run '^$' -fuzz FuzzValidJSON ./sdk/
func FuzzValidJSON(f *testing.F) {
	for _, s := range append(validSeeds, envelopeSeeds...) {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := validJSON(b), json.Valid(b); got != want {
			t.Fatalf("validJSON(%q) = %v, json.Valid = %v", b, got, want)
		}
	})
}
