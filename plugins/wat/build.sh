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

dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR source=../buildlib.sh
. "$dir/../buildlib.sh"
name=wat
shown=$(realpath --relative-to=. "$dir")/$name.wasm # for messages
out=$dir/$name.wasm
parse_check_flag "${1:-}"
cd "$dir"

if ! command -v wat2wasm >/dev/null; then
	apt_install wat wabt
	command -v wat2wasm >/dev/null || skip wat "missing wat2wasm; install the Debian package wabt (as root: apt-get install --no-install-recommends wabt)"
fi

# Built beside its destination, so that moving it into place is a rename.
tmp=$(mktemp "$dir/.$name.XXXXXX.wasm")
trap 'rm -f "$tmp"' EXIT

# --debug-names: keep the source's $names in a "name" section, so that a
# trap's backtrace says $skip_value rather than func[12].
wat2wasm --debug-names -o "$tmp" "$name.wat"

finish_build wat "$tmp" "$out" "$shown" "wat2wasm $(wat2wasm --version)"
