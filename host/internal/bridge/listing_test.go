package bridge

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
)

func TestListsAreCappedAtMaxItems(t *testing.T) {
	ctx := context.Background()
	items := func(n int, f string) string {
		var l []string
		for i := range n {
			l = append(l, fmt.Sprintf(f, i, i))
		}
		return strings.Join(l, ",")
	}
	tools, refused, err := ListTools(ctx, fakeCaller{`{"tools":[` + items(1500, `{"name":"t%d","inputSchema":{"type":"object"},"title":"%d"}`) + `]}`}, Limits{})
	if err != nil || len(tools) != DefaultMaxItems || tools[999].MCP.Name != "t999" || len(refused) != 1 ||
		refused[0].Error() != "list_tools: 1500 tools listed, more than max_items = 1000: the first 1000 kept, the other 500 left out (#1001 to #1500)" {
		t.Errorf("tools: kept %d, refused %v, %v", len(tools), refused, err)
	}
	lim := Limits{MaxItems: 3}
	prompts, refused, err := ListPrompts(ctx, fakeCaller{`{"prompts":[` + items(5, `{"name":"p%d","title":"%d"}`) + `]}`}, lim)
	if err != nil || len(prompts) != 3 || len(refused) != 1 || !strings.Contains(refused[0].Error(), "5 prompts listed, more than max_items = 3") {
		t.Errorf("prompts: kept %d, refused %v, %v", len(prompts), refused, err)
	}
	resources, refused, err := ListResources(ctx, fakeCaller{`{"resources":[` + items(5, `{"uri":"test://%d","name":"r%d"}`) + `]}`}, lim)
	if err != nil || len(resources) != 3 || len(refused) != 1 || !strings.Contains(refused[0].Error(), "5 resources listed") {
		t.Errorf("resources: kept %d, refused %v, %v", len(resources), refused, err)
	}
	templates, refused, err := ListResourceTemplates(ctx, fakeCaller{`{"resourceTemplates":[` + items(5, `{"uriTemplate":"test://%d/{x}","name":"t%d"}`) + `]}`}, lim)
	if err != nil || len(templates) != 3 || len(refused) != 1 || !strings.Contains(refused[0].Error(), "5 templates listed") {
		t.Errorf("templates: kept %d, refused %v, %v", len(templates), refused, err)
	}
}

// listing is the output of list_tools with one tool per schema, named t0, t1, ….
func listing(schemas ...string) string {
	var tools []string
	for i, s := range schemas {
		tools = append(tools, fmt.Sprintf(`{"name":"t%d","inputSchema":%s}`, i, s))
	}
	return `{"tools":[` + strings.Join(tools, ",") + `]}`
}

// deepSchema nests n levels of JSON (properties about n/2 levels deep).
func deepSchema(n int) string {
	leaf := `{}`
	if n%2 == 0 {
		leaf = `{"enum":[]}`
	}
	levels := (n - 1) / 2
	return strings.Repeat(`{"type":"object","properties":{"x":`, levels) + leaf + strings.Repeat(`}}`, levels)
}

// Before these checks, a 3,000-deep schema took 8 s and 3.9 GiB to load
// (jsonschema-go decodes each level's subtree again), to be refused anyway.
func TestDeepSchemasAreRefusedBeforeDecoding(t *testing.T) {
	out := listing(deepSchema(9000), deepSchema(64), deepSchema(65))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	tools, refused, err := ListTools(context.Background(), fakeCaller{out}, Limits{})
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if len(tools) != 1 || tools[0].MCP.Name != "t1" {
		t.Errorf("kept %v, want only t1 (64 levels deep)", tools)
	}
	if len(refused) != 2 || !strings.Contains(refused[0].Error(), `tool "t0": nests more than 64 levels deep (at "/inputSchema/properties/x/properties/x/`) ||
		!strings.Contains(refused[1].Error(), `tool "t2": nests more than 64 levels deep`) {
		t.Errorf("refused %v", refused)
	}
	if mib := (after.TotalAlloc - before.TotalAlloc) >> 20; mib > 32 {
		t.Errorf("listing a 9,000-deep schema allocated %d MiB", mib)
	}
	t.Logf("9,000-deep schema (%d bytes) refused; %d KiB allocated in all", len(out), (after.TotalAlloc-before.TotalAlloc)>>10)
}

func TestBigSchemasAreRefused(t *testing.T) {
	big := `{"type":"object","description":"` + strings.Repeat("a", 60_000) + `","properties":{"y":{"description":"` + strings.Repeat("b", 60_000) + `"},` +
		`"z":{"description":"` + strings.Repeat("c", 20_000) + `"}}}`
	_, refused, err := ListTools(context.Background(), fakeCaller{listing(big)}, Limits{})
	if err != nil || len(refused) != 1 || !strings.Contains(refused[0].Error(), "inputSchema: is 140") || !strings.Contains(refused[0].Error(), "at most 131072") {
		t.Errorf("%v %v", refused, err)
	}

	// All the schemas of a plugin together: ~1.1 KB each once resolved.
	wide := func(i int) string {
		return fmt.Sprintf(`{"type":"object","description":"%d","properties":{"x":{"items":[%s{}]}}}`, i, strings.Repeat("{},", 9_000))
	}
	var schemas []string
	for i := range 6 {
		schemas = append(schemas, wide(i))
	}
	tools, refused, err := ListTools(context.Background(), fakeCaller{listing(schemas...)}, Limits{})
	if err != nil || len(tools) != 5 || len(refused) != 1 || !strings.Contains(refused[0].Error(), `tool "t5": inputSchema: holds up to 9004 subschemas, more than the 4980 left of the 50000`) {
		t.Errorf("kept %d; refused %v; %v", len(tools), refused, err)
	}
	// Identical schemas count once.
	schemas = nil
	for range 200 {
		schemas = append(schemas, wide(0))
	}
	if tools, refused, err = ListTools(context.Background(), fakeCaller{listing(schemas...)}, Limits{}); err != nil || len(tools) != 200 || len(refused) > 0 {
		t.Errorf("200 identical wide schemas: kept %d; refused %v; %v", len(tools), refused, err)
	} else if tools[0].Input != tools[199].Input {
		t.Error("identical schemas were resolved twice")
	}
}
