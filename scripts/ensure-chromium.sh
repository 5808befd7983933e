#!/bin/sh
# ensure-chromium.sh: make Chromium available for the test of browser
# clients (host/browser_test.go: a page of an allowed origin calls mcphost
# with the TypeScript SDK's Streamable HTTP client), which is skipped where
# `chromium` is missing (the test says why).
#
# If chromium is on PATH, does nothing. Otherwise, when running as root on
# a system with apt-get (Debian, Ubuntu, the CI image), installs Debian's
# chromium package quietly (about 100 MB, once per machine). It always
# exits 0: a machine where Chromium cannot be installed still runs every
# other test, and the message says why the browser test will be skipped.
set -u

if command -v chromium >/dev/null 2>&1; then
	exit 0
fi

skip() {
	echo "ensure-chromium: chromium is not installed and $1; the browser client test will be skipped" >&2
	exit 0
}

[ "$(id -u)" = 0 ] || skip "this is not root (install it with: sudo apt-get install chromium)"
command -v apt-get >/dev/null 2>&1 || skip "there is no apt-get here (install Chromium as chromium by hand)"

log=$(mktemp "${TMPDIR:-/tmp}/ensure-chromium.XXXXXX")
install() {
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >>"$log" 2>&1
}
# The package lists may be missing (a fresh container) or stale: update
# them once, only when the install fails.
if ! install && ! { apt-get update -qq >>"$log" 2>&1 && install; }; then
	skip "apt-get could not install it (log: $log)"
fi
if ! version=$(chromium --version 2>/dev/null) || [ -z "$version" ]; then
	skip "the chromium package did not install a working chromium (log: $log)"
fi
rm -f "$log"
echo "ensure-chromium: installed $version (Debian package)"
