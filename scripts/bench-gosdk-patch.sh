#!/usr/bin/env bash
# The measurement of docs/go-sdk-unmarshal.md in one command: go-sdk as
# released against go-sdk with the upstream-ready patch applied to a
# temporary copy of it (nothing in the tree changes; the patched builds use
# `go -modfile` with a `replace`), for both servers of `make bench`'s load
# part, in the same run: mcphost serving testdata/conformance.toml and the
# plain go-sdk server (bench/nativeserver -plain), each built both ways.
# bench/loadgen at C = BENCH_C, stateful (2025-11-25) then stateless
# (2026-07-28), BENCH_ROUNDS rounds, the order of the four rotated.
#
# Timing never fails anything. Environment: BENCH_ROUNDS [3], BENCH_C [8],
# BENCH_D [5s], BENCH_PORT [18860], BENCH_OUT [new temp directory],
# BENCH_MODES ["stateful stateless"].
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

GO=${GO:-go}
rounds=${BENCH_ROUNDS:-3}
c=${BENCH_C:-8}
dur=${BENCH_D:-5s}
port=${BENCH_PORT:-18860}
modes=${BENCH_MODES:-stateful stateless}
out=${BENCH_OUT:-$(mktemp -d "${TMPDIR:-/tmp}/mcphost-gosdk-patch.XXXXXX")}
mkdir -p "$out/bin"
echo "== results in $out"
echo "loadavg: $(cat /proc/loadavg)  commit: $(git rev-parse --short HEAD)"

. scripts/benchlib.sh

echo "== patching a copy of go-sdk"
src=$($GO list -m -f '{{.Dir}}' github.com/modelcontextprotocol/go-sdk)
cp -r "$src" "$out/go-sdk"
chmod -R u+w "$out/go-sdk"
patch -d "$out/go-sdk" -p1 -s <"$repo/docs/go-sdk-unmarshal.patch"
cp go.mod "$out/go.patched.mod"
cp go.sum "$out/go.patched.sum"
echo "replace github.com/modelcontextprotocol/go-sdk => $out/go-sdk" >>"$out/go.patched.mod"

echo "== build"
$GO build -o "$out/bin/mcphost" ./cmd/mcphost
$GO build -modfile="$out/go.patched.mod" -o "$out/bin/mcphost-patched" ./cmd/mcphost
$GO build -o "$out/bin/nativeserver" ./bench/nativeserver
$GO build -modfile="$out/go.patched.mod" -o "$out/bin/nativeserver-patched" ./bench/nativeserver
$GO build -o "$out/bin/loadgen" ./bench/loadgen
GOOS=wasip1 GOARCH=wasm CGO_ENABLED=0 $GO build -buildmode=c-shared -o "$out/everything.wasm" ./plugins/everything
# testdata/conformance.toml as it is, its plugin where its relative path
# points.
mkdir -p "$out/tree/testdata" "$out/tree/plugins/everything"
cp testdata/conformance.toml "$out/tree/testdata/"
cp "$out/everything.wasm" "$out/tree/plugins/everything/"

targets=(mcphost mcphost-patched plain plain-patched)
for mode in $modes; do
	flags=() version=2025-11-25
	if [ "$mode" = stateless ]; then flags=(--stateless) version=2026-07-28; fi
	echo "== load: C = $c, $mode, $rounds rounds of $dur"
	declare -A tport tpid
	for i in "${!targets[@]}"; do
		t=${targets[$i]}
		tport[$t]=$((port + i))
		case $t in
		mcphost*) "$out/bin/$t" serve --config "$out/tree/testdata/conformance.toml" --http "127.0.0.1:${tport[$t]}" "${flags[@]}" 2>"$out/$t-$mode.log" & ;;
		plain) "$out/bin/nativeserver" -plain -http "127.0.0.1:${tport[$t]}" "${flags[@]}" 2>"$out/$t-$mode.log" & ;;
		plain-patched) "$out/bin/nativeserver-patched" -plain -http "127.0.0.1:${tport[$t]}" "${flags[@]}" 2>"$out/$t-$mode.log" & ;;
		esac
		tpid[$t]=$!
		pids+=("${tpid[$t]}")
	done
	for t in "${targets[@]}"; do
		wait_listening "${tport[$t]}" "${tpid[$t]}" "$out/$t-$mode.log"
	done
	for r in $(seq 1 "$rounds"); do
		for k in 0 1 2 3; do # each target first once in four rounds
			t=${targets[$(((r + k) % 4))]}
			"$out/bin/loadgen" -url "http://127.0.0.1:${tport[$t]}/mcp" -label "$t" -pid "${tpid[$t]}" \
				-c "$c" -d "$dur" -protocol-version "$version" -json >>"$out/load.jsonl"
			tail -1 "$out/load.jsonl"
		done
	done
	cleanup
	pids=()
done
# median FIELD VERSION LABEL: the median of one field over the rounds.
median() {
	jq -r --arg v "$2" --arg l "$3" 'select(.protocol_version == $v and .label == $l) | .'"$1" "$out/load.jsonl" |
		sort -n | awk '{a[NR] = $1} END {if (NR) printf "%.0f", (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2)}'
}
echo "== medians: calls/s (server CPU µs per call); mcphost / plain"
for v in $(jq -r .protocol_version "$out/load.jsonl" | sort -u); do
	declare -A rate cpu
	line="$v:"
	for t in "${targets[@]}"; do
		rate[$t]=$(median calls_per_sec "$v" "$t") cpu[$t]=$(median server_cpu_us_per_call "$v" "$t")
		line="$line $t ${rate[$t]} (${cpu[$t]})"
	done
	echo "$line"
	echo "  stock $(awk "BEGIN {printf \"%.2f\", ${rate[mcphost]} / ${rate[plain]}}"), patched $(awk "BEGIN {printf \"%.2f\", ${rate[mcphost-patched]} / ${rate[plain-patched]}}")"
done
echo "loadavg now: $(cat /proc/loadavg)"
echo "(raw results in $out: load.jsonl)"
