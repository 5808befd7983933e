#!/bin/sh
# ensure-jaeger.sh: make a real Jaeger available for the tests that read
# the host's traces back (testutil.StartJaeger), which are skipped where it
# is missing.
#
# Jaeger v2 (the OpenTelemetry Collector with Jaeger's storage and query
# API) has no Debian package; it builds from the Go module proxy. Plain
# `go install github.com/jaegertracing/jaeger/cmd/jaeger@VERSION` refuses
# it, because Jaeger's go.mod has a `replace` directive, so it is built in a
# scratch module that carries Jaeger's own replace lines (read from that
# go.mod, as the proxy serves it) with `go get -tool`, then `go build`:
# 7 to 10 minutes on two cores, once (Go's module and build caches keep
# it; 121 MB). The built binary has no UI (Jaeger's release builds its
# assets with npm), only the query API the tests read. It is installed as
#   ${XDG_CACHE_HOME:-$HOME/.cache}/mcphost/tools/jaeger-VERSION/jaeger
# which is where internal/testutil (StartJaeger) looks, after
# $MCPHOST_JAEGER; a jaeger on PATH is not used, as its version may differ.
# It always exits 0: a machine where Jaeger cannot be built (no Go module
# proxy) still runs every other test, and the message says why the tracing
# tests will be skipped. GO names the go command (default: go).
set -u

# Keep in step with JaegerVersion in internal/testutil/jaeger.go. Jaeger
# tags each release twice: the module version (v1.x) and the v2 binary's
# version (v2.x), which `jaeger version` reports.
version=v1.76.0
version2=v2.13.0
module=github.com/jaegertracing/jaeger
go=${GO:-go}
cache=${XDG_CACHE_HOME:-${HOME:+$HOME/.cache}}
dir=$cache/mcphost/tools/jaeger-$version

if [ -x "$dir/jaeger" ] && "$dir/jaeger" version >/dev/null 2>&1; then
	exit 0
fi

skip() {
	echo "ensure-jaeger: Jaeger $version2 (module $version) is not installed and $1; the tests that read traces back from Jaeger will be skipped" >&2
	exit 0
}

[ -n "$cache" ] || skip "neither XDG_CACHE_HOME nor HOME is set, so there is no user cache to install it in"
command -v "$go" >/dev/null 2>&1 || skip "there is no Go toolchain ($go) to build it with"
mkdir -p "$dir" || skip "$dir cannot be created"
log=$(mktemp "${TMPDIR:-/tmp}/ensure-jaeger.XXXXXX")
tmp=$(mktemp -d "$dir/build.XXXXXX") || skip "$dir is not writable"
fail() {
	rm -rf "$tmp"
	skip "$1 (log: $log)"
}
echo "ensure-jaeger: building Jaeger $version2 from the Go module proxy (7 to 10 minutes on two cores, once)"
start=$(date +%s)

# Jaeger's go.mod as the proxy serves it, for its replace directives, both
# the one-line form and the block form.
gomod=$(cd "$tmp" && "$go" mod download -json "$module@$version" 2>>"$log" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",*$/\1/p')
[ -n "$gomod" ] && [ -r "$gomod" ] || fail "its go.mod could not be downloaded"
replaces=$(awk '
	/^replace[[:space:]]*\(/ { block = 1; next }
	block && /^\)/ { block = 0; next }
	block && NF { print "replace " $0; next }
	/^replace[[:space:]]/ { print }
' "$gomod")

# The scratch module is outside the repository, so that mcphost's go.mod
# plays no part; GOFLAGS from the environment could (-mod=vendor), so it
# is cleared.
{
	echo "module mcphost.invalid/jaeger-build"
	echo
	echo "go $("$go" env GOVERSION | sed 's/^go//; s/^\([0-9]*\.[0-9]*\).*/\1/')"
	echo
	[ -z "$replaces" ] || echo "$replaces"
} >"$tmp/go.mod" || fail "the scratch module could not be written"
echo "scratch go.mod:" >>"$log"
cat "$tmp/go.mod" >>"$log"
if ! (cd "$tmp" && GOFLAGS= "$go" get -tool "$module/cmd/jaeger@$version") >>"$log" 2>&1; then
	fail "go get -tool $module/cmd/jaeger@$version failed"
fi
ldflags="-X $module/internal/version.latestVersion=$version2 -X $module/internal/version.commitSHA=module-$version"
if ! (cd "$tmp" && GOFLAGS= CGO_ENABLED=0 "$go" build -trimpath -ldflags "$ldflags" -o "$tmp/jaeger" "$module/cmd/jaeger") >>"$log" 2>&1; then
	fail "go build of $module/cmd/jaeger failed"
fi
"$tmp/jaeger" version >>"$log" 2>&1 || fail "the jaeger it built does not run"
# Renamed into place: a jaeger in $dir is always a complete one.
mv -f "$tmp/jaeger" "$dir/jaeger" && rm -rf "$tmp" || skip "it could not be moved into $dir (log: $log)"
rm -f "$log"
echo "ensure-jaeger: installed Jaeger $("$dir/jaeger" version 2>/dev/null | sed -n 's/.*"gitVersion": *"\([^"]*\)".*/\1/p') as $dir/jaeger in $(($(date +%s) - start))s"
