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
name=assemblyscript
shown=$(realpath --relative-to=. "$dir")/$name.wasm # for messages
out=$dir/$name.wasm
repo=$(cd "$dir/../.." && pwd)

check=false
case "${1:-}" in
"") ;;
--check) check=true ;;
*) echo "usage: $0 [--check]" >&2; exit 2 ;;
esac

skip() {
	echo "skipped assemblyscript: $*" >&2
	exit 3
}

node_major() { "$1" -e 'process.stdout.write(process.versions.node.split(".")[0])' 2>/dev/null || echo 0; }

# npm, from Debian when missing (it brings a Node too old for asc, but npm
# is what installs a newer one).
if ! command -v npm >/dev/null; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
		echo "assemblyscript: installing nodejs npm (apt-get)" >&2
		log=$(mktemp)
		{ DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 update -q &&
			DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -q --no-install-recommends nodejs npm; } >"$log" 2>&1 || tail -n 5 "$log" >&2
		rm -f "$log"
	fi
	command -v npm >/dev/null || skip "npm is missing (it installs the AssemblyScript compiler from the npm registry; apt-get install npm)"
fi

node=$(command -v node || true)
if [ -z "$node" ] || [ "$(node_major "$node")" -lt 20 ]; then
	conformance=$repo/scripts/conformance.sh
	[ -x "$conformance" ] || skip "asc needs Node >= 20 (found ${node:-none}) and $conformance, which installs one, is missing"
	node=$("$conformance" --install 2>/dev/null | sed -n 's/^node: *//p')
	[ -n "$node" ] && [ "$(node_major "$node")" -ge 20 ] ||
		skip "asc needs Node >= 20 (found $(command -v node || echo none)); scripts/conformance.sh --install could not provide one"
fi
export PATH="$(dirname "$node"):$PATH"

# node_modules/ as the lockfile pins it: npm ci when the lockfile changed
# since the last install (the stamp holds its hash).
lock_hash=$(sha256sum <"$dir/package-lock.json" | cut -d' ' -f1)
stamp=$dir/node_modules/.mcphost-lock-sha256
asc=$dir/node_modules/assemblyscript/bin/asc.js
if [ ! -f "$asc" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$lock_hash" ]; then
	log=$(mktemp)
	if ! (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error) >"$log" 2>&1; then
		grep -v 'Unknown user config' "$log" | tail -n 5 >&2
		rm -f "$log"
		skip "npm ci failed: the AssemblyScript compiler could not be installed from the npm registry"
	fi
	rm -f "$log"
	echo "$lock_hash" >"$stamp"
fi

tmp=$(mktemp "$dir/.$name.XXXXXX.wasm")
trap 'rm -f "$tmp"' EXIT

# Reproducible: asc's output depends only on the sources and the pinned
# compiler (no debug info, no source map; file names are relative).
cd "$dir"
"$node" "$asc" assembly/index.ts --outFile "$tmp" \
	--use abort=assembly/index/pluginAbort --runtime incremental \
	--optimizeLevel 3 --shrinkLevel 2 --noColors

if $check; then
	if cmp -s "$tmp" "$out"; then
		echo "assemblyscript: $shown matches its sources"
		exit 0
	fi
	if [ ! -e "$out" ]; then
		echo "assemblyscript: $shown is missing; run ${shown%/*}/build.sh" >&2
	else
		echo "assemblyscript: $shown differs from a build of its sources (sha256 $(sha256sum <"$out" | cut -c1-16)… committed, $(sha256sum <"$tmp" | cut -c1-16)… built): run ${shown%/*}/build.sh and commit the result" >&2
	fi
	exit 1
fi
if cmp -s "$tmp" "$out"; then
	echo "assemblyscript: $shown is up to date"
else
	chmod 644 "$tmp"
	mv "$tmp" "$out"
	echo "assemblyscript: built $shown ($(wc -c <"$out") bytes)"
fi
