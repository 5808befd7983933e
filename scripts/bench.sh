#!/usr/bin/env bash
# make bench: the performance figures of issue #9 (BENCHMARKS.md).
#
#   1. builds mcphost, plugins/everything, bench/loadgen and
#      bench/nativeserver into a results directory (nothing in the tree is
#      touched);
#   2. runs the Go benchmarks: the Wasm hop and its decomposition, 1 vs 2
#      callers, host start, tools/list over 1,000 tools, idle memory,
#      tools/call in memory and over HTTP against a native go-sdk server;
#   3. runs the load generator against mcphost (plugins/everything, echo,
#      served with testdata/conformance.toml as it is: see BENCH_CONFIG) and
#      two native go-sdk servers offering the same tool in plain Go, in the
#      same run, interleaved, stateful and stateless, for each session
#      count: "plain" (go-sdk's default handler options, what a user would
#      write instead; the goals are judged against it) and "native" (the
#      handler options mcphost uses: event store, session timeout, Host
#      guard), so the cost of those options shows apart from Wasm;
#   4. prints a summary (bench/summary) with each figure beside its goal.
#
# Timing never fails anything here; the exit status says only whether the
# runs themselves worked. Environment (defaults in brackets):
#   BENCH_C        session counts for the load runs ["1 8 32"]
#   BENCH_D        duration of one load run [5s]
#   BENCH_ROUNDS   rounds of the load runs; the summary takes the median [2]
#   BENCH_TIME     -benchtime of the latency benchmarks [2s]
#   BENCH_COUNT    -count of the Go benchmarks [3]
#   BENCH_ONLY     "go" or "load" to run only that part
#   BENCH_PROFILE  1: also write CPU profiles of the hop and of HTTP echo,
#                  and print their pprof top
#   BENCH_PORT     first of the three loopback ports used [18810]
#   BENCH_OUT      results directory [a new temporary directory]
#   BENCH_CONFIG   the config mcphost serves in the load runs [conformance]:
#                  "conformance" is testdata/conformance.toml unchanged (the
#                  config of issue 27's figures), copied with the plugin it
#                  loads into the results directory so that its relative
#                  path resolves there and nothing is written beside the
#                  tree's file; "minimal" is the one-plugin config of
#                  scripts/benchlib.sh (bench_config); anything else is a
#                  config file served where it is, whose plugins must be
#                  built already (make plugins)
#   BENCH_TOOL     the tool the load generator calls in mcphost [echo]
#                  (ev_echo for mcphost.toml, which prefixes everything's)
set -euo pipefail
cd "$(dirname "$0")/.."

GO=${GO:-go}
cs=${BENCH_C:-"1 8 32"}
dur=${BENCH_D:-5s}
rounds=${BENCH_ROUNDS:-2}
benchtime=${BENCH_TIME:-2s}
count=${BENCH_COUNT:-3}
only=${BENCH_ONLY:-}
profile=${BENCH_PROFILE:-0}
port=${BENCH_PORT:-18810}
config=${BENCH_CONFIG:-conformance}
tool=${BENCH_TOOL:-echo}
out=${BENCH_OUT:-$(mktemp -d "${TMPDIR:-/tmp}/mcphost-bench.XXXXXX")}
mkdir -p "$out/bin"

. scripts/benchlib.sh

machine() {
	echo "date:    $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "cpu:     $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -1) ($(nproc) CPUs)"
	echo "go:      $($GO version)"
	echo "loadavg: $(cat /proc/loadavg 2>/dev/null || echo unknown)"
	echo "commit:  $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo ' (modified tree)')"
}
echo "== bench: results in $out"
machine | tee "$out/machine.txt"

echo "== build"
$GO build -o "$out/bin/mcphost" ./cmd/mcphost
$GO build -o "$out/bin/loadgen" ./bench/loadgen
$GO build -o "$out/bin/nativeserver" ./bench/nativeserver
$GO build -o "$out/bin/summary" ./bench/summary
GOOS=wasip1 GOARCH=wasm CGO_ENABLED=0 $GO build -buildmode=c-shared -o "$out/everything.wasm" ./plugins/everything

gobench() { # package, bench regexp, benchtime, [extra flags...]
	local pkg=$1 re=$2 bt=$3
	shift 3
	echo "-- go test -run '^\$' -bench '$re' -benchtime $bt -count $count $* $pkg" | tee -a "$out/gobench.txt"
	$GO test -run '^$' -bench "$re" -benchtime "$bt" -count "$count" "$@" "$pkg" 2>&1 | tee -a "$out/gobench.txt" | grep -E '^(Benchmark|ok|FAIL|---)' || true
	if grep -q '^FAIL' "$out/gobench.txt"; then
		echo "bench: $pkg failed" >&2
		return 1
	fi
}

if [ "$only" != load ]; then
	echo "== Go benchmarks"
	: >"$out/gobench.txt"
	gobench ./host/internal/plugin/ 'WasmHop|ExtismFloor|BridgeCallTool|Callers' "$benchtime"
	gobench ./host/internal/plugin/ 'HopFloor' 2000x
	gobench ./host/internal/plugin/ 'IdleInstanceMemory' 1x
	gobench ./host/ 'CallEcho|ToolsList' "$benchtime"
	gobench ./host/ 'HTTPEcho' 4000x
	gobench ./host/ 'HostStart' 5x
	gobench ./host/ 'IdlePluginMemory' 1x
	if [ "$profile" = 1 ]; then
		echo "== CPU profiles"
		$GO test -run '^$' -bench 'WasmHop/minimal' -benchtime 3s -count 1 \
			-cpuprofile "$out/hop.cpu" -o "$out/plugin.test" ./host/internal/plugin/ >/dev/null
		$GO tool pprof -top -nodecount 25 "$out/plugin.test" "$out/hop.cpu" 2>/dev/null | tee "$out/hop.top"
		$GO test -run '^$' -bench 'HTTPEcho/mcphost/stateful' -benchtime 6000x -count 1 \
			-cpuprofile "$out/http.cpu" -o "$out/host.test" ./host/ >/dev/null
		$GO tool pprof -top -cum -nodecount 40 "$out/host.test" "$out/http.cpu" 2>/dev/null | tee "$out/http.top"
	fi
fi

if [ "$only" != go ]; then
	echo "== Load: $rounds round(s) of ${dur} per target and session count ($cs)"
	case $config in
	conformance)
		mkdir -p "$out/tree/testdata" "$out/tree/plugins/everything"
		cp testdata/conformance.toml "$out/tree/testdata/"
		cp "$out/everything.wasm" "$out/tree/plugins/everything/"
		served=$out/tree/testdata/conformance.toml
		;;
	minimal)
		bench_config "$out/bench.toml" "$out/everything.wasm"
		served=$out/bench.toml
		;;
	*) served=$config ;;
	esac
	echo "mcphost serves $config ($served), tool $tool" | tee -a "$out/machine.txt"
	: >"$out/load.jsonl"
	for mode in stateful stateless; do
		flags=() version=2025-11-25
		if [ "$mode" = stateless ]; then flags=(--stateless) version=2026-07-28; fi
		declare -A tport tpid
		tport=([mcphost]=$port [plain]=$((port + 1)) [native]=$((port + 2)))
		"$out/bin/mcphost" serve --config "$served" --http "127.0.0.1:${tport[mcphost]}" "${flags[@]}" 2>"$out/mcphost-$mode.log" &
		tpid[mcphost]=$!
		"$out/bin/nativeserver" -plain -http "127.0.0.1:${tport[plain]}" "${flags[@]}" 2>"$out/plain-$mode.log" &
		tpid[plain]=$!
		"$out/bin/nativeserver" -http "127.0.0.1:${tport[native]}" "${flags[@]}" 2>"$out/native-$mode.log" &
		tpid[native]=$!
		pids+=("${tpid[@]}")
		for target in mcphost plain native; do
			wait_listening "${tport[$target]}" "${tpid[$target]}" "$out/$target-$mode.log"
		done
		for round in $(seq 1 "$rounds"); do
			for c in $cs; do
				for target in $(rotated $((round + c)) mcphost plain native); do
					p=${tport[$target]} pid=${tpid[$target]} t=echo
					[ "$target" = mcphost ] && t=$tool
					"$out/bin/loadgen" -url "http://127.0.0.1:$p/mcp" -label "$target" -pid "$pid" -tool "$t" \
						-c "$c" -d "$dur" -protocol-version "$version" -json >>"$out/load.jsonl"
					tail -1 "$out/load.jsonl" | sed "s/^/$mode round $round: /"
				done
			done
		done
		cleanup
		pids=()
	done
fi

echo
echo "== Summary (load now: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null))"
cat "$out/machine.txt"
args=()
[ -s "$out/gobench.txt" ] && args+=(-gobench "$out/gobench.txt")
[ -s "$out/load.jsonl" ] && args+=(-load "$out/load.jsonl")
"$out/bin/summary" "${args[@]}"
echo "(raw results in $out)"
