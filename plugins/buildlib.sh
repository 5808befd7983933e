# shellcheck shell=bash
# Shared by the example plugins' build.sh scripts (sourced, not run). Each
# build.sh finds or installs its toolchain, compiles to a temporary file, and
# hands it to finish_build. Scaffolds made by `mcphost plugin new` carry
# their own copy of these steps, since they live outside this repository.
#
# Exit status convention of every build.sh: 0 done, 1 build failed or
# --check found a difference, 2 usage, 3 toolchain missing and not
# installable (the Makefile reports it as skipped).

# parse_check_flag ARG: sets check=true for --check, false for none; exits 2
# on anything else.
parse_check_flag() {
	case "${1:-}" in
	"") check=false ;;
	--check) check=true ;;
	*)
		echo "usage: $0 [--check]" >&2
		exit 2
		;;
	esac
}

# skip LABEL WHY...: the toolchain cannot be had; exit 3.
skip() {
	local label=$1
	shift
	echo "skipped $label: $*" >&2
	exit 3
}

# apt_install LABEL PACKAGE...: installs Debian packages when running as root
# with apt-get, waiting for another build script's install to finish. Never
# fails: the caller checks for what it needs afterwards.
apt_install() {
	local label=$1 log
	shift
	[ "$(id -u)" = 0 ] && command -v apt-get >/dev/null || return 0
	echo "$label: installing $* (apt-get)" >&2
	log=$(mktemp)
	if ! { DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 update -q &&
		DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -q --no-install-recommends "$@"; } >"$log" 2>&1; then
		tail -n 10 "$log" >&2
	fi
	rm -f "$log"
}

# ensure_npm LABEL WHAT: npm, from Debian when missing; skips when it cannot
# be had (WHAT says what npm would install).
ensure_npm() {
	command -v npm >/dev/null || apt_install "$1" nodejs npm
	command -v npm >/dev/null || skip "$1" "npm is missing (it installs $2 from the npm registry; apt-get install npm)"
}

# npm_ci LABEL DIR MARKER WHAT: installs DIR/node_modules as DIR's lockfile
# pins it, when MARKER (a file npm ci provides) is missing or the lockfile
# changed since the last install; skips when npm ci fails.
npm_ci() {
	local label=$1 dir=$2 marker=$3 what=$4 lock_hash stamp log
	lock_hash=$(sha256sum <"$dir/package-lock.json" | cut -d' ' -f1)
	stamp=$dir/node_modules/.mcphost-lock-sha256
	if [ -e "$marker" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$lock_hash" ]; then
		return 0
	fi
	log=$(mktemp)
	if ! (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error) >"$log" 2>&1; then
		grep -v 'Unknown user config' "$log" | tail -n 5 >&2
		rm -f "$log"
		skip "$label" "npm ci failed: $what could not be installed from the npm registry"
	fi
	rm -f "$log"
	echo "$lock_hash" >"$stamp"
}

# finish_build LABEL TMP OUT SHOWN BUILT_WITH: with check=true, compares the
# fresh build TMP with the committed OUT and exits 0 (same) or 1 (missing or
# different); otherwise moves TMP into place when it differs from OUT. SHOWN
# names OUT in messages; BUILT_WITH names the compiler.
finish_build() {
	local label=$1 tmp=$2 out=$3 shown=$4 built_with=$5
	if $check; then
		if cmp -s "$tmp" "$out"; then
			echo "$label: $shown matches its sources"
			exit 0
		fi
		if [ ! -e "$out" ]; then
			echo "$label: $shown is missing; run ${shown%/*}/build.sh and commit it" >&2
		else
			echo "$label: $shown differs from a build of its sources (sha256 $(sha256sum <"$out" | cut -c1-16)… committed, $(sha256sum <"$tmp" | cut -c1-16)… built with $built_with): run ${shown%/*}/build.sh and commit the result" >&2
		fi
		exit 1
	fi
	if cmp -s "$tmp" "$out"; then
		echo "$label: $shown is up to date"
	else
		chmod 644 "$tmp"
		mv -f "$tmp" "$out"
		echo "$label: built $shown ($(wc -c <"$out") bytes, $built_with)"
	fi
}

# build_js_plugin DIR NAME LANG [--check]: builds DIR/NAME.wasm, a
# JavaScript or TypeScript plugin (LANG js or ts), with `mcphost plugin
# build` from this checkout: the JavaScript engine with DIR's sources
# bundled in its mcphost.js section. Needs only Go.
build_js_plugin() {
	local dir=$1 name=$2 lang=$3
	local shown out root tmp
	shown=$(realpath --relative-to=. "$dir")/$name.wasm
	out=$dir/$name.wasm
	parse_check_flag "${4:-}"
	root=$(cd "$dir/../.." && pwd)
	tmp=$(mktemp "$dir/.$name.XXXXXX.wasm")
	# shellcheck disable=SC2064 # $tmp is local: expand it now
	trap "rm -f '$tmp'" EXIT
	(cd "$root" && go run ./cmd/mcphost plugin build --lang "$lang" -o "$tmp" "$dir" >/dev/null)
	finish_build "$name" "$tmp" "$out" "$shown" "$(go version | cut -d' ' -f3), mcphost's esbuild and host/internal/jsengine/engine.wasm"
}
