package host_test

import (
	"testing"

	"github.com/mcphost/mcphost/internal/testutil"
)

// hostileConfig is the config of one WAT plugin, "hostile", beside the
// well-behaved hello plugin, whose tool must keep answering.
func hostileConfig(t *testing.T, p testutil.WATPlugin, settings string) string {
	t.Helper()
	return `
[[plugin]]
name = "hostile"
path = "` + p.Build(t) + `"
timeout = "500ms"
` + settings + `

[[plugin]]
name = "hello"
path = "{hello}"
timeout = "5s"
`
}

const oneTool = `{"tools":[{"name":"attack","inputSchema":{"type":"object"}}]}`

func TestWATPluginHelperAnswers(t *testing.T) {
	s := start(t, hostileConfig(t, testutil.WATPlugin{Tools: oneTool}, ""))
	res, _ := callText(t, s.session, "attack", map[string]any{})
	if res.IsError {
		t.Fatalf("attack: %+v", res)
	}
	afterFault(t, s)
}
