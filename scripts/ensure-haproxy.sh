#!/bin/sh
# ensure-haproxy.sh: make HAProxy available for the load-balancer integration
# test (deploy/haproxy_test.go), which is skipped where `haproxy` is missing.
#
# If haproxy is on PATH, does nothing. Otherwise, when running as root on a
# system with apt-get (Debian, Ubuntu, the CI image), installs Debian's
# haproxy package quietly. It always exits 0: a machine where HAProxy cannot
# be installed still runs every other test, and the message says why the
# HAProxy test will be skipped. The package's own service is not wanted
# (the test starts its own haproxy on loopback); in a container without an
# init system the package does not start one.
set -u

# haproxy lives in /usr/sbin, which a non-root PATH may not include; the
# test looks there too.
haproxy=$(command -v haproxy 2>/dev/null || { [ -x /usr/sbin/haproxy ] && echo /usr/sbin/haproxy; })
if [ -n "$haproxy" ]; then
	exit 0
fi

skip() {
	echo "ensure-haproxy: haproxy is not installed and $1; the HAProxy integration test will be skipped" >&2
	exit 0
}

[ "$(id -u)" = 0 ] || skip "this is not root (install it with: sudo apt-get install haproxy)"
command -v apt-get >/dev/null 2>&1 || skip "there is no apt-get here (install HAProxy 2.2 or later by hand)"

log=$(mktemp "${TMPDIR:-/tmp}/ensure-haproxy.XXXXXX")
install() {
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends haproxy >>"$log" 2>&1
}
# The package lists may be missing (a fresh container) or stale (a security
# update moved the version): update them once, only when the install fails.
if ! install && ! { apt-get update -qq >>"$log" 2>&1 && install; }; then
	skip "apt-get could not install it (log: $log)"
fi
haproxy=$(command -v haproxy 2>/dev/null || echo /usr/sbin/haproxy)
if ! version=$("$haproxy" -v 2>/dev/null | head -n 1 | cut -d" " -f1-3) || [ -z "$version" ]; then
	skip "the haproxy package did not install a working $haproxy (log: $log)"
fi
rm -f "$log"
echo "ensure-haproxy: installed $version (Debian package)"
