#!/usr/bin/env bash
# The measurement of docs/extism-kernel-functions.md in one command: mcphost
# with Extism go-sdk as released against mcphost with the upstream-ready
# patch applied to a temporary copy of it (nothing in the tree changes; the
# patched build uses `go -modfile` with a `replace`), in the same run:
#
#   1. BenchmarkWasmHop (minimal, stateful, wat-ping): two test binaries run
#      alternately, BENCH_ROUNDS rounds;
#   2. unless BENCH_ONLY=go: bench/loadgen at C = BENCH_C (stateful) against
#      mcphost, mcphost patched and a plain go-sdk server, order rotated.
#
# Timing never fails anything. Environment: BENCH_ROUNDS [3], BENCH_TIME
# [2s], BENCH_C [8], BENCH_D [5s], BENCH_PORT [18850], BENCH_OUT [new temp
# directory], BENCH_ONLY ["go" for the hop only].
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

GO=${GO:-go}
rounds=${BENCH_ROUNDS:-3}
benchtime=${BENCH_TIME:-2s}
c=${BENCH_C:-8}
dur=${BENCH_D:-5s}
port=${BENCH_PORT:-18850}
only=${BENCH_ONLY:-}
out=${BENCH_OUT:-$(mktemp -d "${TMPDIR:-/tmp}/mcphost-extism-patch.XXXXXX")}
mkdir -p "$out/bin"
echo "== results in $out"
echo "loadavg: $(cat /proc/loadavg)  commit: $(git rev-parse --short HEAD)"

. scripts/benchlib.sh

echo "== patching a copy of Extism go-sdk"
src=$($GO list -m -f '{{.Dir}}' github.com/extism/go-sdk)
cp -r "$src" "$out/extism"
chmod -R u+w "$out/extism"
patch -d "$out/extism" -p1 -s <"$repo/docs/extism-kernel-functions.patch"
cp go.mod "$out/go.patched.mod"
cp go.sum "$out/go.patched.sum"
echo "replace github.com/extism/go-sdk => $out/extism" >>"$out/go.patched.mod"

echo "== build"
$GO test -c -o "$out/bin/stock.test" ./host/internal/plugin/
$GO test -modfile="$out/go.patched.mod" -c -o "$out/bin/patched.test" ./host/internal/plugin/

echo "== BenchmarkWasmHop, $rounds rounds, alternately"
for r in $(seq 1 "$rounds"); do
	for v in stock patched; do
		(cd host/internal/plugin && "$out/bin/$v.test" -test.run '^$' -test.bench 'WasmHop/(minimal|stateful|wat-ping)' \
			-test.benchtime "$benchtime" -test.benchmem) | grep '^Benchmark' | sed "s/^/$v /" | tee -a "$out/hop.txt"
	done
done

if [ "$only" != go ]; then
	echo "== load: C = $c, stateful, $rounds rounds of $dur"
	$GO build -o "$out/bin/mcphost" ./cmd/mcphost
	$GO build -modfile="$out/go.patched.mod" -o "$out/bin/mcphost-patched" ./cmd/mcphost
	$GO build -o "$out/bin/loadgen" ./bench/loadgen
	$GO build -o "$out/bin/nativeserver" ./bench/nativeserver
	GOOS=wasip1 GOARCH=wasm CGO_ENABLED=0 $GO build -buildmode=c-shared -o "$out/everything.wasm" ./plugins/everything
	bench_config "$out/mcphost.toml" "$out/everything.wasm"
	declare -A tport tpid
	tport=([stock]=$port [patched]=$((port + 1)) [plain]=$((port + 2)))
	"$out/bin/mcphost" serve --config "$out/mcphost.toml" --http "127.0.0.1:${tport[stock]}" 2>"$out/stock.log" &
	tpid[stock]=$!
	"$out/bin/mcphost-patched" serve --config "$out/mcphost.toml" --http "127.0.0.1:${tport[patched]}" 2>"$out/patched.log" &
	tpid[patched]=$!
	"$out/bin/nativeserver" -plain -http "127.0.0.1:${tport[plain]}" 2>"$out/plain.log" &
	tpid[plain]=$!
	pids+=("${tpid[@]}")
	for t in stock patched plain; do
		wait_listening "${tport[$t]}" "${tpid[$t]}" "$out/$t.log"
	done
	for r in $(seq 1 "$rounds"); do
		for t in $(rotated $((r - 1)) stock patched plain); do
			"$out/bin/loadgen" -url "http://127.0.0.1:${tport[$t]}/mcp" -label "$t" -pid "${tpid[$t]}" \
				-c "$c" -d "$dur" -protocol-version 2025-11-25 -json >>"$out/load.jsonl"
			tail -1 "$out/load.jsonl"
		done
	done
fi
echo "loadavg now: $(cat /proc/loadavg)"
echo "(raw results in $out: hop.txt, load.jsonl)"
