// Command nativeserver is the baseline of mcphost's load benchmark: a
// go-sdk MCP server offering the same echo tool as plugins/everything,
// written in Go (mcp.AddTool), with no Wasm in between. It runs in one of
// two forms:
//
//   - -plain: what a user would write instead of mcphost, and the baseline
//     the goals are judged against: mcp.NewStreamableHTTPHandler with
//     default options (only Stateless set under -stateless), default GC,
//     served at /mcp by a plain http.Server.
//
//   - otherwise, "matched": the StreamableHTTPHandler options mcphost uses
//     (host/http.go): an in-memory event store and a 30 min session
//     timeout when stateful, and requests addressed to another Host
//     refused, as mcphost's DNS-rebinding guard does. It shows what
//     mcphost's own options cost, apart from Wasm.
//
//     go run ./bench/nativeserver -http 127.0.0.1:8809 [-plain] [-stateless]
//
// It serves until SIGINT or SIGTERM. Loopback addresses only: it is a
// benchmark fixture, not a server to expose.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "nativeserver:", err)
		os.Exit(1)
	}
}

// echoIn is the input of echo; its inferred schema matches the plugin's
// (one required string property "text").
type echoIn struct {
	Text string `json:"text" jsonschema:"The text to echo back."`
}

func echo(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
}

// newServer builds the server; plain leaves go-sdk's server options at
// their defaults.
func newServer(plain bool) *mcp.Server {
	var opts *mcp.ServerOptions
	if !plain {
		opts = &mcp.ServerOptions{
			Logger:   slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
			PageSize: 100, // mcphost's default page_size
		}
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "native-bench", Version: "1"}, opts)
	mcp.AddTool(s, &mcp.Tool{
		Name:        "echo",
		Title:       "Echo",
		Description: "Returns the text it is given (used by benchmarks).",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(bool)},
	}, echo)
	return s
}

func run() error {
	addr := flag.String("http", "127.0.0.1:8809", "loopback address to serve Streamable HTTP on (MCP at /mcp)")
	stateless := flag.Bool("stateless", false, "serve the stateless 2026-07-28 revision (as mcphost --stateless)")
	sessionTimeout := flag.Duration("session-timeout", 30*time.Minute, "close sessions idle this long (mcphost's default; not with -plain)")
	plain := flag.Bool("plain", false, "go-sdk's default handler options, as a user would write it (no event store, no session timeout, no Host guard)")
	flag.Parse()

	host, _, err := net.SplitHostPort(*addr)
	if err != nil {
		return fmt.Errorf("-http %q: %w", *addr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("-http %q: only loopback addresses are allowed", *addr)
	}

	server := newServer(*plain)
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	srv := &http.Server{Handler: mux}
	if *plain {
		var opts *mcp.StreamableHTTPOptions
		if *stateless {
			opts = &mcp.StreamableHTTPOptions{Stateless: true}
		}
		mux.Handle("/mcp", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, opts))
	} else {
		opts := &mcp.StreamableHTTPOptions{
			Stateless:      *stateless,
			SessionTimeout: *sessionTimeout,
			Logger:         slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
		}
		if !opts.Stateless {
			opts.EventStore = mcp.NewMemoryEventStore(nil) // as mcphost does (SEP-1699 resumption)
		}
		handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, opts)
		mux.Handle("/mcp", hostGuard(ln.Addr().String(), handler))
		srv.ReadHeaderTimeout = 10 * time.Second
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	fmt.Fprintf(os.Stderr, "nativeserver: serving MCP at http://%s/mcp (stateless=%v plain=%v)\n", ln.Addr(), *stateless, *plain)
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	for ss := range server.Sessions() {
		ss.Close()
	}
	if err := srv.Shutdown(shutdownCtx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}

// hostGuard does what mcphost's origin guard does on the hot path: compare
// the Host header (and Origin, when present) with the listen address.
func hostGuard(listen string, next http.Handler) http.Handler {
	_, port, _ := net.SplitHostPort(listen)
	hosts := []string{strings.ToLower(listen), "localhost:" + port, "127.0.0.1:" + port, "[::1]:" + port}
	ok := func(h string) bool {
		for _, a := range hosts {
			if strings.EqualFold(h, a) {
				return true
			}
		}
		return false
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !ok(r.Host) {
			http.Error(w, "Forbidden: Host is not this server's address", http.StatusForbidden)
			return
		}
		if o := r.Header.Get("Origin"); o != "" && !ok(strings.TrimPrefix(strings.TrimPrefix(o, "http://"), "https://")) {
			http.Error(w, "Forbidden: Origin not allowed", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}
