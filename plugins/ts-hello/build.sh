#!/usr/bin/env bash
# Builds plugins/ts-hello/ts-hello.wasm: the JavaScript engine
# (host/internal/jsengine/engine.wasm, committed) with src/main.ts and
# src/words.ts, bundled by `mcphost plugin build`, in its mcphost.js
# section. Needs only Go (no Node, no tsc: types are stripped, not checked).
#
#   build.sh           build ts-hello.wasm (rewritten only if it changes)
#   build.sh --check   build to a temporary file and compare it with ts-hello.wasm
set -euo pipefail

dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR source=../buildlib.sh
. "$dir/../buildlib.sh"
build_js_plugin "$dir" ts-hello ts "${1:-}"
