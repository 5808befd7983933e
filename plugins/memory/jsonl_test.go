package main

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

// tricky holds strings that JavaScript and Go escape differently, and
// letters whose lower case differs between them.
var tricky = []string{"", "plain", `quote" back\slash /`, "<b>&amp;</b>", "line\nbreak\r\t\b\f", "ctl\x00\x01\x1f\x7f", "sep\u2028\u2029", "İstanbul ΟΔΟΣ", "😀", "\ufeffbom"}

func trickyGraph() Graph {
	g := Graph{Entities: []Entity{}, Relations: []Relation{}}
	for i, s := range tricky {
		g.Entities = append(g.Entities, Entity{Name: s, EntityType: tricky[(i+1)%len(tricky)], Observations: tricky[:i]})
		g.Relations = append(g.Relations, Relation{From: s, To: tricky[(i+2)%len(tricky)], RelationType: s})
	}
	return g
}

func TestAppendJSString(t *testing.T) {
	for in, want := range map[string]string{
		"a<b>&c":       `"a<b>&c"`,
		"\u2028\u2029": "\"\u2028\u2029\"",
		"\x00\x1f\x7f": `"\u0000\u001f` + "\x7f\"",
		"\b\t\n\f\r":   `"\b\t\n\f\r"`,
		`"\`:           `"\"\\"`,
		"bad\xffutf8":  "\"bad\ufffdutf8\"",
		"😀 é":          `"😀 é"`,
	} {
		if got := string(appendJSString(nil, in)); got != want {
			t.Errorf("appendJSString(%q) = %s, want %s", in, got, want)
		}
	}
}

// TestPretty: pretty indents as json.Indent does with two spaces, which is
// JSON.stringify(v, null, 2)'s layout.
func TestPretty(t *testing.T) {
	g := trickyGraph()
	for _, compact := range [][]byte{
		appendGraph(nil, g),
		appendGraph(nil, Graph{Entities: []Entity{}, Relations: []Relation{}}),
		appendEntities(nil, nil),
		appendResults(nil, []ObservationResult{{EntityName: "a", AddedObservations: []string{}}, {EntityName: "b\"", AddedObservations: []string{"x", "y"}}}),
	} {
		var want bytes.Buffer
		if err := json.Indent(&want, compact, "", "  "); err != nil {
			t.Fatal(err)
		}
		if got := pretty(compact); got != want.String() {
			t.Errorf("pretty(%s) =\n%s\nwant\n%s", compact, got, want.String())
		}
	}
}

func TestFileRoundTrip(t *testing.T) {
	g := trickyGraph()
	data := formatGraph(&g)
	got, err := parseGraph(data)
	if err != nil {
		t.Fatal(err)
	}
	// Observations of the first entity are an empty list, not nil, after
	// parsing; compare as JSON.
	if a, b := appendGraph(nil, got), appendGraph(nil, g); !bytes.Equal(a, b) {
		t.Errorf("round trip:\n%s\n%s", a, b)
	}
	if !bytes.Equal(formatGraph(&got), data) {
		t.Error("formatting the parsed graph changes the file")
	}
}

// TestParseJSONStrings: strings decode as encoding/json decodes them.
func TestParseJSONStrings(t *testing.T) {
	for _, in := range []string{
		`"plain"`, `"\u00e9\u20ac\ud83d\ude00"`, `"\ud800"`, `"\ud800x"`, `"\ud800\u0041"`, `"\udc00\ud800"`,
		`"\/\b\f\n\r\t\"\\"`, "\"bad\xff\xfeutf8\"", "\"\xed\xa0\x80\"", `"\u0000"`,
	} {
		var want string
		if err := json.Unmarshal([]byte(in), &want); err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		v, err := parseJSON([]byte(in))
		if err != nil || v.kind != jsonString || v.str != want {
			t.Errorf("parseJSON(%s) = %q, %v; want %q", in, v.str, err, want)
		}
	}
	for _, in := range []string{`"a`, `"\x"`, "\"a\nb\"", `{"a":1,}`, `[1,]`, `01`, `1.`, `-`, `{"a" 1}`, `tru`, `"a" "b"`, `[`, ``} {
		if _, err := parseJSON([]byte(in)); err == nil {
			t.Errorf("parseJSON(%q): no error", in)
		} else if json.Valid([]byte(in)) {
			t.Errorf("parseJSON(%q): %v, but it is valid JSON", in, err)
		}
	}
}

func TestParseGraphLines(t *testing.T) {
	data := "\n  \r\n" + `{"type":"entity","Name":"x","name":"a","name":"b","entityType":"t","observations":[],"extra":{"deep":[1,2.5e3,null,true]}}` + "\n" +
		`{"type":"other"}` + "\n5\n[1]\n" + `{"type":"relation","from":"b","to":"c","relationType":"r"}` + "\r\n\u00a0"
	g, err := parseGraph([]byte(data))
	if err != nil {
		t.Fatal(err)
	}
	want := Graph{Entities: []Entity{{Name: "b", EntityType: "t", Observations: []string{}}}, Relations: []Relation{{From: "b", To: "c", RelationType: "r"}}}
	if !reflect.DeepEqual(g, want) {
		t.Errorf("got %+v, want %+v", g, want)
	}
	for _, bad := range []string{`{"type":"entity","name":"a"}`, `{"type":"entity","name":1,"entityType":"t","observations":[]}`, `{"type":"relation","from":"a","to":null,"relationType":"r"}`, `{not json}`} {
		if _, err := parseGraph([]byte(bad)); err == nil {
			t.Errorf("parseGraph(%s): no error", bad)
		}
	}
}

func TestJSLower(t *testing.T) {
	for in, want := range map[string]string{"ABC": "abc", "İ": "i\u0307", "ΟΔΟΣ": "οδος", "ΣΑ": "σα", "Σ": "σ", "ΟΔΟΣ ΟΔΟΣ.": "οδος οδος.", "AΣ\u0301": "aς\u0301", "ΑΣ\u0301Β": "ασ\u0301β", "A.Σ": "a.ς", "Σ.Σ": "σ.ς"} {
		if got := jsLower(in); got != want {
			t.Errorf("jsLower(%q) = %q, want %q", in, got, want)
		}
	}
}
