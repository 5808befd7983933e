package bridge

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestFoldKeyIsEqualFold: two names have one folded form exactly when
// strings.EqualFold (and so encoding/json) takes them for one.
func TestFoldKeyIsEqualFold(t *testing.T) {
	names := []string{"mode", "MODE", "Mode", "mOdE", "mod", "modes", "k", "K", "\u212a", "s", "S", "\u017f",
		"key", "\u212aey", "KEY", "sum", "\u017fum", "ß", "ẞ", "ss", "é", "É", "e", "", "_meta", "_META", "\xff", "a\xffb", "A\xffB"}
	for _, a := range names {
		for _, b := range names {
			if got, want := foldKey(a) == foldKey(b), strings.EqualFold(a, b); got != want {
				t.Errorf("foldKey(%q) == foldKey(%q) is %v; strings.EqualFold says %v", a, b, got, want)
			}
		}
	}
}

// FuzzFoldKey checks the same on any pair.
//
//	go test -run '^$' -fuzz FuzzFoldKey ./host/internal/bridge/
func FuzzFoldKey(f *testing.F) {
	f.Add("mode", "MODE")
	f.Add("\u212aey", "key")
	f.Add("\u017f", "S")
	f.Fuzz(func(t *testing.T, a, b string) {
		if got, want := foldKey(a) == foldKey(b), strings.EqualFold(a, b); got != want {
			t.Fatalf("foldKey(%q) == foldKey(%q) is %v; strings.EqualFold says %v", a, b, got, want)
		}
	})
}

func TestCheckKeyCase(t *testing.T) {
	schema := `{"type":"object","properties":{"mode":{"enum":["read"]},"opts":{"type":"object","properties":{"Depth":{"type":"integer"}}},
		"list":{"type":"array","items":{"type":"object","properties":{"name":{"type":"string"}}}}},"required":["mode","ID"]}`
	var doc any
	if err := json.Unmarshal([]byte(schema), &doc); err != nil {
		t.Fatal(err)
	}
	names := collectDeclaredNames(doc)
	for _, tc := range []struct {
		args string
		bad  string // the key refused, "" if none
	}{
		{`{"mode":"read"}`, ""},
		{`{"mode":"read","ID":1,"extra":{"anything":true}}`, ""},
		{`{"mode":"read","MODE":"delete"}`, "MODE"},
		{`{"Mode":"delete"}`, "Mode"},
		{`{"mode":"read","\u212aey":1,"id":2}`, "id"}, // required "ID"
		{`{"mode":"read","opts":{"depth":3}}`, "depth"},
		{`{"mode":"read","list":[{"name":"a"},{"NAME":"b"}]}`, "NAME"},
		{`{"mode":"read","env":{"Mode":"x"}}`, "Mode"}, // a map value too: a name too many only refuses more
		{`{"mode":"read","\u017fode":1}`, ""},          // ſode folds to SODE, not MODE
		{`{"mod\u0065":"read"}`, ""},
	} {
		var args any
		if err := json.Unmarshal([]byte(tc.args), &args); err != nil {
			t.Fatal(err)
		}
		err := names.check(args)
		switch {
		case tc.bad == "" && err != nil:
			t.Errorf("%s: refused: %v", tc.args, err)
		case tc.bad != "" && (err == nil || !strings.Contains(err.Error(), `"`+tc.bad+`"`)):
			t.Errorf("%s: error %v, want one naming %q", tc.args, err, tc.bad)
		}
	}
}
