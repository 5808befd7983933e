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
name=ts-hello
shown=$(realpath --relative-to=. "$dir")/$name.wasm
out=$dir/$name.wasm
parse_check_flag "${1:-}"
root=$(cd "$dir/../.." && pwd)

tmp=$(mktemp "$dir/.$name.XXXXXX.wasm")
trap 'rm -f "$tmp"' EXIT
(cd "$root" && go run ./cmd/mcphost plugin build --lang ts -o "$tmp" "$dir" >/dev/null)
finish_build "$name" "$tmp" "$out" "$shown" "$(go version | cut -d' ' -f3), mcphost's esbuild and host/internal/jsengine/engine.wasm"
