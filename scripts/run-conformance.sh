#!/usr/bin/env bash
# make conformance: runs the official MCP conformance suite against mcphost
# hosting plugins/everything, in two legs, each against its own server:
#   stateful  (2025-11-25 and earlier): --suite all --spec-version 2025-11-25
#   stateless (2026-07-28):             --suite all --spec-version 2026-07-28
# Before the legs, the TypeScript SDK's stdio client (a new user's client)
# lists and calls the default config's tools, then calls a multi-round tool
# of plugins/everything as a 2025-11-25 client (scripts/ts-stdio-mrtr.mjs). Needs bin/mcphost and the
# plugins (the Makefile builds them). Exits non-zero if anything failed.
set -euo pipefail
cd "$(dirname "$0")/.."

bin=./bin/mcphost
config=testdata/conformance.toml
port_base=${MCPHOST_CONFORMANCE_PORT:-18808}
results=${MCPHOST_CONFORMANCE_RESULTS:-}

scripts/conformance.sh --install >/dev/null

run_leg() { # name port spec-version [serve flags...]
	local name=$1 port=$2 version=$3
	shift 3
	local log
	log=$(mktemp)
	"$bin" serve --config "$config" --http "127.0.0.1:$port" "$@" 2>"$log" &
	local pid=$!
	for _ in $(seq 1 100); do
		if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then break; fi
		if ! kill -0 "$pid" 2>/dev/null; then
			echo "conformance: mcphost exited before listening:" >&2
			cat "$log" >&2
			return 1
		fi
		sleep 0.1
	done
	echo "== conformance, $name leg: --suite all --spec-version $version (http://127.0.0.1:$port/mcp)"
	local rc=0 out=()
	[ -n "$results" ] && out=(-o "$results/$name")
	MCPHOST_CONFORMANCE_SKIP_PROBE=1 scripts/conformance.sh "http://127.0.0.1:$port/mcp" \
		--suite all --spec-version "$version" "${out[@]}" || rc=$?
	kill -TERM "$pid" 2>/dev/null || true
	wait "$pid" || true
	if [ "$rc" -ne 0 ]; then
		echo "conformance: $name leg failed (exit $rc); mcphost log:" >&2
		tail -50 "$log" >&2
	fi
	rm -f "$log"
	return "$rc"
}

# A new user's client first: the TypeScript SDK's stdio client launches
# mcphost with the default config, lists the tools and calls echo.
install_dir=$(scripts/conformance.sh --install | sed -n 's/^cache: *//p')
node_bin=$(scripts/conformance.sh --install | sed -n 's/^node: *//p')
echo "== TypeScript SDK stdio client against mcphost serve (mcphost.toml)"
"$node_bin" scripts/ts-stdio-client.mjs "$install_dir/suite" "$bin" mcphost.toml
# A 2025-11-25 client and a plugin asking for input in two rounds: the
# host must ask the client both, and answer it in its own revision.
echo "== TypeScript SDK stdio client, multi-round tool (testdata/conformance.toml)"
"$node_bin" scripts/ts-stdio-mrtr.mjs "$install_dir/suite" "$bin" "$config"

status=0
run_leg stateful "$port_base" 2025-11-25 || status=1
run_leg stateless "$((port_base + 1))" 2026-07-28 --stateless || status=1
exit "$status"
