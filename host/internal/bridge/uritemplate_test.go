package bridge

import (
	"testing"

	yosida "github.com/yosida95/uritemplate/v3"

	"github.com/mcphost/mcphost/abi/uritemplate"
)

// Every template abi/uritemplate accepts, go-sdk's parser
// (yosida95/uritemplate, which panics the registration of a template it
// refuses) accepts too. The check lives here, in the host's module, so that
// the abi module needs only the standard library.
func TestGoSDKAcceptsWhatParseAccepts(t *testing.T) {
	for _, ok := range []string{
		"note://{id}", "https://{host}/x{?q}", "x:{+a}{#b}{.c}{/d}{;e}{?f}{&g}", "x:{a*,b:3,c}",
		"x:/%41{a}", "x:/é/{a}", "mem://users/{id}/files/{+path}", "x:{a.b%20c}",
	} {
		if _, err := uritemplate.Parse(ok); err != nil {
			t.Errorf("Parse(%q): %v", ok, err)
		}
		if _, err := yosida.New(ok); err != nil {
			t.Errorf("go-sdk's parser refuses %q, which Parse accepts: %v", ok, err)
		}
	}
}

// Whatever the template, one that abi/uritemplate accepts go-sdk's parser
// accepts too.
func FuzzGoSDKAcceptsWhatParseAccepts(f *testing.F) {
	for _, seed := range []string{
		"note://{id}", "https://{host}/x{?q}", "file://{/path*}{?keys*}", "x:{+a}{#b}{.c}{;d}{&e}",
		"x:{a:3,b*}", "x:/{a}/{a}", "x:{a}{b}", "\U0007ffff",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, tmpl string) {
		if _, err := uritemplate.Parse(tmpl); err != nil {
			return
		}
		if _, err := yosida.New(tmpl); err != nil {
			t.Fatalf("Parse accepts %q, go-sdk's parser refuses it: %v", tmpl, err)
		}
	})
}
