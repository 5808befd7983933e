#!/usr/bin/env bash
# Builds plugins/wat/wat.wasm from wat.wat with wabt's wat2wasm (Debian
# package wabt).
#
#   build.sh           build wat.wasm (the file is rewritten only if it changes)
#   build.sh --check   build to a temporary file and compare it with wat.wasm
#
# Exit status: 0 done (or up to date), 1 build failed or wat.wasm does not
# match its source (--check), 2 usage, 3 wat2wasm is missing and could not be
# installed (callers treat 3 as "skipped").
#
# The build is reproducible: wat2wasm writes only what the source says (with
# --debug-names, the $names of the source; no paths, no timestamps). The
# committed wat.wasm was built with Debian 12's wabt 1.0.32.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")"
name=wat
rel=plugins/wat/$name.wasm
packages=(wabt)

check=0
case "${1:-}" in
--check) check=1 ;;
"") ;;
*)
	echo "usage: $0 [--check]" >&2
	exit 2
	;;
esac

if ! command -v wat2wasm >/dev/null; then
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
	if ! command -v wat2wasm >/dev/null; then
		echo "skipped wat: missing wat2wasm; install the Debian package wabt (as root: apt-get install --no-install-recommends wabt)" >&2
		exit 3
	fi
fi

# Built beside its destination, so that moving it into place is a rename.
tmp=$(mktemp ".$name.wasm.tmp.XXXXXX")
trap 'rm -f "$tmp"' EXIT

# --debug-names: keep the source's $names in a "name" section, so that a
# trap's backtrace says $skip_value rather than func[12].
wat2wasm --debug-names -o "$tmp" "$name.wat"

if [ "$check" = 1 ]; then
	if [ ! -f "$name.wasm" ]; then
		echo "$rel is missing: run plugins/wat/build.sh and commit it" >&2
		exit 1
	fi
	if ! cmp -s "$tmp" "$name.wasm"; then
		echo "$rel does not match its source (committed $(sha256sum <"$name.wasm" | cut -c1-16), built $(sha256sum <"$tmp" | cut -c1-16) with wat2wasm $(wat2wasm --version)): run plugins/wat/build.sh and commit it" >&2
		exit 1
	fi
	echo "$rel matches its source"
	exit 0
fi

if cmp -s "$tmp" "$name.wasm" 2>/dev/null; then
	echo "$rel is up to date ($(stat -c %s "$name.wasm") bytes)"
else
	chmod 644 "$tmp"
	mv -f "$tmp" "$name.wasm"
	echo "built $rel ($(stat -c %s "$name.wasm") bytes, wat2wasm $(wat2wasm --version))"
fi
