// Package jsengine holds mcphost's JavaScript engine module, engine.wasm:
// QuickJS (quickjs-ng, vendored in quickjs/) and the C glue that
// implements the plugin ABI (glue.c) with the built-in module "mcphost"
// (prelude.js), built by build.sh with Debian's clang for wasm32-wasi. A
// JavaScript plugin is this module with its bundled source in a custom
// section (package jsplugin, abi/ABI.md §17).
package jsengine

import _ "embed"

// Wasm is engine.wasm, as committed (build.sh --check proves it is built
// from the sources beside it). Callers must not modify it.
//
//go:embed engine.wasm
var Wasm []byte
