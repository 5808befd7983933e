#!/usr/bin/env bash
# Installs the MCP Apps SDK (@modelcontextprotocol/ext-apps: its host side,
# AppBridge) and the TypeScript MCP client it drives, pinned with their whole
# dependency tree by scripts/ext-apps/package-lock.json, into a cache
# directory; later runs reuse it. Everything comes from the npm registry.
# host/apps_browser_test.go bundles them with esbuild for headless Chromium.
#
# Usage:
#   scripts/ext-apps.sh --install
#       Installs (idempotent) and prints "dir: DIR" (holding node_modules/).
#
# Environment:
#   MCPHOST_EXT_APPS_CACHE   cache directory
#                            (default ${XDG_CACHE_HOME:-$HOME/.cache}/mcphost/ext-apps)
#   NPM                      npm command to use (default: npm)
set -euo pipefail

prog="${0##*/}"
script_dir="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)"
lock_src="$script_dir/ext-apps"
npm="${NPM:-npm}"

die() {
	printf '%s: error: %s\n' "$prog" "$*" >&2
	exit 2
}

[[ "${1:-}" == "--install" ]] || die "usage: $prog --install"

# The cache entry is named by the lock file's digest: a changed pin is a
# new entry, never a stale one.
digest=$(cat "$lock_src/package.json" "$lock_src/package-lock.json" | sha256sum | cut -c1-16)
cache_root="${MCPHOST_EXT_APPS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mcphost/ext-apps}"
install_dir="$cache_root/$digest"
stamp="$install_dir/.installed"

if [[ ! -f "$stamp" ]]; then
	command -v "$npm" >/dev/null 2>&1 || die "'$npm' not found on PATH; npm is needed once, to install the MCP Apps SDK"
	mkdir -p "$cache_root" || die "cannot create cache directory $cache_root"
	exec 9>"$cache_root/.lock"
	command -v flock >/dev/null 2>&1 && flock 9
	if [[ ! -f "$stamp" ]]; then
		printf '%s: installing the MCP Apps SDK into %s (first run only)\n' "$prog" "$install_dir" >&2
		stage="$(mktemp -d "$cache_root/.stage.XXXXXX")"
		# shellcheck disable=SC2064 # expand $stage now
		trap "rm -rf '$stage'" EXIT
		cp "$lock_src/package.json" "$lock_src/package-lock.json" "$stage/"
		if ! "$npm" ci --prefix "$stage" --no-audit --no-fund --ignore-scripts --prefer-offline --loglevel=error >"$stage/npm.log" 2>&1; then
			cat "$stage/npm.log" >&2
			die "npm ci of the MCP Apps SDK failed (log above)"
		fi
		rm -f "$stage/npm.log"
		date -u +%Y-%m-%dT%H:%M:%SZ >"$stage/.installed"
		rm -rf "$install_dir"
		mv "$stage" "$install_dir"
		trap - EXIT
	fi
	exec 9>&-
fi
echo "dir: $install_dir"
