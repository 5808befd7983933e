//go:build !wasip1

package sdk

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestConfigAndLog(t *testing.T) {
	stubConfig = map[string]string{"greeting": "Howdy"}
	defer func() { stubConfig, stubLog = nil, nil }()
	ctx := &Context{}
	if v, ok := ctx.Config("greeting"); !ok || v != "Howdy" {
		t.Errorf("Config = %q, %v", v, ok)
	}
	if _, ok := ctx.Config("missing"); ok {
		t.Error("Config(missing) found")
	}
	ctx.Log(LevelInfo, "hi")
	if len(stubLog) != 1 || stubLog[0] != "hi" {
		t.Errorf("log = %q", stubLog)
	}
}

// TestStateOutsideWasm: outside WASI the SDK keeps state in one scope with
// the host's key rule, so a plugin's handlers can be tested natively.
func TestStateOutsideWasm(t *testing.T) {
	defer func() { stubState, stubCalls = map[string]json.RawMessage{}, nil }()
	ctx := &Context{}
	var n int
	if ok, err := ctx.State("count", &n); ok || err != nil {
		t.Fatalf("State of an unset key = %v, %v", ok, err)
	}
	if err := ctx.SetState("count", 3); err != nil {
		t.Fatal(err)
	}
	if ok, err := ctx.State("count", &n); !ok || err != nil || n != 3 {
		t.Fatalf("State = %v, %v, %d; want true, nil, 3", ok, err, n)
	}
	if err := ctx.DeleteState("count"); err != nil {
		t.Fatal(err)
	}
	if ok, _ := ctx.State("count", &n); ok {
		t.Error("State after DeleteState found the key")
	}
	if err := ctx.SetState("", 1); err == nil || !strings.Contains(err.Error(), "state_set") {
		t.Errorf("SetState of an empty key: %v, want an error naming state_set", err)
	}
	if got := stubCalls[1].payload; got != `{"key":"count","value":3}` {
		t.Errorf("state_set payload = %s", got)
	}
}
