package main

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/internal/testutil"
)

// freeAddr returns a loopback address that was free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

func TestServeMetricsOnTheirOwnListener(t *testing.T) {
	addr := freeAddr(t)
	cfg := testutil.WriteConfig(t, fmt.Sprintf(`
[server]
watch = false
[server.metrics]
enabled = true
listen = %q
[[plugin]]
name = "hello"
path = %q
`, addr, testutil.GoPlugin(t, "plugins/hello")))

	stdin, closeStdin := io.Pipe()
	var stdout, stderr bytes.Buffer
	done := make(chan error, 1)
	go func() { done <- run(t.Context(), []string{"serve", "--config", cfg}, stdin, &stdout, &stderr) }()

	// The listener opens once the plugins are loaded; a first load compiles
	// hello, which under -race on a busy machine takes tens of seconds, so
	// the deadline is only a hang guard.
	var body string
	deadline := time.Now().Add(3 * time.Minute)
	for {
		resp, err := http.Get("http://" + addr + "/metrics")
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			body = string(b)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("metrics listener never answered: %v", err)
		}
		select {
		case err := <-done:
			t.Fatalf("serve ended before its metrics listener answered: %v\n%s", err, stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	if !strings.Contains(body, `mcphost_plugins_loaded 1`) {
		t.Errorf("/metrics on %s:\n%.2000s", addr, body)
	}
	resp, err := http.Get("http://" + addr + "/readyz")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("/readyz: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	closeStdin.Close() // the stdio client goes away: serve ends
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve: %v\n%s", err, stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not end after stdin closed")
	}
	if _, err := http.Get("http://" + addr + "/metrics"); err == nil {
		t.Error("the metrics listener still answers after serve ended")
	}
}
