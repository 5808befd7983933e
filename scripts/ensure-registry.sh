#!/bin/sh
# ensure-registry.sh: make an OCI registry available for the registry tests
# (host/internal/registry, cmd/mcphost), which are skipped where
# `docker-registry` is missing.
#
# If docker-registry is on PATH, does nothing. Otherwise, when running as
# root on a system with apt-get (Debian, Ubuntu, the CI image), installs
# Debian's docker-registry package (the CNCF distribution registry) quietly.
# It always exits 0: a machine where it cannot be installed still runs every
# other test, and the message says why the registry tests will be skipped.
# The package's own service is not wanted (each test starts its own registry
# on a loopback port); in a container without an init system the package
# does not start one.
set -u

if command -v docker-registry >/dev/null 2>&1; then
	exit 0
fi

skip() {
	echo "ensure-registry: docker-registry is not installed and $1; the registry tests will be skipped" >&2
	exit 0
}

[ "$(id -u)" = 0 ] || skip "this is not root (install it with: sudo apt-get install docker-registry)"
command -v apt-get >/dev/null 2>&1 || skip "there is no apt-get here (install the CNCF distribution registry as docker-registry by hand)"

log=$(mktemp "${TMPDIR:-/tmp}/ensure-registry.XXXXXX")
install() {
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends docker-registry >>"$log" 2>&1
}
# The package lists may be missing (a fresh container) or stale: update them
# once, only when the install fails.
if ! install && ! { apt-get update -qq >>"$log" 2>&1 && install; }; then
	skip "apt-get could not install it (log: $log)"
fi
command -v docker-registry >/dev/null 2>&1 || skip "the package did not install docker-registry (log: $log)"
rm -f "$log"
echo "ensure-registry: installed docker-registry $(dpkg-query -W -f '${Version}' docker-registry 2>/dev/null) (Debian package)"
