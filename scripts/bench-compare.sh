#!/usr/bin/env bash
# A change measured against its base in one run (BENCHMARKS.md, issue 18):
#
#   scripts/bench-compare.sh BASE_REV
#
# builds mcphost, plugins/everything and the plugin package's test binary
# twice, from BASE_REV (a copy made with git archive: no worktree, nothing
# in the tree changes) and from the working tree, then
#
#   1. BenchmarkWasmHop (minimal, stateful, stateless, wat-ping): the two
#      test binaries alternately, BENCH_ROUNDS rounds;
#   2. unless BENCH_ONLY=go: bench/loadgen at C = BENCH_C against mcphost
#      as of BASE_REV ("base") and mcphost now ("now"), each serving its
#      revision's testdata/conformance.toml, and a plain go-sdk
#      server ("plain", bench/nativeserver -plain), stateful (2025-11-25)
#      and stateless (2026-07-28), BENCH_ROUNDS rounds, order rotated.
#
# Timing never fails anything. Environment: BENCH_ROUNDS [3], BENCH_TIME
# [2s], BENCH_C [8], BENCH_D [5s], BENCH_PORT [18870], BENCH_OUT [new temp
# directory], BENCH_ONLY ["go" for the hop only, "load" for the load only].
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
base_rev=${1:?usage: scripts/bench-compare.sh BASE_REV}

GO=${GO:-go}
rounds=${BENCH_ROUNDS:-3}
benchtime=${BENCH_TIME:-2s}
c=${BENCH_C:-8}
dur=${BENCH_D:-5s}
port=${BENCH_PORT:-18870}
only=${BENCH_ONLY:-}
out=${BENCH_OUT:-$(mktemp -d "${TMPDIR:-/tmp}/mcphost-compare.XXXXXX")}
mkdir -p "$out/bin" "$out/base"
echo "== results in $out"
echo "base: $(git rev-parse --short "$base_rev")  now: $(git rev-parse --short HEAD)$(git diff --quiet || echo ' (modified tree)')"
echo "loadavg: $(cat /proc/loadavg)"

. scripts/benchlib.sh

echo "== build"
git archive "$base_rev" | tar -x -C "$out/base"
for v in base now; do
	dir=$repo
	[ "$v" = base ] && dir=$out/base
	(
		cd "$dir"
		[ "$only" = load ] || $GO test -c -o "$out/bin/$v.test" ./host/internal/plugin/
		[ "$only" = go ] || {
			$GO build -o "$out/bin/mcphost-$v" ./cmd/mcphost
			GOOS=wasip1 GOARCH=wasm CGO_ENABLED=0 $GO build -buildmode=c-shared -o "$out/everything-$v.wasm" ./plugins/everything
		}
	)
done

if [ "$only" != load ]; then
	echo "== BenchmarkWasmHop, $rounds rounds, alternately"
	for r in $(seq 1 "$rounds"); do
		for v in base now; do
			dir=$repo
			[ "$v" = base ] && dir=$out/base
			echo "round $r $v loadavg $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out/hop.txt"
			(cd "$dir/host/internal/plugin" && "$out/bin/$v.test" -test.run '^$' \
				-test.bench 'WasmHop/(minimal|stateful|stateless|wat-ping)$' \
				-test.benchtime "$benchtime" -test.benchmem) | grep '^Benchmark' | sed "s/^/$v /" | tee -a "$out/hop.txt"
		done
	done
fi

if [ "$only" != go ]; then
	$GO build -o "$out/bin/loadgen" ./bench/loadgen
	$GO build -o "$out/bin/nativeserver" ./bench/nativeserver
	for mode in stateful stateless; do
		flags=() version=2025-11-25
		if [ "$mode" = stateless ]; then flags=(--stateless) version=2026-07-28; fi
		echo "== load: C = $c, $mode, $rounds rounds of $dur"
		declare -A tport tpid
		tport=([base]=$port [now]=$((port + 1)) [plain]=$((port + 2)))
		for v in base now; do
			# testdata/conformance.toml of each revision as it is, with
			# that revision's plugin where its relative path points.
			mkdir -p "$out/tree-$v/testdata" "$out/tree-$v/plugins/everything"
			cp "$([ "$v" = base ] && echo "$out/base" || echo "$repo")/testdata/conformance.toml" "$out/tree-$v/testdata/"
			cp "$out/everything-$v.wasm" "$out/tree-$v/plugins/everything/everything.wasm"
			"$out/bin/mcphost-$v" serve --config "$out/tree-$v/testdata/conformance.toml" --http "127.0.0.1:${tport[$v]}" "${flags[@]}" 2>"$out/$v-$mode.log" &
			tpid[$v]=$!
		done
		"$out/bin/nativeserver" -plain -http "127.0.0.1:${tport[plain]}" "${flags[@]}" 2>"$out/plain-$mode.log" &
		tpid[plain]=$!
		pids+=("${tpid[@]}")
		for t in base now plain; do
			wait_listening "${tport[$t]}" "${tpid[$t]}" "$out/$t-$mode.log"
		done
		for r in $(seq 1 "$rounds"); do
			for t in $(rotated $((r - 1)) base now plain); do
				echo "$mode round $r $t loadavg $(cut -d' ' -f1-3 /proc/loadavg)" >>"$out/loadavg.txt"
				"$out/bin/loadgen" -url "http://127.0.0.1:${tport[$t]}/mcp" -label "$t" -pid "${tpid[$t]}" \
					-c "$c" -d "$dur" -protocol-version "$version" -json >>"$out/load-$mode.jsonl"
				tail -1 "$out/load-$mode.jsonl" | sed "s/^/$mode round $r: /"
			done
		done
		cleanup
		pids=()
	done
fi
echo "loadavg now: $(cat /proc/loadavg)"
echo "(raw results in $out: hop.txt, load-*.jsonl, loadavg.txt)"
