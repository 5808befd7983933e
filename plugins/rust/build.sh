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
# shellcheck source-path=SCRIPTDIR source=../buildlib.sh
. "$dir/../buildlib.sh"
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

parse_check_flag "${1:-}"

have_toolchain() {
	[ -x "$rustc" ] && [ -x /usr/bin/rust-lld ] &&
		[ -d "$("$rustc" --print sysroot 2>/dev/null)/lib/rustlib/$target/lib" ]
}

if ! have_toolchain; then
	apt_install rust "${packages[@]}"
	have_toolchain || skip rust "Debian's Rust toolchain for $target is missing (need $rustc and /usr/bin/rust-lld: apt-get install ${packages[*]})"
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

finish_build rust "$tmp" "$out" "$shown" "$("$rustc" --version) (the committed file: $expected_version)"
