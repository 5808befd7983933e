#!/bin/sh
# ensure-redis.sh: make Redis available for the tests of the shared task
# store (host/internal/tasks, redis_test.go) and of replicas sharing it
# (deploy/tasks_replicas_test.go), which are skipped where `redis-server`
# is missing (testutil.StartRedis says why).
#
# If redis-server is on PATH (or in /usr/bin, /usr/sbin), does nothing.
# Otherwise, when running as root on a system with apt-get (Debian, Ubuntu,
# the CI image), installs Debian's redis-server package quietly. It always
# exits 0: a machine where Redis cannot be installed still runs every other
# test, and the message says why the Redis tests will be skipped. The
# package's own service is not wanted (each test starts its own
# redis-server on a loopback port, without persistence); in a container
# without an init system the package does not start one.
set -u

redis=$(command -v redis-server 2>/dev/null || { [ -x /usr/bin/redis-server ] && echo /usr/bin/redis-server; } || { [ -x /usr/sbin/redis-server ] && echo /usr/sbin/redis-server; })
if [ -n "$redis" ]; then
	exit 0
fi

skip() {
	echo "ensure-redis: redis-server is not installed and $1; the Redis task store tests will be skipped" >&2
	exit 0
}

[ "$(id -u)" = 0 ] || skip "this is not root (install it with: sudo apt-get install redis-server)"
command -v apt-get >/dev/null 2>&1 || skip "there is no apt-get here (install Redis 6.2 or later, or Valkey, as redis-server by hand)"

log=$(mktemp "${TMPDIR:-/tmp}/ensure-redis.XXXXXX")
install() {
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends redis-server >>"$log" 2>&1
}
# The package lists may be missing (a fresh container) or stale (a security
# update moved the version): update them once, only when the install fails.
if ! install && ! { apt-get update -qq >>"$log" 2>&1 && install; }; then
	skip "apt-get could not install it (log: $log)"
fi
redis=$(command -v redis-server 2>/dev/null || echo /usr/bin/redis-server)
if ! version=$("$redis" --version 2>/dev/null | cut -d" " -f1-3) || [ -z "$version" ]; then
	skip "the redis-server package did not install a working $redis (log: $log)"
fi
rm -f "$log"
echo "ensure-redis: installed $version (Debian package)"
