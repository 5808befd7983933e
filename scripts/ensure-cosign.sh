#!/bin/sh
# ensure-cosign.sh: make the real cosign CLI available for the tests that
# sign plugins with it (host/internal/registry, host, cmd/mcphost), which
# are skipped where it is missing.
#
# cosign has no Debian package; it builds from source with the Go toolchain
# (`go install github.com/sigstore/cosign/v2/cmd/cosign@VERSION`, a few
# minutes on two cores, once: Go's module and build caches keep it). It is
# installed as
#   ${XDG_CACHE_HOME:-$HOME/.cache}/mcphost/tools/cosign-VERSION/cosign
# which is where internal/testutil (FindCosign) looks, after
# $MCPHOST_COSIGN; a cosign on PATH is not used, as its version may differ.
# It always exits 0: a machine where cosign cannot be built (no Go module
# proxy) still runs every other test, and the message says why the cosign
# tests will be skipped. GO names the go command (default: go).
set -u

# Keep in step with CosignVersion in internal/testutil/cosign.go.
version=v2.6.5
go=${GO:-go}
cache=${XDG_CACHE_HOME:-${HOME:+$HOME/.cache}}
dir=$cache/mcphost/tools/cosign-$version

if [ -x "$dir/cosign" ] && "$dir/cosign" version >/dev/null 2>&1; then
	exit 0
fi

skip() {
	echo "ensure-cosign: cosign $version is not installed and $1; the tests that sign with the real cosign will be skipped" >&2
	exit 0
}

[ -n "$cache" ] || skip "neither XDG_CACHE_HOME nor HOME is set, so there is no user cache to install it in"
command -v "$go" >/dev/null 2>&1 || skip "there is no Go toolchain ($go) to build it with"
mkdir -p "$dir" || skip "$dir cannot be created"
log=$(mktemp "${TMPDIR:-/tmp}/ensure-cosign.XXXXXX")
tmp=$(mktemp -d "$dir/build.XXXXXX") || skip "$dir is not writable"
echo "ensure-cosign: building cosign $version with go install (a few minutes, once)"
# Outside the repository, so that its go.mod plays no part.
if ! (cd "$tmp" && GOBIN="$tmp" GOFLAGS=-buildvcs=false "$go" install "github.com/sigstore/cosign/v2/cmd/cosign@$version") >>"$log" 2>&1; then
	rm -rf "$tmp"
	skip "go install failed (log: $log)"
fi
# Renamed into place: a cosign in $dir is always a complete one.
mv -f "$tmp/cosign" "$dir/cosign" && rm -rf "$tmp" || skip "it could not be moved into $dir (log: $log)"
rm -f "$log"
echo "ensure-cosign: installed $("$dir/cosign" version 2>/dev/null | sed -n 's/^GitVersion: *//p') as $dir/cosign"
