package host_test

import (
	"context"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/internal/shipped"
	"github.com/mcphost/mcphost/host/internal/wasmbin"
	"github.com/mcphost/mcphost/internal/testutil"
)

// describeModule returns the module at path with the description a live
// load of it gives embedded, as `mcphost plugin describe` writes it.
func describeModule(t *testing.T, path string) []byte {
	t.Helper()
	wasm, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := host.ParseConfig("describe.toml", []byte(fmt.Sprintf(
		"[server]\nwatch = false\nlock_file = \"off\"\ncache_dir = %q\n[[plugin]]\nname = \"described\"\npath = %q\ntimeout = \"30s\"\n",
		testutil.CompilationCacheDir(t), path)))
	if err != nil {
		t.Fatal(err)
	}
	h, err := host.New(t.Context(), cfg, host.Options{LoadEveryPlugin: true})
	if err != nil {
		t.Fatalf("load %s to describe it: %v", path, err)
	}
	info := h.Plugins()[0]
	if err := h.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if info.Description == nil {
		t.Fatalf("%s: no description: %s", path, info.ShippedDescription)
	}
	out, err := host.EmbedDescription(wasm, info.Description)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// shippedConfig serves versioned.wasm with its caches in %s, background
// compilation %v.
const shippedConfig = `
[server]
watch = false
cache_dir = %q
lock_file = "off"
background_compile = %v

[server.metrics]
enabled = true

[[plugin]]
name = "versioned"
path = "versioned.wasm"
timeout = "10s"
idle_timeout = "1h"
`

// shippedDir writes wasm as versioned.wasm and the config into a new
// directory whose cache holds no description (its compiled code is the
// tests' shared cache).
func shippedDir(t *testing.T, wasm []byte, background bool) string {
	t.Helper()
	dir := t.TempDir()
	cache := filepath.Join(dir, "cache")
	sharedCompilations(t, cache)
	if err := os.WriteFile(filepath.Join(dir, "versioned.wasm"), wasm, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "mcphost.toml"), []byte(fmt.Sprintf(shippedConfig, cache, background)), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// liveTools is what the plugin at path lists, loaded from its module.
func liveTools(t *testing.T, path string) []string {
	t.Helper()
	wasm, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dir := describedDir(t, "off")
	if err := os.WriteFile(filepath.Join(dir, "versioned.wasm"), wasm, 0o644); err != nil {
		t.Fatal(err)
	}
	h := startIn(t, dir)
	defer h.close()
	return describedTools(t, h.session)
}

// TestShippedDescriptionListsWithoutCompiling: a host with no cached
// description serves a plugin's lists from the description its module
// ships, compiling nothing before the first call; that call checks it, and
// caches it, so the next start reads it from the cache.
func TestShippedDescriptionListsWithoutCompiling(t *testing.T) {
	v1 := testutil.GoPlugin(t, "testdata/plugins/versioned")
	want := liveTools(t, v1)
	dir := shippedDir(t, describeModule(t, v1), false)

	h := startIn(t, dir)
	if got := describedTools(t, h.session); !slices.Equal(got, want) {
		t.Fatalf("lists %q, want %q", got, want)
	}
	if v := metric(t, h.host, activationsMetric); v != 0 {
		t.Fatalf("%v activations before any call, want 0 (listed from the module's description)", v)
	}
	if !strings.Contains(h.log.String(), "described from its description the module ships") {
		t.Errorf("the log does not say where the lists came from:\n%s", h.log)
	}
	if _, text := callText(t, h.session, "version", nil); text != "v1" {
		t.Fatalf("version = %q, want v1", text)
	}
	if v := metric(t, h.host, activationsMetric); v != 1 {
		t.Fatalf("%v activations after the first call, want 1", v)
	}
	// That call ran in wazero's interpreter while the module compiled;
	// once compiled, calls run compiled.
	if !strings.Contains(h.log.String(), "plugin runs interpreted while it compiles") {
		t.Errorf("the first activation did not run interpreted:\n%s", h.log)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for !strings.Contains(h.log.String(), "plugin compiled; calls run compiled from now on") {
		if time.Now().After(deadline) {
			t.Fatalf("the interpreted activation was never replaced by the compiled one:\n%s", h.log)
		}
		time.Sleep(10 * time.Millisecond)
	}
	for range 3 {
		if _, text := callText(t, h.session, "version", nil); text != "v1" {
			t.Fatalf("version = %q after the compile, want v1", text)
		}
	}
	h.close()
	if n := len(entries(t, filepath.Join(dir, "cache"))); n != 1 {
		t.Fatalf("%d cached descriptions after a verified first call, want 1", n)
	}

	again := startIn(t, dir)
	if got := describedTools(t, again.session); !slices.Equal(got, want) {
		t.Fatalf("next start lists %q, want %q", got, want)
	}
	if !strings.Contains(again.log.String(), "described from its cached description") {
		t.Errorf("the next start did not list from the cache:\n%s", again.log)
	}
}

// TestShippedDescriptionThatLiesIsNeverServedStale: a module that ships
// another module's description (v2's two tools in v1's module) is listed
// as it says until its first activation, which refuses the call, naming
// the mismatch, and reloads the plugin from its module: what is served
// from then on is what the module lists. With background compilation the
// lie is found before any call.
func TestShippedDescriptionThatLiesIsNeverServedStale(t *testing.T) {
	v1 := testutil.GoPlugin(t, "testdata/plugins/versioned")
	v2 := testutil.GoPlugin(t, "testdata/plugins/versioned", "v2")
	want := liveTools(t, v1)
	v1wasm, err := os.ReadFile(v1)
	if err != nil {
		t.Fatal(err)
	}
	lie, err := host.EmbedDescription(v1wasm, descriptionOf(t, describeModule(t, v2)))
	if err != nil {
		t.Fatal(err)
	}

	t.Run("first call", func(t *testing.T) {
		h := startIn(t, shippedDir(t, lie, false))
		if got := describedTools(t, h.session); len(got) != 2 {
			t.Fatalf("lists %q, want the two tools the description claims", got)
		}
		res, err := h.session.CallTool(t.Context(), &mcp.CallToolParams{Name: "version"})
		if err == nil {
			t.Fatalf("a call was served on a description the module does not match: %+v", res)
		}
		for _, want := range []string{`plugin "versioned"`, "does not match the description its module ships", "list_tools now answers differently"} {
			if !strings.Contains(err.Error(), want) {
				t.Fatalf("refused with %q, which does not say %q", err, want)
			}
		}
		waitToolsChanged(t, h)
		if got := describedTools(t, h.session); !slices.Equal(got, want) {
			t.Fatalf("after the reload the host lists %q, want the module's %q", got, want)
		}
		if _, text := callText(t, h.session, "version", nil); text != "v1" {
			t.Fatalf("version = %q, want v1", text)
		}
	})

	t.Run("background", func(t *testing.T) {
		h := startIn(t, shippedDir(t, lie, true))
		waitToolsChanged(t, h)
		if got := describedTools(t, h.session); !slices.Equal(got, want) {
			t.Fatalf("after the background check the host lists %q, want the module's %q", got, want)
		}
		if _, text := callText(t, h.session, "version", nil); text != "v1" {
			t.Fatalf("version = %q, want v1", text)
		}
	})
}

// descriptionOf returns the description a described module ships.
func descriptionOf(t *testing.T, wasm []byte) []byte {
	t.Helper()
	data, found, err := shipped.Find(wasm)
	if err != nil || !found {
		t.Fatalf("the module ships no description (%v)", err)
	}
	return data
}

// TestUnusableShippedDescriptionIsLoadedAround: a description section
// that is not one this host reads is ignored with a warning, and the
// plugin is loaded from its module.
func TestUnusableShippedDescriptionIsLoadedAround(t *testing.T) {
	v1 := testutil.GoPlugin(t, "testdata/plugins/versioned")
	want := liveTools(t, v1)
	v1wasm, err := os.ReadFile(v1)
	if err != nil {
		t.Fatal(err)
	}
	for name, payload := range map[string]string{
		"not JSON":       "garbage",
		"another format": `{"format":99,"flavor":"mcphost"}`,
		"unknown field":  `{"format":1,"flavor":"mcphost","abi_version":1,"exports":[],"lists":[],"extra":1}`,
		"hyper-mcp":      `{"format":1,"flavor":"hyper-mcp v1","abi_version":0,"exports":[],"lists":[]}`,
		"unknown export": `{"format":1,"flavor":"mcphost","abi_version":1,"exports":["steal"],"lists":[]}`,
	} {
		t.Run(name, func(t *testing.T) {
			wasm, err := host.EmbedDescription(v1wasm, []byte(payload))
			if err != nil {
				t.Fatal(err)
			}
			h := startIn(t, shippedDir(t, wasm, false))
			if v := metric(t, h.host, activationsMetric); v != 1 {
				t.Fatalf("%v activations at start, want 1 (loaded from the module)", v)
			}
			if !strings.Contains(h.log.String(), "unusable; loading the plugin") && !strings.Contains(h.log.String(), "not of an mcphost plugin") {
				t.Errorf("no warning about the description:\n%s", h.log)
			}
			if got := describedTools(t, h.session); !slices.Equal(got, want) {
				t.Fatalf("lists %q, want %q", got, want)
			}
		})
	}
}

// salted returns wasm with a custom section that makes its digest, and so
// its compiled code, its own.
func salted(wasm []byte, salt int) []byte {
	body := wasmbin.AppendName(nil, "salt")
	body = append(body, fmt.Sprint(salt)...)
	return wasmbin.AppendSection(slices.Clone(wasm), 0, body)
}

// compiledFiles lists the compiled modules under dir with their
// modification times.
func compiledFiles(t *testing.T, dir string) map[string]time.Time {
	t.Helper()
	files := map[string]time.Time{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() && strings.Contains(path, "wazero-") {
			info, err := d.Info()
			if err != nil {
				return err
			}
			files[path] = info.ModTime()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// rustPlugins writes n distinct copies of plugins/rust (each described
// when described is set) and a config serving them into a new directory,
// with an empty cache; it returns the directory and the config's path.
func rustPlugins(t *testing.T, n int, described bool, server string) (dir, cfgPath string) {
	t.Helper()
	dir = t.TempDir()
	rust := filepath.Join(testutil.RepoRoot(t), "plugins", "rust", "rust.wasm")
	var wasm []byte
	if described {
		wasm = describeModule(t, rust)
	} else {
		var err error
		if wasm, err = os.ReadFile(rust); err != nil {
			t.Fatal(err)
		}
	}
	var cfg strings.Builder
	fmt.Fprintf(&cfg, "[server]\nwatch = false\nlock_file = \"off\"\ncache_dir = %q\n%s\n[server.metrics]\nenabled = true\n", filepath.Join(dir, "cache"), server)
	for i := range n {
		name := fmt.Sprintf("r%d", i)
		if err := os.WriteFile(filepath.Join(dir, name+".wasm"), salted(wasm, i), 0o644); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&cfg, "[[plugin]]\nname = %q\npath = %q\nprefix = %q\ntimeout = \"60s\"\n", name, name+".wasm", name+"_")
	}
	cfgPath = filepath.Join(dir, "mcphost.toml")
	if err := os.WriteFile(cfgPath, []byte(cfg.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, cfgPath
}

// TestBackgroundCompileUnderLoad: six plugins described by their modules,
// on an empty cache, are served at once; while the host compiles them in
// the background, clients call all of them without a failure, each call
// to a plugin not compiled yet compiling it itself (or joining the
// background's activation); in the end each module was compiled once,
// into the cache.
func TestBackgroundCompileUnderLoad(t *testing.T) {
	const n = 6
	dir, cfgPath := rustPlugins(t, n, true, "")
	h, logs := newHostFromFile(t, cfgPath)
	if v := metric(t, h, "mcphost_code_loads_total"); v > n {
		t.Fatalf("%v code loads at start, want at most %d", v, n)
	}
	cs := connect(t, h, nil, "")
	tools, err := cs.ListTools(t.Context(), nil)
	if err != nil || len(tools.Tools) != 2*n {
		t.Fatalf("tools/list: %v, %d tools; want %d at once", err, len(tools.Tools), 2*n)
	}
	var calls, failed atomic.Int64
	var wg sync.WaitGroup
	for c := range 4 {
		wg.Go(func() {
			for round := range 3 {
				for i := range n {
					name := fmt.Sprintf("r%d_sha256", (i+c+round)%n)
					res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: map[string]any{"text": "abc"}})
					calls.Add(1)
					if err != nil || res.IsError {
						failed.Add(1)
						t.Errorf("%s: %v %+v", name, err, res)
					}
				}
			}
		})
	}
	wg.Wait()
	if failed.Load() > 0 {
		t.Fatalf("%d of %d calls failed during the background compilation\n%s", failed.Load(), calls.Load(), logs)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for metric(t, h, "mcphost_plugins_preparing") > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the background compilation did not end:\n%s", logs)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Each module once, and Extism's kernel, which every plugin's runtime
	// compiles beside its module. (A plugin a call activated first ran
	// interpreted and compiles beside the queue: wait for those too.)
	for got := len(compiledFiles(t, filepath.Join(dir, "cache"))); got != n+1; got = len(compiledFiles(t, filepath.Join(dir, "cache"))) {
		if got > n+1 || time.Now().After(deadline) {
			t.Fatalf("%d compiled modules in the cache, want %d (each once, and the kernel)\n%s", got, n+1, logs)
		}
		time.Sleep(20 * time.Millisecond)
	}
	for i := range n {
		// Prepared in the background and released, then activated again
		// by a call (from the cache), or activated by a call first.
		if v := metric(t, h, fmt.Sprintf(`mcphost_plugin_activations_total{plugin="r%d"}`, i)); v < 1 || v > 2 {
			t.Errorf("r%d: %v activations, want 1 or 2", i, v)
		}
	}
}

// TestWarmThenStartCompilesNothing: `plugin warm` (Options.Warm) fills an
// empty cache_dir with each plugin's compiled code and description; a
// host started on it then lists every plugin without activating any, and
// serves a call to each without compiling: the cache's compiled modules
// are the same files, unwritten.
func TestWarmThenStartCompilesNothing(t *testing.T) {
	const n = 3
	dir, cfgPath := rustPlugins(t, n, false, "")
	cfg, err := host.LoadConfig(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	warm, err := host.New(t.Context(), cfg, host.Options{Warm: true, Logger: hclog.NewNullLogger()})
	if err != nil {
		t.Fatalf("warm: %v", err)
	}
	if err := warm.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	cache := filepath.Join(dir, "cache")
	compiled := compiledFiles(t, cache)
	if len(compiled) != n+1 { // and Extism's kernel
		t.Fatalf("warm left %d compiled modules, want %d: %v", len(compiled), n+1, slices.Collect(maps.Keys(compiled)))
	}
	if got := len(entries(t, cache)); got != n {
		t.Fatalf("warm left %d descriptions, want %d", got, n)
	}

	h, logs := newHostFromFile(t, cfgPath)
	for i := range n {
		if v := metric(t, h, fmt.Sprintf(`mcphost_plugin_activations_total{plugin="r%d"}`, i)); v != 0 {
			t.Fatalf("r%d: %v activations at start, want 0 (listed from the warm cache)", i, v)
		}
	}
	cs := connect(t, h, nil, "")
	for i := range n {
		if _, text := callText(t, cs, fmt.Sprintf("r%d_sha256", i), map[string]any{"text": "abc"}); !strings.Contains(text, "ba7816bf") {
			t.Fatalf("r%d_sha256: %q", i, text)
		}
	}
	if after := compiledFiles(t, cache); !maps.EqualFunc(after, compiled, time.Time.Equal) {
		t.Fatalf("the start compiled: the cache's modules went from %v to %v\n%s", compiled, after, logs)
	}
	if v := metric(t, h, "mcphost_plugins_prepared_total"); v != 0 {
		t.Errorf("%v plugins prepared in the background, want 0 (all cached)", v)
	}
}

// TestWarmNeedsACache: warm with cache_dir = "off" fails, saying why.
func TestWarmNeedsACache(t *testing.T) {
	_, cfgPath := rustPlugins(t, 1, false, "")
	cfg, err := host.LoadConfig(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Server.CacheDir = "off"
	_, err = host.New(t.Context(), cfg, host.Options{Warm: true, Logger: hclog.NewNullLogger()})
	if err == nil || !strings.Contains(err.Error(), `cache_dir = "off"`) {
		t.Fatalf("warm without a cache: %v", err)
	}
}

// TestReloadLoadsADescribedModule: a reload that replaces a serving
// plugin's module loads the new module, whatever description it ships,
// so that a module that does not load leaves the old generation serving;
// one that loads is served (and activated by the reload itself).
func TestReloadLoadsADescribedModule(t *testing.T) {
	v1 := testutil.GoPlugin(t, "testdata/plugins/versioned")
	v1desc := descriptionOf(t, describeModule(t, v1))
	dir := shippedDir(t, describeModule(t, v1), false)
	h := startIn(t, dir)
	if _, text := callText(t, h.session, "version", nil); text != "v1" {
		t.Fatalf("version = %q, want v1", text)
	}

	// A module that declares an unknown ABI version, shipping v1's
	// description: listed from it, it would be served until its first call.
	broken, err := host.EmbedDescription(badABIModule, v1desc)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "versioned.wasm"), broken, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := h.host.Reload(t.Context()); err == nil || !strings.Contains(err.Error(), "declares ABI version 2") || !strings.Contains(err.Error(), "previous version keeps serving") {
		t.Fatalf("reload to a broken described module: %v", err)
	}
	if _, text := callText(t, h.session, "version", nil); text != "v1" {
		t.Fatalf("after the failed reload version = %q, want v1 still", text)
	}

	v2 := describeModule(t, testutil.GoPlugin(t, "testdata/plugins/versioned", "v2"))
	if err := os.WriteFile(filepath.Join(dir, "versioned.wasm"), v2, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := h.host.Reload(t.Context()); err != nil {
		t.Fatalf("reload to v2: %v", err)
	}
	// The counter is the new generation's.
	if v := metric(t, h.host, activationsMetric); v != 1 {
		t.Fatalf("activations %v after the reload, before any call; want 1 (the new module loaded by the reload)", v)
	}
	if _, text := callText(t, h.session, "version", nil); text != "v2" {
		t.Fatalf("version = %q, want v2", text)
	}
}

// TestInterpretedActivationKeepsTheSandbox: a plugin's first activation
// from its shipped description runs in wazero's interpreter, under the same
// limits as compiled code: an endless loop ends at the deadline, an
// allocation loop at the memory cap, a trap is a trap, and the plugin
// still answers after each.
func TestInterpretedActivationKeepsTheSandbox(t *testing.T) {
	dir := t.TempDir()
	cache := filepath.Join(dir, "cache")
	sharedCompilations(t, cache)
	if err := os.WriteFile(filepath.Join(dir, "faulty.wasm"), describeModule(t, testutil.GoPlugin(t, "testdata/plugins/faulty")), 0o644); err != nil {
		t.Fatal(err)
	}
	// timeout: the deadline that ends spin, and also what an echo on a
	// fresh interpreted instance after a fault must fit in: 2 s was
	// reached under -race on a loaded machine.
	cfg := fmt.Sprintf("[server]\nwatch = false\nlock_file = \"off\"\ncache_dir = %q\nbackground_compile = false\n[[plugin]]\nname = \"faulty\"\npath = %q\ntimeout = \"6s\"\nmemory_mb = 64\n",
		cache, filepath.Join(dir, "faulty.wasm"))
	cfgPath := filepath.Join(dir, "mcphost.toml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	h, logs := newHostFromFile(t, cfgPath)
	cs := connect(t, h, nil, "")
	began := time.Now()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "spin", Arguments: map[string]any{}})
	if err == nil && !res.IsError {
		t.Fatalf("spin returned: %+v", res)
	}
	if !strings.Contains(logs.String(), "plugin runs interpreted while it compiles") {
		t.Fatalf("the first activation did not run interpreted:\n%s", logs)
	}
	if took := time.Since(began); took > time.Minute {
		t.Fatalf("spin took %v", took)
	}
	// alloc: Go's runtime traps (unreachable) when the cap refuses memory.
	for _, c := range []struct{ tool, want string }{{"alloc", ""}, {"trap", "out of bounds"}} {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: c.tool, Arguments: map[string]any{}})
		text := fmt.Sprint(err)
		if err == nil {
			if !res.IsError {
				t.Fatalf("%s succeeded: %+v", c.tool, res)
			}
			text = fmt.Sprint(res.Content)
		}
		if !strings.Contains(strings.ToLower(text), c.want) {
			t.Errorf("%s failed with %q, which does not say %q", c.tool, text, c.want)
		}
		if _, echo := callText(t, cs, "echo", map[string]any{"text": "still here"}); echo != "still here" {
			t.Fatalf("echo after %s: %q", c.tool, echo)
		}
	}
}

// TestShippedDescriptionIsNotUsedWithConfig: a plugin given config (or
// env) is loaded from its module at start, whatever description it ships:
// its lists may depend on that config, which the description was not made
// with, and a client must never see lists the plugin would not give.
func TestShippedDescriptionIsNotUsedWithConfig(t *testing.T) {
	v1 := testutil.GoPlugin(t, "testdata/plugins/versioned")
	dir := shippedDir(t, describeModule(t, v1), false)
	cfgPath := filepath.Join(dir, "mcphost.toml")
	cfg, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfgPath, append(cfg, "config = { region = \"eu\" }\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	h := startIn(t, dir)
	if v := metric(t, h.host, activationsMetric); v != 1 {
		t.Fatalf("%v activations at start, want 1 (loaded from its module)", v)
	}
	if strings.Contains(h.log.String(), "described from its description the module ships") {
		t.Fatalf("a plugin with config was listed from its shipped description:\n%s", h.log)
	}
}
