package host_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/mcphost/mcphost/host/internal/plugin"
	"github.com/mcphost/mcphost/internal/testutil"
)

// The scaffolds of `mcphost plugin new` read their input with input_read and
// set their output with output_write (ABI.md §7), which only mcphost's host
// provides: their exports are fed here, through plugin.Load, what
// cmd/mcphost's scaffold tests cannot hand them through a client.

// scaffold builds the mcphost CLI, scaffolds a plugin named demo in lang
// with it, builds it with its build.sh, and returns it loaded with
// plugin.Load (one instance, 4 MiB of memory). It skips when build.sh says
// the toolchain is missing (exit 3).
func scaffold(t *testing.T, lang string) *plugin.Plugin {
	t.Helper()
	root := testutil.RepoRoot(t)
	// Inside the repository, as plugins/NAME would be: an AssemblyScript
	// build.sh may use its scripts/conformance.sh.
	base, err := os.MkdirTemp(filepath.Join(root, "testdata"), "scaffold-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	cli := filepath.Join(base, "mcphost")
	build := exec.CommandContext(t.Context(), "go", "build", "-o", cli, "./cmd/mcphost")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/mcphost: %v\n%s", err, out)
	}
	dir := filepath.Join(base, "demo")
	if out, err := exec.CommandContext(t.Context(), cli, "plugin", "new", "--lang", lang, "demo", dir).CombinedOutput(); err != nil {
		t.Fatalf("plugin new --lang %s: %v\n%s", lang, err, out)
	}
	out, err := exec.CommandContext(t.Context(), filepath.Join(dir, "build.sh")).CombinedOutput()
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == 3 {
		t.Skipf("%s toolchain missing (build.sh exit 3; as root it installs it):\n%s", lang, out)
	}
	if err != nil {
		t.Fatalf("build.sh: %v\n%s", err, out)
	}
	wasm, err := os.ReadFile(filepath.Join(dir, "demo.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := plugin.Load(t.Context(), plugin.Options{Name: "demo", Wasm: wasm, Timeout: 10 * time.Second,
		MemoryMB: 4, MaxInstances: 1, MaxOutputBytes: 1 << 20, Logger: hclog.NewNullLogger()})
	if err != nil {
		t.Fatalf("load the %s scaffold: %v", lang, err)
	}
	t.Cleanup(func() { p.Close(context.Background()) })
	if v := p.ABIVersion(); v != 1 {
		t.Errorf("the %s scaffold declares ABI version %d, want 1", lang, v)
	}
	return p
}

// TestScaffoldsOwnChecks hands each scaffold's call_tool envelopes no host
// sends, and random mutations of a good one: each must end in the ABI's
// -32602 error or a JSON output, never a trap. A 64 KiB name, moved in and
// out in one host call each, comes back byte for byte.
func TestScaffoldsOwnChecks(t *testing.T) {
	for _, lang := range []string{"c", "rust", "as"} {
		t.Run(lang, func(t *testing.T) {
			p := scaffold(t, lang)
			const tool = "demo_hello"
			good := `{"request":{"name":"` + tool + `","arguments":{"name":"A\u00e9\ud83d\ude00\"b"}},"context":{"_meta":{}}}`
			inputs := []string{
				``, `{`, `[]`, `null`, `{"request":5}`, `{"request":{}}`, `{"request":{"name":"x"}}`,
				`{"request":{"name":"` + tool + `"}}`, `{"request":{"name":"` + tool + `","arguments":{"name":5}}}`,
				`{"request":{"name":"` + tool + `","arguments":{"name":"\u12"}}}`, `{"request":{"name":"` + tool + `","arguments":{"name":"a\`,
				`{"request":` + strings.Repeat("[", 10000), `{"request":{"name":"\ud800"}}`, "{\"request\":{\"name\":\"\xff\"}}",
			}
			r := rand.New(rand.NewPCG(7, 8))
			for range 300 {
				b := []byte(good)
				for range 1 + r.IntN(3) {
					if len(b) == 0 {
						break
					}
					i := r.IntN(len(b))
					switch r.IntN(3) {
					case 0:
						b[i] = `{}[]":,\u0 "`[r.IntN(12)]
					case 1:
						b = append(b[:i], b[i+1:]...)
					case 2:
						b = b[:i]
					}
				}
				inputs = append(inputs, string(b))
			}
			for _, in := range inputs {
				if _, e := cwatCall(t, p, "call_tool", []byte(in)); e != nil && e.Code != -32602 {
					t.Fatalf("call_tool(%.80q) = %+v, want -32602 or an output", in, e)
				}
			}
			// The good envelope decodes its escapes.
			if out, err := p.Call(t.Context(), "call_tool", []byte(good)); err != nil || !strings.Contains(string(out), `Hello, Aé😀\"b!`) {
				t.Errorf("call_tool(%s) = %s, %v", good, out, err)
			}
			// 64 KiB of text, every byte of which the plugin must copy:
			// in through input_read, out through output_write.
			big := make([]byte, 64<<10)
			for i := range big {
				big[i] = "abcdefghijklmnopqrstuvwxyz0123456789 .,;"[(i*7+i/41)%40]
			}
			in := `{"request":{"name":"` + tool + `","arguments":{"name":"` + string(big) + `"}},"context":{}}`
			out, err := p.Call(t.Context(), "call_tool", []byte(in))
			want := `"text":"Hello, ` + string(big) + `!"`
			if err != nil || !strings.Contains(string(out), want) {
				t.Errorf("call_tool(64 KiB name) = %.200s…, %v; want the name back", out, err)
			}
		})
	}
}
