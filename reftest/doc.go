// Package reftest holds the differential tests of the plugins that replace
// the MCP reference servers (plugins/filesystem, memory,
// sequential-thinking, fetch, time): the same calls go to mcphost serving
// the plugin and to the reference server installed from npm, and the
// results are compared.
//
// The tests run through `make reference` (part of `make test`), which
// builds bin/mcphost and the plugins, installs the reference servers and
// Node 22 from npm into a cache (scripts/reference-servers.sh) and passes
// their places in MCPHOST_BIN, MCPHOST_NODE and MCPHOST_REFERENCE_DIR.
// Without MCPHOST_BIN (a plain `go test ./...`) they are skipped, saying so.
package reftest
