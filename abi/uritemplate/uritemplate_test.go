package uritemplate

import (
	"reflect"
	"strings"
	"testing"
)

func TestMatch(t *testing.T) {
	for _, c := range []struct {
		tmpl, uri string
		want      map[string]any // nil: no match
	}{
		// Level 1: a variable anywhere, the authority included.
		{"note://{id}", "note://42", map[string]any{"id": "42"}},
		{"note://{id}", "note://a%20b%2Fc", map[string]any{"id": "a b/c"}},
		{"note://{id}", "note://a/b", nil},
		{"note://{id}", "note://", map[string]any{}},
		{"note://{id}", "note://100%", nil},
		{"note://{id}", "note://%FF", nil}, // not UTF-8
		{"note://{id}", "note://a b", nil},
		{"https://{host}/x", "https://example.com/x", map[string]any{"host": "example.com"}},
		{"x://{a}/{b}", "x://1/2", map[string]any{"a": "1", "b": "2"}},
		{"file:///{name}.txt", "file:///a.b.txt", map[string]any{"name": "a.b"}},
		{"x://{var.name}", "x://v", map[string]any{"var.name": "v"}},
		{"x://lit", "x://lit", map[string]any{}},
		{"x://lit", "x://lit2", nil},
		// Level 2: reserved and fragment expansion, passed as they appear.
		{"file:///{+path}", "file:///a/b/c", map[string]any{"path": "a/b/c"}},
		{"file:///{+path}", "file:///a%20b", map[string]any{"path": "a%20b"}},
		{"file:///{+dir}/{name}", "file:///a/b/c", map[string]any{"dir": "a/b", "name": "c"}},
		{"x:/p{#frag}", "x:/p#a/b", map[string]any{"frag": "a/b"}},
		{"x:/p{#frag}", "x:/p", map[string]any{}},
		// Level 3: several variables, every operator.
		{"https://{host}/x{?q}", "https://example.com/x?q=hello%20world", map[string]any{"host": "example.com", "q": "hello world"}},
		{"https://{host}/x{?q}", "https://example.com/x", map[string]any{"host": "example.com"}},
		{"https://{host}/x{?q}", "https://example.com/x?zz=1", nil},
		{"https://{host}/x{?q,r}", "https://h/x?r=2", map[string]any{"host": "h", "r": "2"}},
		{"https://{host}/x{?q,r}", "https://h/x?q=1&r=", map[string]any{"host": "h", "q": "1", "r": ""}},
		{"x:/a?z=1{&y}", "x:/a?z=1&y=2", map[string]any{"y": "2"}},
		{"x:/a{;p,q}", "x:/a;p=1;q", map[string]any{"p": "1", "q": ""}},
		{"x:/a{.ext}", "x:/a.txt", map[string]any{"ext": "txt"}},
		{"x:{/a,b}", "x:/1/2", map[string]any{"a": "1", "b": "2"}},
		{"x:{x,y}", "x:1,2,3", map[string]any{"x": "1", "y": "2,3"}},
		{"x:{x,y}", "x:1", map[string]any{"x": "1"}},
		// Level 4: prefixes and explosion.
		{"x:{v:3}", "x:abc", map[string]any{"v": "abc"}},
		{"x:{v:3}", "x:abcd", nil},
		{"x:{v:2}", "x:%C3%A9t", map[string]any{"v": "ét"}},
		{"file://{/path*}", "file:///a/b/c", map[string]any{"path": []string{"a", "b", "c"}}},
		// '.' can be in a path segment: the earlier expression takes it.
		{"file://{/path*}{.ext}", "file:///a/b.txt", map[string]any{"path": []string{"a", "b.txt"}}},
		{"file://{/path*}{.ext}", "file:///a/b/.txt", map[string]any{"path": []string{"a", "b", ".txt"}}},
		{"file://{/path*}.{ext}", "file:///a/b.txt", map[string]any{"path": []string{"a", "b"}, "ext": "txt"}},
		{"x:{list*}", "x:a,b,c", map[string]any{"list": []string{"a", "b", "c"}}},
		{"x:/s{?list*}", "x:/s?list=a&list=b", map[string]any{"list": []string{"a", "b"}}},
		{"x:/s{?keys*}", "x:/s?a=1&b=2", map[string]any{"keys": map[string]string{"a": "1", "b": "2"}}},
		{"x:/s{?q,keys*}", "x:/s?q=x&a=1", map[string]any{"q": "x", "keys": map[string]string{"a": "1"}}},
		// A variable twice: the same value.
		{"x:/{a}/{a}", "x:/1/1", map[string]any{"a": "1"}},
		{"x:/{a}/{a}", "x:/1/2", nil},
	} {
		tm, err := Parse(c.tmpl)
		if err != nil {
			t.Fatalf("Parse(%s): %v", c.tmpl, err)
		}
		got, ok := tm.Match(c.uri)
		if ok != (c.want != nil) || ok && !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s matching %s = %#v, %v; want %#v", c.tmpl, c.uri, got, ok, c.want)
		}
	}
}

// Bad templates are refused naming the place and the problem. (That
// go-sdk's parser accepts every template Parse accepts is checked in
// host/internal/bridge, so that this module needs only the standard
// library.)
func TestParse(t *testing.T) {
	for _, c := range []struct{ tmpl, want string }{
		{"", "is empty"},
		{"note://{id", `'{' at byte 7 is not closed`},
		{"{}", `expression "{}" at byte 0: is empty`},
		{"x://{a{b}", `'{' at byte 4 is not closed before the '{' at byte 6`},
		{"x://a}", `'}' at byte 5 closes no '{'`},
		{"x://{a,}", `has an empty variable name`},
		{"x://{a..b}", `"a..b" is not a variable name`},
		{"x://{a b}", `"a b" is not a variable name`},
		{"x://{=a}", `operator '=' is reserved by RFC 6570`},
		{"x://{|a}", `operator '|' is reserved`},
		{"x://{a:0}", `prefix "0" of "a" is not a length from 1 to 9999`},
		{"x://{a:10000}", `prefix "10000"`},
		{"x://{a:3*}", `"a:3" is not a variable name`},
		{"x://{a*:3}", `"a*" is not a variable name`},
		{"x://a b", `character ' ' at byte 5 is not allowed`},
		{"x://a<b>", `character '<' at byte 5`},
		{"x://100%", `'%' at byte 7 does not start a percent-encoded octet`},
		{"x://\xff", `byte 4 is not UTF-8`},
	} {
		_, err := Parse(c.tmpl)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Parse(%q) = %v, want an error saying %s", c.tmpl, err, c.want)
		}
	}
	for _, ok := range []string{
		"note://{id}", "https://{host}/x{?q}", "x:{+a}{#b}{.c}{/d}{;e}{?f}{&g}", "x:{a*,b:3,c}",
		"x:/%41{a}", "x:/é/{a}", "mem://users/{id}/files/{+path}", "x:{a.b%20c}",
	} {
		if _, err := Parse(ok); err != nil {
			t.Errorf("Parse(%q): %v", ok, err)
		}
	}
}

func TestScheme(t *testing.T) {
	for tmpl, want := range map[string]string{
		"note://{id}": "note", "https://{host}/x": "https", "urn:isbn:{n}": "urn", "a+b-c.d:{x}": "a+b-c.d",
		"{scheme}://x": "", "//{host}/x": "", "x{a}:y": "", "1x:{a}": "", "/a:b": "",
	} {
		tm, err := Parse(tmpl)
		if err != nil {
			t.Fatal(err)
		}
		if got := tm.Scheme(); got != want {
			t.Errorf("Scheme(%s) = %q, want %q", tmpl, got, want)
		}
	}
}

// A URI built to make the search backtrack stops at the step budget.
func TestMatchIsBounded(t *testing.T) {
	tm, err := Parse("x:{+a}{+b}{+c}{+d}{+e}!")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := tm.Match("x:" + strings.Repeat("a", 5000)); ok {
		t.Error("matched a URI without the final '!'")
	}
	// A long URI that does match is not cut short by the budget.
	tm, err = Parse("x:{+a}/{+b}")
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("b", 200_000)
	if vals, ok := tm.Match("x:a/" + long); !ok || vals["a"] != "a" || vals["b"] != long {
		t.Errorf("a 200 KB URI did not match: %v", ok)
	}
}

// Whatever the template and the URI, Parse and Match neither panic nor
// run unbounded, and a match's values all belong to the template's
// variables.
func FuzzMatch(f *testing.F) {
	for _, seed := range [][2]string{
		{"note://{id}", "note://42"}, {"https://{host}/x{?q}", "https://h/x?q=1"},
		{"file://{/path*}{?keys*}", "file:///a/b?x=1&y=2"}, {"x:{+a}{#b}{.c}{;d}{&e}", "x:a#b.c;d=1&e=2"},
		{"x:{a:3,b*}", "x:abc,1,2"}, {"x:/{a}/{a}", "x:/1/1"}, {"x:{a}{b}", "x:%41%42"},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, tmpl, uri string) {
		tm, err := Parse(tmpl)
		if err != nil {
			return
		}
		vals, ok := tm.Match(uri)
		if !ok {
			return
		}
		names := map[string]bool{}
		for _, n := range tm.Names() {
			names[n] = true
		}
		for k := range vals {
			if !names[k] {
				t.Fatalf("%q matching %q gave %q, not a variable of the template", tmpl, uri, k)
			}
		}
	})
}
