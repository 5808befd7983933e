//go:build !wasip1

package sdk

import (
	"encoding/json"
	"errors"
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

// TestUpdateStateStartsAgainWhenTheValueChanged: UpdateState stores only
// over the value it read; when another call changed it in between (here,
// update itself changes it once, as a concurrent call would), it reads the
// new value and applies update to that, so no change is lost.
func TestUpdateStateStartsAgainWhenTheValueChanged(t *testing.T) {
	defer func() { stubState, stubCalls = map[string]json.RawMessage{}, nil }()
	ctx := &Context{}
	calls := 0
	err := UpdateState(ctx, "count", func(n *int, ok bool) error {
		calls++
		if calls == 1 {
			if ok {
				t.Error("the first read found a value")
			}
			stubState["count"] = json.RawMessage(`10`) // another call's set
		}
		*n++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if ok, _ := ctx.State("count", &n); !ok || n != 11 || calls != 2 {
		t.Errorf("count = %d after %d tries, want 11 after 2", n, calls)
	}
	if err := UpdateState(ctx, "count", func(*int, bool) error { return errors.New("no") }); err == nil || err.Error() != "no" {
		t.Errorf("UpdateState with a failing update: %v", err)
	}
	if ok, _ := ctx.State("count", &n); !ok || n != 11 {
		t.Errorf("a failed update stored something: %d", n)
	}
}
