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

cd "$(dirname "${BASH_SOURCE[0]}")"
name=c
rel=plugins/c/$name.wasm
packages=(clang lld wasi-libc libclang-rt-14-dev-wasm32)

check=0
case "${1:-}" in
--check) check=1 ;;
"") ;;
*)
	echo "usage: $0 [--check]" >&2
	exit 2
	;;
esac

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
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
		log=$(mktemp)
		echo "$rel: installing ${packages[*]} with apt-get" >&2
		# DPkg::Lock::Timeout: wait for another build script installing at the same time.
		if ! { DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 update -qq &&
			DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${packages[@]}"; } >"$log" 2>&1; then
			tail -n 20 "$log" >&2
		fi
		rm -f "$log"
	fi
	if [ -n "$(missing)" ]; then
		echo "skipped c: missing $(missing | paste -sd, - | sed 's/,/, /g'); install the Debian packages ${packages[*]} (as root: apt-get install --no-install-recommends ${packages[*]})" >&2
		exit 3
	fi
fi

# Built beside its destination, so that moving it into place is a rename.
tmp=$(mktemp ".$name.wasm.tmp.XXXXXX")
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

if [ "$check" = 1 ]; then
	if [ ! -f "$name.wasm" ]; then
		echo "$rel is missing: run plugins/c/build.sh and commit it" >&2
		exit 1
	fi
	if ! cmp -s "$tmp" "$name.wasm"; then
		echo "$rel does not match its sources (committed $(sha256sum <"$name.wasm" | cut -c1-16), built $(sha256sum <"$tmp" | cut -c1-16) with $("$cc" --version | head -n1)): run plugins/c/build.sh and commit it" >&2
		exit 1
	fi
	echo "$rel matches its sources"
	exit 0
fi

if cmp -s "$tmp" "$name.wasm" 2>/dev/null; then
	echo "$rel is up to date ($(stat -c %s "$name.wasm") bytes)"
else
	chmod 644 "$tmp"
	mv -f "$tmp" "$name.wasm"
	echo "built $rel ($(stat -c %s "$name.wasm") bytes, $("$cc" --version | head -n1))"
fi
