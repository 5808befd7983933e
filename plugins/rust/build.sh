#!/usr/bin/env bash
# Builds rust.wasm (beside this script) from src/ with Debian's Rust
# toolchain, for wasm32-unknown-unknown, reproducibly.
#
#   ./build.sh           build rust.wasm (left untouched when already identical)
#   ./build.sh --check   build to a temporary file and compare it with rust.wasm
#
# Exit status: 0 done, 1 build failed or --check found a difference,
# 2 usage, 3 toolchain missing and not installable (the Makefile skips it).
#
# Debian's rustc is called directly, by its path: rustup's rustc, if any, is
# earlier on PATH but has no wasm32 standard library. No cargo, no crates:
# the plugin has no dependencies, so the build needs nothing from a registry.
set -euo pipefail

dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
shown=$(realpath --relative-to=. "$dir")/rust.wasm # for messages
name=rust
out=$dir/$name.wasm
rustc=/usr/bin/rustc
target=wasm32-unknown-unknown
# Debian 12 (bookworm) packages: the compiler, its wasm32 standard library,
# and lld-14, which provides the rust-lld linker it calls.
packages=(rustc libstd-rust-dev-wasm32 lld-14)
# The committed rust.wasm was built by this compiler; another version builds
# a working plugin, but not the same bytes.
expected_version="rustc 1.63.0"

check=false
case "${1:-}" in
"") ;;
--check) check=true ;;
*) echo "usage: $0 [--check]" >&2; exit 2 ;;
esac

have_toolchain() {
	[ -x "$rustc" ] && [ -x /usr/bin/rust-lld ] &&
		[ -d "$("$rustc" --print sysroot 2>/dev/null)/lib/rustlib/$target/lib" ]
}

if ! have_toolchain; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
		echo "rust: installing ${packages[*]} (apt-get)" >&2
		log=$(mktemp)
		# DPkg::Lock::Timeout: wait for another build script installing at the same time.
		if ! { DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 update -q &&
			DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -q --no-install-recommends "${packages[@]}"; } >"$log" 2>&1; then
			tail -n 5 "$log" >&2
		fi
		rm -f "$log"
	fi
	if ! have_toolchain; then
		echo "skipped rust: Debian's Rust toolchain for $target is missing (need $rustc and /usr/bin/rust-lld: apt-get install ${packages[*]})" >&2
		exit 3
	fi
fi

tmp=$(mktemp "$dir/.$name.XXXXXX.wasm")
trap 'rm -f "$tmp"' EXIT

# Reproducible: no debug info, symbols stripped, the source directory
# remapped to "." (panic locations name src/*.rs only), one codegen unit.
cd "$dir"
"$rustc" --edition 2021 --crate-type cdylib --crate-name mcphost_rust_plugin \
	--target "$target" -C linker=/usr/bin/rust-lld \
	-C opt-level=s -C lto -C codegen-units=1 -C panic=abort \
	-C debuginfo=0 -C strip=symbols --remap-path-prefix="$dir=." \
	-o "$tmp" src/lib.rs

if $check; then
	if cmp -s "$tmp" "$out"; then
		echo "rust: $shown matches its sources"
		exit 0
	fi
	if [ ! -e "$out" ]; then
		echo "rust: $shown is missing; run ${shown%/*}/build.sh" >&2
	else
		echo "rust: $shown differs from a build of its sources (sha256 $(sha256sum <"$out" | cut -c1-16)… committed, $(sha256sum <"$tmp" | cut -c1-16)… built with $("$rustc" --version)): run ${shown%/*}/build.sh and commit the result (built with $expected_version)" >&2
	fi
	exit 1
fi
if cmp -s "$tmp" "$out"; then
	echo "rust: $shown is up to date"
else
	chmod 644 "$tmp"
	mv "$tmp" "$out"
	echo "rust: built $shown ($(wc -c <"$out") bytes)"
fi
