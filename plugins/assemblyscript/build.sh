#!/usr/bin/env bash
# Builds assemblyscript.wasm (beside this script) from assembly/ with the
# AssemblyScript compiler, reproducibly.
#
#   ./build.sh           build assemblyscript.wasm (left untouched when already identical)
#   ./build.sh --check   build to a temporary file and compare it with assemblyscript.wasm
#
# Exit status: 0 done, 1 build failed or --check found a difference,
# 2 usage, 3 toolchain missing and not installable (the Makefile skips it).
#
# The compiler and Extism's PDK come from the npm registry, pinned by
# package-lock.json and installed into node_modules/ with `npm ci` (again
# whenever the lockfile changes). asc needs Node 20 or later: the node on
# PATH if it is recent enough, else the Node 22 that scripts/conformance.sh
# installs from the npm registry.
set -euo pipefail

dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR source=../buildlib.sh
. "$dir/../buildlib.sh"
name=assemblyscript
shown=$(realpath --relative-to=. "$dir")/$name.wasm # for messages
out=$dir/$name.wasm
repo=$(cd "$dir/../.." && pwd)

parse_check_flag "${1:-}"

node_major() { "$1" -e 'process.stdout.write(process.versions.node.split(".")[0])' 2>/dev/null || echo 0; }

# npm, from Debian when missing (it brings a Node too old for asc, but npm
# is what installs a newer one).
ensure_npm assemblyscript "the AssemblyScript compiler"

node=$(command -v node || true)
if [ -z "$node" ] || [ "$(node_major "$node")" -lt 20 ]; then
	conformance=$repo/scripts/conformance.sh
	[ -x "$conformance" ] || skip assemblyscript "asc needs Node >= 20 (found ${node:-none}) and $conformance, which installs one, is missing"
	node=$("$conformance" --install 2>/dev/null | sed -n 's/^node: *//p')
	[ -n "$node" ] && [ "$(node_major "$node")" -ge 20 ] ||
		skip assemblyscript "asc needs Node >= 20 (found $(command -v node || echo none)); scripts/conformance.sh --install could not provide one"
fi
export PATH="$(dirname "$node"):$PATH"

asc=$dir/node_modules/assemblyscript/bin/asc.js
npm_ci assemblyscript "$dir" "$asc" "the AssemblyScript compiler"

tmp=$(mktemp "$dir/.$name.XXXXXX.wasm")
trap 'rm -f "$tmp"' EXIT

# Reproducible: asc's output depends only on the sources and the pinned
# compiler (no debug info, no source map; file names are relative).
cd "$dir"
"$node" "$asc" assembly/index.ts --outFile "$tmp" \
	--use abort=assembly/index/pluginAbort --runtime incremental \
	--optimizeLevel 3 --shrinkLevel 2 --noColors

finish_build assemblyscript "$tmp" "$out" "$shown" "asc $("$node" "$asc" --version 2>/dev/null)"
