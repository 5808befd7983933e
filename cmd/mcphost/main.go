// Command mcphost is an MCP server that hosts sandboxed WebAssembly plugins.
//
// Usage:
//
//	mcphost serve    [--config FILE] [--http ADDR]   serve MCP over stdio or Streamable HTTP
//	mcphost validate [--config FILE]                 load the config and every plugin, then exit
//	mcphost plugin inspect|test|new|accept …         work on one plugin
//	mcphost version
//
// Every command takes --help.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "mcphost: %v\n", err)
		os.Exit(exitCode(err))
	}
}
