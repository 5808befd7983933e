#!/usr/bin/env bash
# Builds plugins/js-hello/js-hello.wasm: the JavaScript engine
# (host/internal/jsengine/engine.wasm, committed) with main.js, bundled by
# `mcphost plugin build`, in its mcphost.js section. Needs only Go.
#
#   build.sh           build js-hello.wasm (rewritten only if it changes)
#   build.sh --check   build to a temporary file and compare it with js-hello.wasm
set -euo pipefail

dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR source=../buildlib.sh
. "$dir/../buildlib.sh"
build_js_plugin "$dir" js-hello js "${1:-}"
