package host

import (
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// mustID is jsonrpc.MakeID of v (a float64 or string, as JSON decodes).
func mustID(t *testing.T, v any) jsonrpc.ID {
	t.Helper()
	id, err := jsonrpc.MakeID(v)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func TestMessageHeader(t *testing.T) {
	num := func(n float64) jsonrpc.ID { return mustID(t, n) }
	for _, tc := range []struct {
		msg    string
		id     jsonrpc.ID
		method bool
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`, num(1), true},
		{`{"method":"tools/call","params":{"arguments":{"id":7,"method":"no"}},"jsonrpc":"2.0","id":"a"}`, mustID(t, "a"), true},
		{`{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"x"}]}}`, num(3), false},
		{`{"jsonrpc":"2.0","result":{},"id":4}`, num(4), false},
		{`{"jsonrpc":"2.0","id":5,"error":{"code":-32603,"message":"x"}}`, num(5), false},
		{`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`, jsonrpc.ID{}, true},
		{`{"jsonrpc":"2.0","id":null,"method":"ping"}`, jsonrpc.ID{}, true},
		{`{"jsonrpc":"2.0","ID":6,"Method":"ping"}`, jsonrpc.ID{}, false}, // keys match exactly
		{`{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}`, jsonrpc.ID{}, false},
		{`[1,2]`, jsonrpc.ID{}, false},
		{`{"jsonrpc":"2.0","id":`, jsonrpc.ID{}, false},
		// go-sdk's encoding (the fast path), and near misses read as JSON.
		{`{"jsonrpc":"2.0","id":"a\"b","method":"x"}`, mustID(t, `a"b`), true},
		{`{"jsonrpc":"2.0","id":-7,"error":{"code":1,"message":"x"}}`, num(-7), false},
		{`{"jsonrpc":"2.0","id":1.5e0,"result":{}}`, num(1), false},
		{`{"jsonrpc":"2.0","id":2,"params":{},"method":"x"}`, num(2), true},
		{`{"jsonrpc":"2.0","id":"s","result":{}}`, mustID(t, "s"), false},
	} {
		id, method := messageHeader([]byte(tc.msg))
		if id != tc.id || method != tc.method {
			t.Errorf("messageHeader(%s) = %v, %v; want %v, %v", tc.msg, id.Raw(), method, tc.id.Raw(), tc.method)
		}
	}
}

// TestStdioCallsDrain: calls read are pending until answered; once
// draining, new calls are refused, and idle closes with the last answer
// (one in a batch of answers included).
func TestStdioCallsDrain(t *testing.T) {
	c := newStdioCalls()
	for _, m := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call"}`,
		`{"jsonrpc":"2.0","id":"two","method":"tools/call"}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":9,"result":{}}`, // the client's answer to the host
	} {
		if refuse, _ := c.incoming([]byte(m)); refuse {
			t.Fatalf("%s refused before draining", m)
		}
	}
	if n := c.count(); n != 2 {
		t.Fatalf("%d calls pending, want 2", n)
	}
	c.written([]byte(`{"jsonrpc":"2.0","id":5,"method":"sampling/createMessage","params":{}}` + "\n")) // the host's own request
	c.written([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}` + "\n"))
	idle := c.drain()
	if refuse, id := c.incoming([]byte(`{"jsonrpc":"2.0","id":3,"method":"ping"}`)); !refuse || id != mustID(t, 3.0) {
		t.Errorf("a call while draining: refuse %v, id %v", refuse, id.Raw())
	}
	if refuse, _ := c.incoming([]byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"two"}}`)); refuse {
		t.Error("a notification refused while draining")
	}
	select {
	case <-idle:
		t.Fatal("idle while a call is pending")
	default:
	}
	c.written([]byte(`[{"jsonrpc":"2.0","id":"two","result":{}}]` + "\n"))
	select {
	case <-idle:
	default:
		t.Fatalf("not idle once every call is answered (%d pending)", c.count())
	}
	if got := string(shuttingDownAnswer(mustID(t, "x"))); got != `{"jsonrpc":"2.0","id":"x","error":{"code":-32004,"message":"`+shuttingDownMessage+`"}}` {
		t.Errorf("refusal = %s", got)
	}
}

// BenchmarkStdioCallsTracking is what following a call costs over stdio:
// its request read (incoming) and its answer written (written), for an
// answer of a small text and one of 1 MiB (whose result is not read), and
// a request in go-sdk's key order or in the TypeScript SDK's (method and
// params first: read as JSON).
func BenchmarkStdioCallsTracking(b *testing.B) {
	requests := map[string][]byte{
		"go-sdk":     []byte(`{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}`),
		"typescript": []byte(`{"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}},"jsonrpc":"2.0","id":12}`),
	}
	for _, tc := range []struct {
		client string
		size   int
	}{{"go-sdk", 16}, {"go-sdk", 1 << 20}, {"typescript", 16}} {
		request := requests[tc.client]
		answer := []byte(`{"jsonrpc":"2.0","id":12,"result":{"content":[{"type":"text","text":"` + strings.Repeat("x", tc.size) + `"}]}}` + "\n")
		b.Run(fmt.Sprintf("request=%s/answer=%dB", tc.client, len(answer)), func(b *testing.B) {
			c := newStdioCalls()
			b.ReportAllocs()
			for b.Loop() {
				c.incoming(request)
				c.written(answer)
			}
		})
	}
}
