// Command jsbuild makes a JavaScript plugin: the engine module with a
// bundled ES module in its mcphost.js section (package jsplugin).
//
//	go run ./host/internal/jsplugin/jsbuild ENGINE.wasm PLUGIN.js OUT.wasm
//
// OUT is rewritten only when its bytes change. `mcphost plugin build` will
// do the same through package jsplugin.
package main

import (
	"bytes"
	"fmt"
	"os"

	"github.com/mcphost/mcphost/host/internal/jsplugin"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "jsbuild:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) != 3 {
		return fmt.Errorf("usage: jsbuild ENGINE.wasm PLUGIN.js OUT.wasm")
	}
	engine, err := os.ReadFile(args[0])
	if err != nil {
		return err
	}
	source, err := os.ReadFile(args[1])
	if err != nil {
		return err
	}
	wasm, err := jsplugin.Build(engine, source)
	if err != nil {
		return fmt.Errorf("%s: %w", args[1], err)
	}
	if old, err := os.ReadFile(args[2]); err == nil && bytes.Equal(old, wasm) {
		return nil
	}
	tmp := args[2] + ".tmp"
	if err := os.WriteFile(tmp, wasm, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, args[2])
}
