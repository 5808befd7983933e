#!/usr/bin/env bash
# bench-tracing.sh: the figures of BENCHMARKS.md on the cost of tracing
# (issue 29): echo through plugins/everything at C sessions, over HTTP, for
# three mcphost servers in the same run, interleaved:
#   off    tracing off (the default);
#   jaeger every call sampled (always_on), exported over OTLP/HTTP to a
#          Jaeger v2 on loopback (scripts/ensure-jaeger.sh builds it);
#   down   every call sampled, exported to an endpoint nobody listens on
#          (a backend that is down: spans are dropped, calls must not wait).
# It prints calls/s and latency for each, and the spans each exported and
# dropped (from its /metrics). Timing never fails anything here.
#
# Environment (defaults in brackets):
#   BENCH_C       concurrent sessions [8]
#   BENCH_D       duration of one run [5s]
#   BENCH_ROUNDS  rounds (each runs the three, in a rotated order) [3]
#   BENCH_PORT    first of the ports used [18850]
#   BENCH_OUT     results directory [a new temporary directory]
#   MCPHOST_JAEGER the jaeger binary [the one ensure-jaeger.sh caches]
set -euo pipefail
cd "$(dirname "$0")/.."

GO=${GO:-go}
c=${BENCH_C:-8}
d=${BENCH_D:-5s}
rounds=${BENCH_ROUNDS:-3}
port=${BENCH_PORT:-18850}
out=${BENCH_OUT:-$(mktemp -d "${TMPDIR:-/tmp}/mcphost-bench-tracing.XXXXXX")}
mkdir -p "$out/bin"
. scripts/benchlib.sh

jaeger=${MCPHOST_JAEGER:-${XDG_CACHE_HOME:-$HOME/.cache}/mcphost/tools/jaeger-v1.76.0/jaeger}
[ -x "$jaeger" ] || { echo "bench-tracing: no Jaeger at $jaeger (scripts/ensure-jaeger.sh builds it)" >&2; exit 2; }

echo "bench-tracing: building into $out"
"$GO" build -o "$out/bin/mcphost" ./cmd/mcphost
"$GO" build -o "$out/bin/loadgen" ./bench/loadgen
GOOS=wasip1 GOARCH=wasm CGO_ENABLED=0 "$GO" build -buildmode=c-shared -o "$out/everything.wasm" ./plugins/everything

# Jaeger (the config of internal/testutil's StartJaeger): OTLP/HTTP on
# port+3, query on port+4, OTLP/gRPC on port+5.
cat >"$out/jaeger.yaml" <<YAML
service:
  extensions: [jaeger_storage, jaeger_query]
  pipelines:
    traces:
      receivers: [otlp]
      exporters: [jaeger_storage_exporter]
  telemetry:
    metrics:
      level: none
extensions:
  jaeger_query:
    storage:
      traces: memstore
    enable_tracing: false
    http:
      endpoint: 127.0.0.1:$((port + 4))
    grpc:
      endpoint: 127.0.0.1:0
  jaeger_storage:
    backends:
      memstore:
        memory:
          max_traces: 100000
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: 127.0.0.1:$((port + 5))
      http:
        endpoint: 127.0.0.1:$((port + 3))
exporters:
  jaeger_storage_exporter:
    trace_storage: memstore
YAML
"$jaeger" --config "$out/jaeger.yaml" >"$out/jaeger.log" 2>&1 &
pids+=($!)
wait_listening $((port + 3)) "${pids[-1]}" "$out/jaeger.log"

start() { # name port [telemetry lines]
	local name=$1 p=$2
	shift 2
	bench_config "$out/$name.toml" "$out/everything.wasm"
	{
		echo "[server.metrics]"
		echo "enabled = true"
		if [ $# -gt 0 ]; then
			echo "[server.telemetry]"
			printf '%s\n' "$@"
		fi
	} >>"$out/$name.toml"
	"$out/bin/mcphost" serve --config "$out/$name.toml" --http "127.0.0.1:$p" >"$out/$name.log" 2>&1 &
	pids+=($!)
	eval "pid_$name=$!"
	wait_listening "$p" "$!" "$out/$name.log"
}
start off "$port"
start jaeger $((port + 1)) 'traces_exporter = "otlp"' "endpoint = \"http://127.0.0.1:$((port + 3))\"" 'sampler = "always_on"' 'service_name = "bench"'
start down $((port + 2)) 'traces_exporter = "otlp"' 'endpoint = "http://127.0.0.1:9"' 'sampler = "always_on"' 'service_name = "bench-down"'

echo "bench-tracing: C=$c, $d per run, $rounds rounds; load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq 1 "$rounds"); do
	for name in $(rotated "$r" off jaeger down); do
		case $name in off) p=$port ;; jaeger) p=$((port + 1)) ;; down) p=$((port + 2)) ;; esac
		pid_var=pid_$name
		"$out/bin/loadgen" -url "http://127.0.0.1:$p/mcp" -c "$c" -d "$d" -label "$name" -pid "${!pid_var}" -json >>"$out/results.jsonl"
	done
done
echo "bench-tracing: load after: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-7s %10s %9s %9s %9s %12s %6s\n' target calls/s p50_us p90_us p99_us cpu_us/call errors
sed -E 's/.*"label":"([a-z]+)".*"errors":([0-9]+).*"calls_per_sec":([0-9.]+).*"p50_us":([0-9.]+).*"p90_us":([0-9.]+).*"p99_us":([0-9.]+).*"server_cpu_us_per_call":([0-9.]+).*/\1 \3 \4 \5 \6 \7 \2/' "$out/results.jsonl" |
	while read -r name cps p50 p90 p99 cpu errs; do
		printf '%-7s %10.0f %9.0f %9.0f %9.0f %12.0f %6s\n' "$name" "$cps" "$p50" "$p90" "$p99" "$cpu" "$errs"
	done
for name in jaeger down; do
	case $name in jaeger) p=$((port + 1)) ;; down) p=$((port + 2)) ;; esac
	echo "$name: $(curl -s "http://127.0.0.1:$p/metrics" | grep -E '^mcphost_trace_spans_(exported|dropped)_total' | tr '\n' ' ')"
done
echo "bench-tracing: results in $out/results.jsonl"
