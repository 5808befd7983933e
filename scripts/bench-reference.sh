#!/usr/bin/env bash
# The figures of BENCHMARKS.md, "The reference servers: one mcphost against
# three Node processes": builds mcphost and the plugins, installs the
# reference servers (scripts/reference-servers.sh), and runs
# bench/refservers. BENCH_N sets the warm calls per tool [200].
set -euo pipefail
cd "$(dirname "$0")/.."
make build plugins >/dev/null
eval "$(scripts/reference-servers.sh --install | sed -n 's/^dir: */refdir=/p; s/^node: */node=/p')"
echo "node $("$node" --version), $(bin/mcphost version | head -1), $(nproc) cores, $(uname -sr)"
exec go run ./bench/refservers -mcphost bin/mcphost -node "$node" -ref "$refdir" -npx "$(command -v npx)" -n "${BENCH_N:-200}" "$@"
