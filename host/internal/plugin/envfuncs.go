package plugin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"unsafe"

	extism "github.com/extism/go-sdk"
	"github.com/tetratelabs/wazero/api"

	"github.com/mcphost/mcphost/host/internal/clip"
	"github.com/mcphost/mcphost/host/internal/hostfn"
)

// Extism's own host functions (extism:host/env) read a block the plugin
// names whole before they look at it: config_get and var_get copy a key of
// any length to look it up, log_info copies a message of any length that
// the host then cuts at 2 KiB, var_set copies a name and a value before it
// checks the store's cap. And each is one tick of the plugin's interrupt
// budget, so a plugin calling one with a 100 MiB block in a loop ran
// seconds past its deadline and made the host allocate gigabytes. They
// also call the kernel with context.Background, outside the call's
// deadline. So the host redirects the plugin's imports of them
// (imports.go) to envFunctions, which keep Extism's signatures and
// behaviour but check the call's deadline first, read a block's length
// from the kernel before reading it, and read no more than the answer
// needs: a key longer than any that could match misses unread, a log
// message is read up to the 2 KiB the log keeps.

// envImportModule is the import module Extism's env functions are
// redirected to; "mcphost:" is reserved (kernelfuncs.go).
const envImportModule = "mcphost:env"

// envRedirected are the functions of extism:host/env that envFunctions
// answer. The rest move no bytes of the plugin's choosing (load_u64,
// store_u64, input_load_u64, http_status_code, get_log_level) or are
// redirected elsewhere (the kernel functions, http_request).
var envRedirected = []string{
	"config_get", "var_get", "var_set", "http_headers",
	"log_trace", "log_debug", "log_info", "log_warn", "log_error",
}

// envRedirects maps each of envRedirected to the same name in
// envImportModule.
func envRedirects() map[importName]importName {
	m := make(map[importName]importName, len(envRedirected))
	for _, name := range envRedirected {
		m[importName{extismEnv, name}] = importName{envImportModule, name}
	}
	return m
}

// varEntryOverhead is what Extism counts against max_var_bytes for each
// variable besides its name and value.
const varEntryOverhead = int(unsafe.Sizeof([]byte{}) + unsafe.Sizeof(""))

// envFunctions are the host's implementations of envRedirected.
func envFunctions() []extism.HostFunction {
	fns := []extism.HostFunction{
		envFunction("config_get", []api.ValueType{i64}, []api.ValueType{i64}, configGet),
		envFunction("var_get", []api.ValueType{i64}, []api.ValueType{i64}, varGet),
		envFunction("var_set", []api.ValueType{i64, i64}, nil, varSet),
		envFunction("http_headers", nil, []api.ValueType{i64}, httpHeaders),
	}
	for _, l := range []struct {
		name  string
		level extism.LogLevel
	}{
		{"log_trace", extism.LogLevelTrace}, {"log_debug", extism.LogLevelDebug},
		{"log_info", extism.LogLevelInfo}, {"log_warn", extism.LogLevelWarn}, {"log_error", extism.LogLevelError},
	} {
		fns = append(fns, envFunction(l.name, []api.ValueType{i64}, nil, func(k kernelAccess, p *extism.Plugin, stack []uint64) {
			logMessage(k, p, l.level, stack[0])
		}))
	}
	return fns
}

// envFunction defines host function name of envImportModule, which checks
// the call's deadline and finds the call's kernel and Extism plugin before
// it runs do.
func envFunction(name string, params, results []api.ValueType, do func(k kernelAccess, p *extism.Plugin, stack []uint64)) extism.HostFunction {
	fn := extism.NewHostFunctionWithStack(name, func(ctx context.Context, _ *extism.CurrentPlugin, stack []uint64) {
		hostfn.CheckDeadline(ctx, name)
		p, _ := ctx.Value(extism.PluginCtxKey("plugin")).(*extism.Plugin)
		if p == nil {
			panic(fmt.Errorf("%s: called outside a call of the plugin (from a start function?)", name))
		}
		do(kernelOf(ctx, name), p, stack)
	}, params, results)
	fn.SetNamespace(envImportModule)
	return fn
}

// configGet: (i64 offset of a key) -> i64 offset of its value, or 0 when
// the config has no such key. A key longer than every key of the config
// misses without being read. The key's block is not freed (as Extism).
func configGet(k kernelAccess, p *extism.Plugin, stack []uint64) {
	offset := stack[0]
	n := k.length(offset)
	longest := 0
	for key := range p.Config {
		longest = max(longest, len(key))
	}
	stack[0] = 0
	if n > uint64(longest) {
		return
	}
	if value, ok := p.Config[string(k.view(offset, n))]; ok {
		stack[0] = k.write([]byte(value))
	}
}

// varGet: (i64 offset of a name) -> i64 offset of the variable's value, or
// 0 when there is none; the name's block is freed (as Extism). A name that
// could not fit in the store (max_var_bytes) misses without being read.
func varGet(k kernelAccess, p *extism.Plugin, stack []uint64) {
	offset := stack[0]
	n := k.length(offset)
	stack[0] = 0
	var value []byte
	found := false
	if n < uint64(max(p.MaxVarBytes, 0)) {
		value, found = p.Var[string(k.view(offset, n))]
	}
	k.free(offset)
	if found {
		stack[0] = k.write(value)
	}
}

// varSet: (i64 offset of a name, i64 offset of a value or 0) sets the
// variable, or deletes it when the value is 0; both blocks are freed. As
// Extism: it traps when vars are off (max_var_bytes = 0) or when the
// store with the new value would reach max_var_bytes; a name and value
// that alone would are refused before they are read.
func varSet(k kernelAccess, p *extism.Plugin, stack []uint64) {
	nameOffset, valueOffset := stack[0], stack[1]
	if p.MaxVarBytes == 0 {
		panic(errors.New("var_set: vars are disabled by this host"))
	}
	nameLen := k.length(nameOffset)
	if valueOffset == 0 {
		if nameLen < uint64(max(p.MaxVarBytes, 0)) {
			delete(p.Var, string(k.view(nameOffset, nameLen)))
		}
		k.free(nameOffset)
		return
	}
	valueLen := k.length(valueOffset)
	full := func(size uint64) {
		if size >= uint64(max(p.MaxVarBytes, 0)) {
			panic(fmt.Errorf("var_set: the variable store is full: %d bytes with this one, max_var_bytes %d", size, p.MaxVarBytes))
		}
	}
	full(uint64(varEntryOverhead) + nameLen + valueLen) // also bounds both below 2^63
	size := uint64(varEntryOverhead) + nameLen + valueLen
	for key, v := range p.Var {
		size += uint64(len(key) + len(v) + varEntryOverhead)
	}
	full(size)
	name := string(k.view(nameOffset, nameLen))
	value := append([]byte(nil), k.view(valueOffset, valueLen)...)
	k.free(nameOffset)
	k.free(valueOffset)
	p.Var[name] = value
}

// httpHeaders: () -> i64 offset of the headers of the last http_request's
// response as a JSON object, or 0 when none are kept.
func httpHeaders(k kernelAccess, p *extism.Plugin, stack []uint64) {
	stack[0] = 0
	if p.LastResponseHeaders == nil {
		return
	}
	b, err := json.Marshal(p.LastResponseHeaders)
	if err != nil {
		panic(fmt.Errorf("http_headers: %w", err))
	}
	stack[0] = k.write(b)
}

// logMessage logs the message in the block at offset at level, as the
// plugin's log line (Plugin.logPrefix: the host log's level and the
// plugin's budget of lines apply), and frees the block. Only the first
// maxOutputLineBytes are read: the log keeps no more of a line, and says
// how long the message was.
func logMessage(k kernelAccess, p *extism.Plugin, level extism.LogLevel, offset uint64) {
	if level < extism.LogLevelDebug {
		// get_log_level answers debug (the host sets Extism's level so):
		// Extism drops a trace line unread, and so does the host.
		k.free(offset)
		return
	}
	n := k.length(offset)
	prefix := k.view(offset, min(n, maxOutputLineBytes))
	total := int(min(n, 1<<40))
	if k.inst != nil && k.inst.logLine != nil {
		k.inst.logLine(level, prefix, total)
	} else {
		p.Log(level, clip.Prefix(prefix, total, maxOutputLineBytes))
	}
	k.free(offset)
}
