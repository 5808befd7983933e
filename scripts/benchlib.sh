# Shared by scripts/bench.sh, bench-compare.sh and bench-extism-patch.sh
# (sourced, never run): the servers they start, how they wait for them and
# the order of the targets in each round.

# pids are the servers started; cleanup stops them (and runs on exit).
pids=()
cleanup() {
	for pid in "${pids[@]}"; do
		kill -TERM "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
}
trap cleanup EXIT

# bench_config FILE WASM writes the config of an mcphost serving
# plugins/everything, built to WASM.
bench_config() {
	cat >"$1" <<TOML
# mcphost serving plugins/everything for the bench scripts.
[server]
name = "mcphost-bench"
log_level = "warn"
watch = false

[[plugin]]
name = "everything"
path = "$2"
timeout = "30s"
TOML
}

# wait_listening PORT PID LOG waits until something listens on the
# loopback PORT; it fails, printing LOG, if the server PID exits first.
wait_listening() {
	for _ in $(seq 1 300); do
		if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
		if ! kill -0 "$2" 2>/dev/null; then
			echo "bench: server on port $1 exited:" >&2
			cat "$3" >&2
			return 1
		fi
		sleep 0.1
	done
	echo "bench: nothing listening on port $1" >&2
	return 1
}

# rotated N A B C prints the three targets in the order of step N: each
# goes first once in three steps, so that a drift in the machine's load
# does not always favour the same one.
rotated() {
	case $(($1 % 3)) in
	0) echo "$2 $3 $4" ;;
	1) echo "$3 $4 $2" ;;
	*) echo "$4 $2 $3" ;;
	esac
}
