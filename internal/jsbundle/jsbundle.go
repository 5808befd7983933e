// Package jsbundle turns a JavaScript or TypeScript plugin's sources into
// the one ES module the JavaScript engine runs (sdk/js): the entry file and
// everything it imports, bundled by esbuild (its Go API, so no Node is
// needed to build a plugin), TypeScript types stripped, the engine's own
// module "mcphost" left as an import.
//
// esbuild strips types without checking them; a TypeScript author checks
// them with tsc (the scaffold's package.json has a "typecheck" script).
package jsbundle

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/evanw/esbuild/pkg/api"
)

// EngineModule is the module the engine provides to every plugin: never
// bundled, always imported.
const EngineModule = "mcphost"

// MaxSourceBytes bounds a bundle: the engine refuses larger sources (the
// host's limit on the section that carries it).
const MaxSourceBytes = 8 << 20

// Entries are the entry files looked for, in order, when a directory is
// given.
var Entries = []string{"main.ts", "main.js", "src/main.ts", "src/main.js", "index.ts", "index.js", "src/index.ts", "src/index.js"}

// Result is a bundle: the module's code and its source map (version 3
// JSON, sources relative to the plugin's directory, without their text),
// whose mappings give a stack trace's file:line in the sources.
type Result struct {
	Entry     string // the entry file, relative to the directory
	JS        []byte
	SourceMap []byte
	Warnings  []string // esbuild's warnings, as file:line:column: text
}

// FindEntry returns the entry file of a plugin directory: the first of
// Entries that exists.
func FindEntry(dir string) (string, error) {
	for _, e := range Entries {
		if st, err := os.Stat(filepath.Join(dir, e)); err == nil && st.Mode().IsRegular() {
			return e, nil
		}
	}
	return "", fmt.Errorf("no entry file in %s: looked for %s", dir, strings.Join(Entries, ", "))
}

// Bundle bundles the plugin whose entry file is entry (relative to dir).
// An error lists every problem esbuild found, each as file:line:column.
func Bundle(dir, entry string) (*Result, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("bundle %s: %w", dir, err)
	}
	res := api.Build(api.BuildOptions{
		AbsWorkingDir:  abs,
		EntryPoints:    []string{entry},
		Outfile:        "plugin.js", // named only for the source map
		Bundle:         true,
		Write:          false,
		Format:         api.FormatESModule,
		Platform:       api.PlatformNeutral,
		MainFields:     []string{"module", "main"},
		Conditions:     []string{"import", "default"},
		Target:         api.ES2023, // what QuickJS-ng runs
		External:       []string{EngineModule},
		Sourcemap:      api.SourceMapExternal,
		SourcesContent: api.SourcesContentExclude,
		Charset:        api.CharsetUTF8,
		LegalComments:  api.LegalCommentsNone,
		LogLevel:       api.LogLevelSilent,
	})
	if len(res.Errors) > 0 {
		return nil, fmt.Errorf("bundle %s: %w", filepath.Join(dir, entry), messagesError(res.Errors))
	}
	out := &Result{Entry: entry}
	for _, f := range res.OutputFiles {
		switch filepath.Ext(f.Path) {
		case ".js":
			out.JS = f.Contents
		case ".map":
			out.SourceMap = f.Contents
		}
	}
	if out.JS == nil {
		return nil, fmt.Errorf("bundle %s: esbuild wrote no JavaScript", filepath.Join(dir, entry))
	}
	if len(out.JS) > MaxSourceBytes {
		return nil, fmt.Errorf("bundle %s: %d bytes of JavaScript, more than the engine takes (%d)", filepath.Join(dir, entry), len(out.JS), MaxSourceBytes)
	}
	for _, m := range res.Warnings {
		out.Warnings = append(out.Warnings, formatMessage(m))
	}
	return out, nil
}

// messagesError joins esbuild's messages into one error, with a hint for
// the mistake a Node author makes first: importing a Node built-in.
func messagesError(msgs []api.Message) error {
	errs := make([]error, 0, len(msgs))
	for _, m := range msgs {
		text := formatMessage(m)
		if strings.HasPrefix(m.Text, "Could not resolve \"node:") || isNodeBuiltin(m.Text) {
			text += " (a plugin runs in the Wasm sandbox, not in Node: it has no Node built-in modules; use the context's fetch, log and config instead)"
		}
		errs = append(errs, errors.New(text))
	}
	return errors.Join(errs...)
}

// isNodeBuiltin reports whether an esbuild "Could not resolve" message
// names one of Node's built-in modules.
func isNodeBuiltin(text string) bool {
	for _, name := range []string{"fs", "path", "http", "https", "net", "os", "child_process", "crypto", "stream", "buffer", "url", "util", "events", "worker_threads", "zlib", "dns", "tls"} {
		if text == `Could not resolve "`+name+`"` || strings.HasPrefix(text, `Could not resolve "`+name+`/`) {
			return true
		}
	}
	return false
}

// formatMessage writes an esbuild message as file:line:column: text.
func formatMessage(m api.Message) string {
	if m.Location == nil {
		return m.Text
	}
	return fmt.Sprintf("%s:%d:%d: %s", m.Location.File, m.Location.Line, m.Location.Column+1, m.Text)
}
