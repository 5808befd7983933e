package host_test

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/internal/testutil"
)

// wireRecorder is an http.RoundTripper that keeps every response body a
// client reads: what went over the wire, before go-sdk decodes it.
type wireRecorder struct {
	mu   sync.Mutex
	text bytes.Buffer
}

func (w *wireRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.TeeReader(resp.Body, w), resp.Body}
	return resp, nil
}

func (w *wireRecorder) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.text.Write(p)
}

// take returns what was recorded since the last take.
func (w *wireRecorder) take() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := w.text.String()
	w.text.Reset()
	return s
}

// TestEachRevisionGetsOnlyItsOwnFields: ttlMs and cacheScope (2026-07-28,
// SEP-2549) reach resources/read and the list methods of a 2026-07-28
// client, and never a 2025-06-18 or 2025-11-25 one, whose schemas have no
// such fields. Read off the wire, under go-sdk clients of each revision.
func TestEachRevisionGetsOnlyItsOwnFields(t *testing.T) {
	everything := testutil.GoPlugin(t, "plugins/everything")
	for _, tc := range []struct {
		version, server string
		want            bool
	}{
		{"2025-06-18", "", false},
		{"2025-11-25", "", false},
		{"2026-07-28", "stateless = true\n", true},
	} {
		t.Run(tc.version, func(t *testing.T) {
			endpoint, _ := httpHost(t, "[server]\nwatch = false\nlist_ttl = \"30s\"\n"+tc.server+`
[[plugin]]
name = "everything"
path = "`+everything+`"
`)
			wire := &wireRecorder{}
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "wire", Version: "1"}, nil).Connect(t.Context(),
				&mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: &http.Client{Transport: wire}},
				&mcp.ClientSessionOptions{ProtocolVersion: tc.version})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cs.Close() })
			wire.take()
			for _, call := range []struct {
				method string
				do     func() error
			}{
				{"resources/read", func() error {
					_, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "test://static-text"})
					return err
				}},
				{"tools/list", func() error { _, err := cs.ListTools(t.Context(), nil); return err }},
				{"prompts/list", func() error { _, err := cs.ListPrompts(t.Context(), nil); return err }},
				{"resources/list", func() error { _, err := cs.ListResources(t.Context(), nil); return err }},
				{"resources/templates/list", func() error { _, err := cs.ListResourceTemplates(t.Context(), nil); return err }},
			} {
				if err := call.do(); err != nil {
					t.Fatalf("%s: %v", call.method, err)
				}
				raw := wire.take()
				for _, field := range []string{`"ttlMs"`, `"cacheScope"`} {
					if got := strings.Contains(raw, field); got != tc.want {
						t.Errorf("%s: %s on the wire = %v, want %v:\n%.400s", call.method, field, got, tc.want, raw)
					}
				}
				if !tc.want && strings.Contains(raw, `"resultType"`) {
					t.Errorf("%s: resultType (2026-07-28) sent to a %s client", call.method, tc.version)
				}
				if tc.want && call.method == "tools/list" && !strings.Contains(raw, `"ttlMs":30000`) {
					t.Errorf("tools/list ttlMs is not list_ttl: %.400s", raw)
				}
			}
		})
	}
}
