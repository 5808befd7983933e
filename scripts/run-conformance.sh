#!/usr/bin/env bash
# make conformance: runs the official MCP conformance suite against mcphost
# hosting plugins/everything, in three steps, each against its own server:
#   stateful  (2025-11-25 and earlier): --suite all --spec-version 2025-11-25
#   stateless (2026-07-28):             --suite all --spec-version 2026-07-28
#   extensions (stateless):             each of $extension_scenarios alone,
#                                       --scenario NAME --spec-version 2026-07-28 --force
# Before them, the TypeScript SDK's stdio client (a new user's client)
# lists and calls the default config's tools, then calls a multi-round tool
# of plugins/everything as a 2025-11-25 client (scripts/ts-stdio-mrtr.mjs). Needs bin/mcphost and the
# plugins (the Makefile builds them). Exits non-zero if anything failed.
#
# Environment: MCPHOST_CONFORMANCE_PORT (first of three ports, default 18808),
# MCPHOST_CONFORMANCE_RESULTS (keep the suite's checks.json files there),
# MCPHOST_CONFORMANCE_EXTENSIONS (space-separated; replaces the list below).
set -euo pipefail
cd "$(dirname "$0")/.."

bin=./bin/mcphost
config=testdata/conformance.toml
port_base=${MCPHOST_CONFORMANCE_PORT:-18808}
results=${MCPHOST_CONFORMANCE_RESULTS:-}

# Extension scenarios: `--suite all --spec-version` leaves them out, so they run one at a
# time against a stateless server (their wire). Every check must pass: a
# failed check fails the step, and so does a SKIPPED one unless it is in
# allowed_skips. The tasks extension (SEP-2663, host/tasks.go) is served by
# plugins/everything's fixtures; the skills extension (SEP-2640,
# host/skills.go) by the skill plugins/everything ships (its skills/).
extension_scenarios=(
	tasks-lifecycle
	tasks-capability-negotiation
	tasks-wire-fields
	tasks-request-state-removal
	tasks-mrtr-input
	tasks-request-headers
	tasks-dispatch-and-envelope
	tasks-status-notifications
	tasks-required-task-error
	tasks-mrtr-composition
	sep-2640-skills-enumeration
	sep-2640-skills-manifest
	sep-2640-skills-directory
)
# Skipped checks that do not fail the step, as scenario:check-id, each with
# the reason. Nothing else may be skipped.
allowed_skips=(
	# The suite's own placeholder, whatever the server does: 0.2.0-alpha.12's
	# tasks-status-notifications returns a single SKIPPED check ("pending
	# subscriptions/listen rewrite": its harness watched the tools/call SSE
	# stream, SEP-2663 sends notifications/tasks on subscriptions/listen).
	tasks-status-notifications:tasks-status-notifications
)
if [ -n "${MCPHOST_CONFORMANCE_EXTENSIONS+set}" ]; then
	read -ra extension_scenarios <<<"$MCPHOST_CONFORMANCE_EXTENSIONS"
fi

scripts/conformance.sh --install >/dev/null

server_pid= server_log=

start_server() { # port [serve flags...]; sets server_pid and server_log
	local port=$1
	shift
	server_log=$(mktemp)
	"$bin" serve --config "$config" --http "127.0.0.1:$port" "$@" 2>"$server_log" &
	server_pid=$!
	for _ in $(seq 1 100); do
		if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then return 0; fi
		if ! kill -0 "$server_pid" 2>/dev/null; then
			echo "conformance: mcphost exited before listening on 127.0.0.1:$port:" >&2
			cat "$server_log" >&2
			wait "$server_pid" || true
			rm -f "$server_log"
			server_pid=
			return 1
		fi
		sleep 0.1
	done
	echo "conformance: mcphost did not listen on 127.0.0.1:$port within 10 s" >&2
	stop_server 1
}

stop_server() { # rc: the step's exit code; on failure, show the server's log
	local rc=$1
	kill -TERM "$server_pid" 2>/dev/null || true
	wait "$server_pid" || true
	if [ "$rc" -ne 0 ] && [ -s "$server_log" ]; then
		echo "conformance: mcphost log (last 50 lines):" >&2
		tail -50 "$server_log" >&2
	fi
	rm -f "$server_log"
	server_pid=
	return "$rc"
}
trap '[ -z "$server_pid" ] || kill -TERM "$server_pid" 2>/dev/null || true' EXIT

run_leg() { # name port spec-version [serve flags...]
	local name=$1 port=$2 version=$3
	shift 3
	start_server "$port" "$@" || return 1
	echo "== conformance, $name leg: --suite all --spec-version $version (http://127.0.0.1:$port/mcp)"
	local rc=0 out=()
	[ -n "$results" ] && out=(-o "$results/$name")
	MCPHOST_CONFORMANCE_SKIP_PROBE=1 scripts/conformance.sh "http://127.0.0.1:$port/mcp" \
		--suite all --spec-version "$version" "${out[@]}" || rc=$?
	[ "$rc" -eq 0 ] || echo "conformance: $name leg failed (exit $rc)" >&2
	stop_server "$rc"
}

# Counts the statuses in one scenario's checks.json files (under dir) and
# prints "passed failed skipped warnings" on the first line, then one line
# per skipped check that allowed_skips does not list ("scenario:id reason").
count_checks() { # dir scenario
	"$node_bin" -e '
		const fs = require("fs"), path = require("path");
		const [dir, scenario, allowed] = process.argv.slice(1);
		const ok = new Set(allowed.split(" ").filter(Boolean));
		const files = [];
		const walk = (d) => { for (const e of fs.readdirSync(d, { withFileTypes: true })) {
			const p = path.join(d, e.name);
			if (e.isDirectory()) walk(p); else if (e.name === "checks.json") files.push(p);
		} };
		walk(dir);
		let passed = 0, failed = 0, skipped = 0, warnings = 0;
		const bad = [];
		for (const f of files) for (const c of JSON.parse(fs.readFileSync(f, "utf8"))) {
			switch (c.status) {
			case "SUCCESS": passed++; break;
			case "FAILURE": failed++; break;
			case "WARNING": warnings++; break;
			case "SKIPPED":
				skipped++;
				if (!ok.has(scenario + ":" + c.id)) bad.push(scenario + ":" + c.id + " " + (c.errorMessage ?? ""));
				break;
			}
		}
		console.log(`${passed} ${failed} ${skipped} ${warnings}`);
		for (const b of bad) console.log(b);
	' "$1" "$2" "${allowed_skips[*]}"
}

run_extensions() { # port
	local port=$1
	if [ "${#extension_scenarios[@]}" -eq 0 ]; then
		echo "== conformance, extension scenarios: none listed (extension_scenarios in $0)"
		echo "Extensions: none listed"
		return 0
	fi
	start_server "$port" --stateless || return 1
	echo "== conformance, extension scenarios, one at a time: --spec-version 2026-07-28 --force (http://127.0.0.1:$port/mcp)"
	local base rc=0 scenario
	local total_p=0 total_f=0 total_s=0 total_w=0
	base=$(mktemp -d)
	for scenario in "${extension_scenarios[@]}"; do
		local dir="$base/$scenario" src=0
		[ -n "$results" ] && dir="$results/extensions/$scenario"
		rm -rf "$dir"
		mkdir -p "$dir"
		# The suite's own output goes to the console; the counts come from
		# its checks.json (-o), which has every status, SKIPPED included.
		MCPHOST_CONFORMANCE_SKIP_PROBE=1 scripts/conformance.sh "http://127.0.0.1:$port/mcp" \
			--scenario "$scenario" --spec-version 2026-07-28 --force -o "$dir" || src=$?
		local counts p f s w unallowed
		if ! counts=$(count_checks "$dir" "$scenario"); then
			echo "conformance: $scenario: cannot read its checks.json under $dir" >&2
			rc=1
			continue
		fi
		read -r p f s w <<<"$(head -1 <<<"$counts")"
		unallowed=$(tail -n +2 <<<"$counts")
		total_p=$((total_p + p)) total_f=$((total_f + f)) total_s=$((total_s + s)) total_w=$((total_w + w))
		echo "-- $scenario: $p passed, $f failed, $s skipped, $w warnings (suite exit $src)"
		if [ $((p + f + s + w)) -eq 0 ]; then
			echo "conformance: $scenario: no checks recorded (unknown scenario, or the suite failed before its first check)" >&2
			rc=1
		fi
		if [ "$f" -ne 0 ]; then
			echo "conformance: $scenario: $f failed checks" >&2
			rc=1
		elif [ "$src" -ne 0 ]; then
			echo "conformance: $scenario: the suite exited $src" >&2
			rc=1
		fi
		if [ -n "$unallowed" ]; then
			echo "conformance: $scenario: skipped checks not in allowed_skips:" >&2
			sed 's/^/  /' <<<"$unallowed" >&2
			rc=1
		fi
	done
	[ -n "$results" ] || rm -rf "$base"
	echo "Extensions: ${#extension_scenarios[@]} scenarios, $total_p passed, $total_f failed, $total_s skipped, $total_w warnings"
	stop_server "$rc"
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

status=0 failed=()
run_leg stateful "$port_base" 2025-11-25 || failed+=(stateful)
run_leg stateless "$((port_base + 1))" 2026-07-28 --stateless || failed+=(stateless)
run_extensions "$((port_base + 2))" || failed+=(extensions)
if [ "${#failed[@]}" -ne 0 ]; then
	echo "conformance: failed: ${failed[*]}" >&2
	status=1
fi
exit "$status"
