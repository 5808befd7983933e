#!/usr/bin/env bash
# bench-tasks.sh: the figures of BENCHMARKS.md on tasks across replicas
# (issue 28: "a task's status from the other replica within 50 ms p50").
#
#   1. builds mcphost, plugins/everything and bench/taskreplicas into a
#      results directory (nothing in the tree is touched);
#   2. starts a redis-server of its own on a loopback port (no
#      persistence), two stateless `mcphost serve` replicas a and b sharing
#      it as their task store ([server.tasks] store = "redis://…"), and a
#      third replica with the default memory store (the baseline);
#   3. runs bench/taskreplicas against them: the time from a change on a
#      (a task created, or cancelled, through a) until tasks/get through b
#      shows it, and tasks/get through b, through a and through the memory
#      replica, one request at a time, interleaved in the same run.
#
# Timing never fails anything here. Environment (defaults in brackets):
#   BENCH_N      measured rounds [1000]
#   BENCH_PORT   first of the four loopback ports used [18830]
#   BENCH_OUT    results directory [a new temporary directory]
#   REDIS_SERVER the redis-server (or valkey-server) to run [found on PATH]
set -euo pipefail
cd "$(dirname "$0")/.."

GO=${GO:-go}
n=${BENCH_N:-1000}
port=${BENCH_PORT:-18830}
out=${BENCH_OUT:-$(mktemp -d "${TMPDIR:-/tmp}/mcphost-bench-tasks.XXXXXX")}
mkdir -p "$out/bin"

. scripts/benchlib.sh

redis=${REDIS_SERVER:-$(command -v redis-server || command -v valkey-server || ls /usr/bin/redis-server /usr/bin/valkey-server 2>/dev/null | head -1 || true)}
if [ -z "$redis" ]; then
	echo "bench-tasks: redis-server is not installed (scripts/ensure-redis.sh, as root, installs it)" >&2
	exit 1
fi

echo "== bench-tasks: results in $out"
{
	echo "date:    $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "cpu:     $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -1) ($(nproc) CPUs)"
	echo "go:      $($GO version)"
	echo "redis:   $("$redis" --version)"
	echo "loadavg: $(cat /proc/loadavg 2>/dev/null || echo unknown)"
	echo "commit:  $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo ' (modified tree)')"
} | tee "$out/machine.txt"

echo "== build"
$GO build -o "$out/bin/mcphost" ./cmd/mcphost
$GO build -o "$out/bin/taskreplicas" ./bench/taskreplicas
GOOS=wasip1 GOARCH=wasm CGO_ENABLED=0 $GO build -buildmode=c-shared -o "$out/everything.wasm" ./plugins/everything

rport=$port aport=$((port + 1)) bport=$((port + 2)) mport=$((port + 3))
"$redis" --port "$rport" --bind 127.0.0.1 --save "" --appendonly no --dir "$out" --daemonize no \
	--logfile "$out/redis.log" &
pids+=($!)
wait_listening "$rport" "$!" "$out/redis.log"

# replica_config FILE STORE writes a stateless replica's config serving
# plugins/everything with the task store STORE.
replica_config() {
	cat >"$1" <<TOML
# A replica for bench-tasks.sh.
[server]
log_level = "warn"
stateless = true
watch = false
lock_file = "off"

[server.tasks]
store = "$2"

[[plugin]]
name = "everything"
path = "$out/everything.wasm"
TOML
}
replica_config "$out/a.toml" "redis://127.0.0.1:$rport/0"
replica_config "$out/b.toml" "redis://127.0.0.1:$rport/0"
replica_config "$out/memory.toml" "memory"
for r in a:$aport b:$bport memory:$mport; do
	name=${r%%:*} p=${r#*:}
	"$out/bin/mcphost" serve --config "$out/$name.toml" --http "127.0.0.1:$p" 2>"$out/$name.log" &
	pids+=($!)
	wait_listening "$p" "$!" "$out/$name.log"
done

echo "== run: $n rounds (load now: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null))"
echo "$out/bin/taskreplicas -a http://127.0.0.1:$aport/mcp -b http://127.0.0.1:$bport/mcp -memory http://127.0.0.1:$mport/mcp -n $n"
"$out/bin/taskreplicas" -a "http://127.0.0.1:$aport/mcp" -b "http://127.0.0.1:$bport/mcp" \
	-memory "http://127.0.0.1:$mport/mcp" -n "$n" | tee "$out/result.txt"
echo "(uptime after: $(uptime))"
echo "(raw results and logs in $out)"
