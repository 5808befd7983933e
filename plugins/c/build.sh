#!/usr/bin/env bash
# Builds plugins/c/c.wasm from plugin.c and extism.h with Debian's clang 14
# (clang, lld, wasi-libc, libclang-rt-14-dev-wasm32), as a WASI reactor.
#
#   build.sh           build c.wasm (the file is rewritten only if it changes)
#   build.sh --check   build to a temporary file and compare it with c.wasm
#
# Exit status: 0 done (or up to date), 1 build failed or c.wasm does not match
# its sources (--check), 2 usage, 3 the toolchain is missing and could not be
# installed (callers treat 3 as "skipped").
#
# The build is reproducible: the same sources and compiler give the same
# bytes (no debug info, no paths, no timestamps), which is what --check relies
# on. The committed c.wasm was built with Debian 12's clang 14.0.6.
set -euo pipefail

dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR source=../buildlib.sh
. "$dir/../buildlib.sh"
name=c
shown=$(realpath --relative-to=. "$dir")/$name.wasm # for messages
out=$dir/$name.wasm
packages=(clang lld wasi-libc libclang-rt-14-dev-wasm32)
parse_check_flag "${1:-}"
cd "$dir"

cc=clang-14
sysroot=/usr/lib/wasm32-wasi

# missing prints what of the toolchain is absent (nothing when it is all there).
missing() {
	command -v "$cc" >/dev/null || { echo "$cc"; return; }
	command -v wasm-ld-14 >/dev/null || command -v wasm-ld >/dev/null || echo "wasm-ld (lld)"
	[ -f "$sysroot/libc.a" ] && [ -f "$sysroot/crt1-reactor.o" ] || echo "wasi-libc ($sysroot)"
	[ -f "$("$cc" -print-resource-dir)/lib/wasi/libclang_rt.builtins-wasm32.a" ] || echo "libclang_rt.builtins-wasm32.a (libclang-rt-14-dev-wasm32)"
}

if [ -n "$(missing)" ]; then
	apt_install c "${packages[@]}"
	[ -z "$(missing)" ] || skip c "missing $(missing | paste -sd, - | sed 's/,/, /g'); install the Debian packages ${packages[*]} (as root: apt-get install --no-install-recommends ${packages[*]})"
fi

# Built beside its destination, so that moving it into place is a rename.
tmp=$(mktemp "$dir/.$name.XXXXXX.wasm")
trap 'rm -f "$tmp"' EXIT

# --target=wasm32-wasi -mexec-model=reactor: link wasi-libc's crt1-reactor.o,
#   which exports _initialize (run once by Extism before the first call; it
#   runs C constructors) instead of _start.
# -Os: a 22 KB module instead of 33 KB at -O2.
# -Wl,--strip-debug: Debian's libc.a carries DWARF for its own sources; drop
#   it, keep the "name" section so that a trap's backtrace names functions.
"$cc" --target=wasm32-wasi -mexec-model=reactor \
	-std=c11 -Os -Wall -Wextra \
	-Wl,--strip-debug \
	-o "$tmp" plugin.c

finish_build c "$tmp" "$out" "$shown" "$("$cc" --version | head -n1)"
