package host_test

import (
	"bytes"
	"context"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/internal/testutil"
)

const initLine = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"fuzz","version":"1"}}}` + "\n" +
	`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"

// lockedBuffer collects the server's output.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}
func (l *lockedBuffer) Close() error { return nil }

// FuzzServerMessages sends an initialized session arbitrary JSON-RPC lines
// over the stdio framing, against a real host running the hello plugin:
// the host must neither crash nor hang, and must still answer a ping.
func FuzzServerMessages(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":[1,2]}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"garbage"}}`,
		`{"jsonrpc":"2.0","id":"x","method":"resources/read","params":{"uri":"../../etc/passwd"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"no/such/method"}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`,
		`{"jsonrpc":"2.0","id":1,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"x"},"argument":{"name":"a","value":""}}}`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`,
		`{"jsonrpc":"1.0","id":{},"method":7}`,
		`{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"nope"}}`,
		"\x00\x01\x02",
		`{`,
	} {
		f.Add([]byte(seed))
	}
	cfg, err := host.LoadConfig(testutil.WriteConfig(f, "[server]\nwatch = false\n[[plugin]]\nname = \"hello\"\npath = \""+testutil.GoPlugin(f, "plugins/hello")+"\"\ntimeout = \"2s\"\n"))
	if err != nil {
		f.Fatal(err)
	}
	h, err := host.New(context.Background(), cfg, host.Options{})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { h.Close(context.Background()) })

	f.Fuzz(func(t *testing.T, line []byte) {
		input := initLine + string(bytes.ReplaceAll(line, []byte("\n"), nil)) + "\n" +
			`{"jsonrpc":"2.0","id":"last","method":"ping"}` + "\n"
		out := &lockedBuffer{}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		ss, err := h.Server().Connect(ctx, &mcp.IOTransport{Reader: io.NopCloser(bytes.NewReader([]byte(input))), Writer: out}, nil)
		if err != nil {
			return // refused before serving: fine
		}
		done := make(chan struct{})
		go func() { ss.Wait(); close(done) }()
		select {
		case <-done:
		case <-ctx.Done():
			ss.Close()
			t.Fatalf("session still running 10 s after its input ended; input %q", line)
		}
	})
}
