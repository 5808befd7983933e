package host_test

// Hostile plugins written byte by byte (issue #14): each tries to outrun
// its deadline, freeze the host or take more memory than it is granted,
// through a real go-sdk client, and each test asserts the safe outcome and
// that the host still answers another plugin afterwards.

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/internal/testutil"
)

// hostileConfig is the config of one WAT plugin, "hostile", beside the
// well-behaved hello plugin, whose tool must keep answering.
func hostileConfig(t *testing.T, p testutil.WATPlugin, settings string) string {
	t.Helper()
	return hostileFileConfig(p.Build(t), settings)
}

// hostileFileConfig is hostileConfig for a plugin already in a file.
func hostileFileConfig(path, settings string) string {
	return `
[[plugin]]
name = "hostile"
path = "` + path + `"
timeout = "500ms"
` + settings + `

[[plugin]]
name = "hello"
path = "{hello}"
timeout = "5s"
`
}

// refusedAtLoad builds a host for cfgText and returns the error that
// refused it.
func refusedAtLoad(t *testing.T, cfgText string) error {
	t.Helper()
	cfgText = strings.ReplaceAll(cfgText, "{hello}", testutil.GoPlugin(t, "plugins/hello"))
	cfg, err := host.LoadConfig(testutil.WriteConfig(t, cfgText))
	if err != nil {
		t.Fatalf("LoadConfig: %v", err)
	}
	h, err := host.New(t.Context(), cfg, host.Options{Logger: hclog.NewNullLogger()})
	if err == nil {
		h.Close(context.Background())
		t.Fatal("the host loaded the hostile plugin")
	}
	return err
}

const oneTool = `{"tools":[{"name":"attack","inputSchema":{"type":"object"}}]}`

// outputEmpty ends a call_tool body with an empty result.
const outputEmpty = `(call $out (global.get $EMPTY) (i32.const 14)) (i32.const 0)`

// attack calls the hostile plugin's tool and returns the error and how
// long the call took.
func attack(t *testing.T, s *started) (error, time.Duration) {
	t.Helper()
	begin := time.Now()
	res, err := s.session.CallTool(t.Context(), &mcp.CallToolParams{Name: "attack", Arguments: map[string]any{}})
	if err == nil && res.IsError {
		err = fmt.Errorf("tool error: %v", res.Content)
	}
	return err, time.Since(begin)
}

func TestWATPluginHelperAnswers(t *testing.T) {
	s := start(t, hostileConfig(t, testutil.WATPlugin{Tools: oneTool}, ""))
	if err, _ := attack(t, s); err != nil {
		t.Fatalf("attack: %v", err)
	}
	afterFault(t, s)
}

// placeholder is a call_tool body of 44 nops and (i32.const 0): 47 bytes
// with its end, which patchCallTool replaces byte for byte.
var placeholder = strings.Repeat("nop ", 44) + "(i32.const 0)"

// patchCallTool builds p, whose CallTool must be placeholder, and replaces
// the body of call_tool with body (47 bytes, its end included): bytes no
// assembler would write.
func patchCallTool(t *testing.T, p testutil.WATPlugin, body []byte) string {
	t.Helper()
	if len(body) != 47 {
		t.Fatalf("body of %d bytes, want 47", len(body))
	}
	p.CallTool = placeholder
	wasm := testutil.WAT(t, p.Text())
	marker := append(bytes.Repeat([]byte{0x01}, 44), 0x41, 0x00, 0x0b)
	if bytes.Count(wasm, marker) != 1 {
		t.Fatal("placeholder not found once in the module")
	}
	wasm = bytes.Replace(wasm, marker, body, 1)
	path := filepath.Join(t.TempDir(), "patched.wasm")
	if err := os.WriteFile(path, wasm, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// hiddenLoop is a call_tool body that wazero runs as an endless loop while
// a reader of the standard encoding sees no loop at all: after 0xfd, wazero
// reads the sub-opcode as one byte (0x8c, i16x8.shr_s, then 0x00,
// unreachable, in a branch never taken) where the standard reads the
// LEB128 number 0x8c 0x00 = 12, v128.const, whose 16 bytes of immediate
// wazero runs as code: end the branch, loop forever, and open another if
// so that both readers see the blocks balanced.
var hiddenLoop = func() []byte {
	b := []byte{0x41, 0x00, 0x04, 0x40} // i32.const 0, if
	b = append(b, 0xfd, 0x0c)           // v128.const
	b = append(b, make([]byte, 16)...)
	b = append(b, 0x41, 0x00, 0xfd, 0x8c, 0x00) // i32.const 0, i16x8.shr_s, unreachable | v128.const
	b = append(b,
		0x0b,       // end (if)
		0x03, 0x40, // loop
		0x0c, 0x00, // br 0
		0x0b,                   // end (loop)
		0x41, 0x00, 0x04, 0x40, // i32.const 0, if
		0x01, 0x01, 0x01, 0x01, 0x01, 0x01) // nops: the 16 bytes are done
	return append(b, 0x0b, 0x41, 0x00, 0x0b) // end (if), i32.const 0, end
}()

// TestHiddenLoopIsRefused: a module whose bytes wazero reads otherwise
// than the standard (and the interrupt rewrite before issue #14) is
// refused at load, naming the bytes and the opt-in; with the opt-in, it
// runs under wazero's checks, which see the loop wazero runs, and the call
// stops at its deadline.
func TestHiddenLoopIsRefused(t *testing.T) {
	path := patchCallTool(t, testutil.WATPlugin{Tools: oneTool}, hiddenLoop)
	err := refusedAtLoad(t, hostileFileConfig(path, ""))
	for _, want := range []string{`"hostile"`, "0xfd 0x8c not followed by 0x01", `interrupt_checks = "wazero"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("load error %q does not say %q", err, want)
		}
	}

	s := start(t, hostileFileConfig(path, `interrupt_checks = "wazero"`))
	err, took := attack(t, s)
	if err == nil || !strings.Contains(err.Error(), "timeout") {
		t.Fatalf("attack: %v, want a timeout", err)
	}
	t.Logf("the hidden loop stopped after %v (timeout 500ms)", took)
	afterFault(t, s)
}

// TestReservedImportIsRefused: a plugin may not import the host's
// interrupt check (or anything else under mcphost:) itself.
func TestReservedImportIsRefused(t *testing.T) {
	p := testutil.WATPlugin{Tools: oneTool,
		Imports: `(import "mcphost:interrupt" "check" (func $check (result i32)))`}
	err := refusedAtLoad(t, hostileConfig(t, p, ""))
	if !strings.Contains(err.Error(), `imports from "mcphost:interrupt", a module name reserved for the host`) {
		t.Fatalf("load error %q does not name the reserved import", err)
	}
}

// TestUnsupportedInstructionIsRefused: an instruction outside the features
// the host enables (here a 0xfd sub-opcode wazero does not know, as in the
// issue) is refused at load rather than run under weaker checks.
func TestUnsupportedInstructionIsRefused(t *testing.T) {
	body := append(bytes.Repeat([]byte{0x01}, 40), 0xfd, 0xd3, 0x01, 0x1a, 0x41, 0x00, 0x0b)
	path := patchCallTool(t, testutil.WATPlugin{Tools: oneTool}, body)
	err := refusedAtLoad(t, hostileFileConfig(path, ""))
	if !strings.Contains(err.Error(), "opcode 0xfd 0xd3") {
		t.Fatalf("load error %q does not name the instruction", err)
	}
}

// TestLoopFreeCallTreeIsStopped: 2^40 calls and not one loop, which
// wazero's own checks never see, stop at the deadline.
func TestLoopFreeCallTreeIsStopped(t *testing.T) {
	p := testutil.WATPlugin{Tools: oneTool,
		CallTool: `(call $fan (i32.const 40)) (i32.const 0)`,
		Fields: `(func $fan (param $n i32)
		  (if (i32.eqz (local.get $n)) (then return))
		  (call $fan (i32.sub (local.get $n) (i32.const 1)))
		  (call $fan (i32.sub (local.get $n) (i32.const 1))))`}
	s := start(t, hostileConfig(t, p, ""))
	err, took := attack(t, s)
	if err == nil || !strings.Contains(err.Error(), "timeout") {
		t.Fatalf("attack: %v, want a timeout", err)
	}
	t.Logf("fan(40) stopped after %v (timeout 500ms)", took)
	afterFault(t, s)
}

// kernelLoop corrupts Extism's kernel with documented kernel calls only:
// it allocates a block (its header is at 65, its data at 77), writes
// -12 over the block's size, so that the next block the kernel looks at
// is the same block, and asks for a block that the kernel must search its
// list for.
const kernelLoop = `
  (drop (call $alloc (i64.const 40000)))
  (call $store_u64 (i64.const 69) (i64.const 0xfffffff4))
  (drop (call $alloc (i64.const 30000)))
  (i32.const 0)`

// TestKernelLoopIsStopped: the loop inside Extism's kernel ends (the
// kernel is instrumented and has a fuel per call), the call fails, and
// the plugin and the host keep working.
func TestKernelLoopIsStopped(t *testing.T) {
	s := start(t, hostileConfig(t, testutil.WATPlugin{Tools: oneTool, CallTool: kernelLoop}, ""))
	for range 2 {
		err, took := attack(t, s)
		if err == nil {
			t.Fatal("attack succeeded")
		}
		t.Logf("the kernel loop stopped after %v (timeout 500ms): %v", took, err)
	}
	afterFault(t, s)
}

// TestHostFunctionLoopEndsAtTheDeadline: a plugin calling config_get with
// a 120 MiB key in a loop (each call was one tick of its budget and a
// 120 MiB copy: 31-34 s past a 1 s deadline) ends at its deadline, through
// a real client, and the host keeps serving.
func TestHostFunctionLoopEndsAtTheDeadline(t *testing.T) {
	p := testutil.WATPlugin{Tools: oneTool,
		Imports: `(import "extism:host/env" "config_get" (func $config_get (param i64) (result i64)))`,
		CallTool: `(local $k i64)
		  (local.set $k (call $alloc (i64.const 125829120)))
		  (loop $l (drop (call $config_get (local.get $k))) (br $l))
		  (i32.const 0)`}
	s := start(t, hostileConfig(t, p, "memory_mb = 256\nconfig = { greeting = \"hello\" }"))
	err, took := attack(t, s)
	if err == nil || !strings.Contains(err.Error(), "timeout") {
		t.Fatalf("attack: %v, want a timeout", err)
	}
	if took > 20*time.Second { // it ended at all
		t.Fatalf("the call took %v (timeout 500ms)", took)
	}
	t.Logf("config_get's loop stopped after %v (timeout 500ms)", took)
	afterFault(t, s)
}

// spinning starts n calls of the hostile plugin's tool, and returns a
// channel that receives each one's error when it ends.
func spinning(t *testing.T, s *started, n int) <-chan error {
	done := make(chan error, n)
	for range n {
		go func() {
			_, err := s.session.CallTool(t.Context(), &mcp.CallToolParams{Name: "attack", Arguments: map[string]any{}})
			done <- err
		}()
	}
	return done
}

// TestSpinningPluginsDoNotFreezeTheHost: while two calls spin in Wasm
// (two cores here), a garbage collection -- which stops the world, and so
// waits for every goroutine to reach Go code -- completes, and another
// plugin answers, before the spinning calls end at their deadline.
func TestSpinningPluginsDoNotFreezeTheHost(t *testing.T) {
	const entering = `{"level":"info","data":"entering the loop"}`
	for name, callTool := range map[string]string{
		"plugin loop": `(loop $l (br $l)) (i32.const 0)`,
		"kernel loop": kernelLoop,
	} {
		t.Run(name, func(t *testing.T) {
			// Each call logs "entering the loop" (through
			// notify_logging_message) before it loops, so that the test
			// knows both are in Wasm when it collects garbage.
			p := testutil.WATPlugin{Tools: oneTool,
				Imports:  `(import "extism:host/user" "notify_logging_message" (func $notify (param i64)))`,
				Fields:   `(data (i32.const 65536) ` + strconv.Quote(entering) + `)`,
				CallTool: `(call $notify (call $block (i32.const 65536) (i32.const ` + strconv.Itoa(len(entering)) + `))) ` + callTool,
			}
			s := start(t, strings.Replace(hostileConfig(t, p, "max_instances = 2"), `timeout = "500ms"`, `timeout = "5s"`, 1))
			// echo is activated first: its activation (compiling, and for a
			// plugin served from its cached description reading and
			// rewriting its module) is not what this test is about.
			callText(t, s.session, "echo", map[string]any{"text": "warm"})
			done := spinning(t, s, 2)
			for deadline := time.Now().Add(time.Minute); strings.Count(s.log.String(), "entering the loop") < 2; time.Sleep(5 * time.Millisecond) {
				if time.Now().After(deadline) { // a hang guard only
					t.Fatalf("the two calls did not both enter the plugin; log:\n%s", s.log.String())
				}
			}
			runtime.GC()
			res, text := callText(t, s.session, "echo", map[string]any{"text": "still here"})
			if res.IsError || text != "still here" {
				t.Fatalf("echo while plugins spin = %q", text)
			}
			// The kernel's loop ends when its fuel runs out, maybe before
			// the echo; the plugin's only at the deadline.
			ended := 0
			if name == "plugin loop" {
				select {
				case err := <-done:
					t.Fatalf("a spinning call ended before the GC and echo were done: %v", err)
				default:
				}
			}
			for ; ended < 2; ended++ {
				if err := <-done; err == nil {
					t.Error("a spinning call succeeded")
				}
			}
		})
	}
}

// TestTableGrowthIsCapped: tables count against memory_mb. table.grow by
// 2^25 elements (256 MiB of host memory each) fails inside a 32 MiB cap,
// and a table that starts larger than the cap is refused at load.
func TestTableGrowthIsCapped(t *testing.T) {
	grow := `(if (i32.ne (table.grow $t (ref.null func) (i32.const 0x2000000)) (i32.const -1)) (then unreachable))`
	p := testutil.WATPlugin{Tools: oneTool,
		CallTool: strings.Repeat(grow, 4) + outputEmpty,
		Fields:   `(table $t 1 funcref)`}
	s := start(t, hostileConfig(t, p, "memory_mb = 32"))
	before := testutil.RSS(t)
	if err, _ := attack(t, s); err != nil {
		t.Fatalf("attack: %v (a table.grow past the cap succeeded)", err)
	}
	if grew := testutil.RSS(t) - before; grew > 64<<20 {
		t.Errorf("RSS grew by %d MiB", grew>>20)
	}
	afterFault(t, s)

	big := testutil.WATPlugin{Tools: oneTool, Fields: `(table 0x1000000 funcref)`}
	err := refusedAtLoad(t, hostileConfig(t, big, "memory_mb = 32"))
	if !strings.Contains(err.Error(), "table 0 starts with 16777216 elements; the cap is 4194304") {
		t.Fatalf("load error %q does not name the table cap", err)
	}
}
