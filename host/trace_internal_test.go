package host

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

// referenceID is topLevelID by encoding/json, for the messages that
// decode as a JSON object.
func referenceID(body []byte) (string, bool) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		return "", false
	}
	v, ok := m["id"]
	if !ok || string(v) == "null" || len(v) > maxRequestIDLength {
		return "", true
	}
	if s, err := strconv.Unquote(string(v)); err == nil {
		return s, true
	}
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s, true
	}
	return string(v), true
}

var requestIDSeeds = []string{
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}`,
	`{"jsonrpc":"2.0","method":"tools/call","params":{"a":[1,{"id":9}],"s":"}\"{"},"id":"abc"}`,
	` { "id" : "x\"y" } `,
	`{"id":null,"method":"m"}`,
	`{"method":"notifications/initialized"}`,
	`{"id":-1.5e3}`,
	`{"id":"` + strings.Repeat("a", 300) + `"}`,
	`{"params":{"deep":` + strings.Repeat("[", 2000) + strings.Repeat("]", 2000) + `},"id":7}`,
	`[{"id":1}]`,
	`{"id":`,
	`{"id":1`,
	`{"a":"unterminated`,
	``,
}

func TestTopLevelID(t *testing.T) {
	for _, body := range requestIDSeeds {
		got := topLevelID([]byte(body))
		want, valid := referenceID([]byte(body))
		if valid && strings.Count(body, "[") < 1000 && got != want {
			t.Errorf("topLevelID(%.60q) = %q, want %q", body, got, want)
		}
	}
	if got := topLevelID([]byte(`{"id":"` + strings.Repeat("a", 300) + `"}`)); got != "" {
		t.Errorf("an id of 300 characters kept: %.20q…", got)
	}
}

// FuzzTopLevelID: on every message encoding/json decodes as an object with
// shallow nesting, the scanner finds the same id; on anything else it does
// not panic. Two cases are left out of the comparison, where the scanner
// gives up on the attribute (never on the request): duplicate "id" keys
// (encoding/json keeps the last, the scanner the first) and keys written
// with \u escapes.
func FuzzTopLevelID(f *testing.F) {
	for _, s := range requestIDSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		got := topLevelID(body)
		want, valid := referenceID(body)
		comparable := strings.Count(string(body), "[")+strings.Count(string(body), "{") < 1000 &&
			strings.Count(string(body), `"id"`) <= 1 && !strings.Contains(string(body), `\u`)
		if valid && comparable && got != want {
			t.Errorf("topLevelID(%q) = %q, encoding/json says %q", body, got, want)
		}
	})
}
