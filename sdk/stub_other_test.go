//go:build !wasip1

package sdk

import "testing"

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
