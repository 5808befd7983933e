// Command memory is the knowledge-graph memory of the MCP reference server
// @modelcontextprotocol/server-memory (2026.8.31) as an mcphost plugin: the
// same tools, schemas, results and memory file format, the file confined
// to a granted directory, written atomically by one writer at a time.
// README.md says how to configure it and where it differs.
//
// Build: GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o plugins/memory/memory.wasm ./plugins/memory
package main

import (
	"encoding/json"
	"fmt"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/sdk"
)

func main() {} // never called: a reactor runs only init and its exports

// resourceURI is the knowledge graph as a resource, as the reference
// offers it.
const resourceURI = "memory://knowledge-graph"

// Schemas, as the reference lists them (without its "$schema"): input
// objects allow other properties (the reference's zod schemas strip them),
// output objects do not.
const (
	entityProps = `"properties":{"name":{"type":"string","description":"The name of the entity"},` +
		`"entityType":{"type":"string","description":"The type of the entity"},` +
		`"observations":{"type":"array","items":{"type":"string"},"description":"An array of observation contents associated with the entity"}},` +
		`"required":["name","entityType","observations"]`
	relationProps = `"properties":{"from":{"type":"string","description":"The name of the entity where the relation starts"},` +
		`"to":{"type":"string","description":"The name of the entity where the relation ends"},` +
		`"relationType":{"type":"string","description":"The type of the relation"}},` +
		`"required":["from","to","relationType"]`
	entityIn    = `{"type":"object",` + entityProps + `}`
	entityOut   = `{"type":"object",` + entityProps + `,"additionalProperties":false}`
	relationIn  = `{"type":"object",` + relationProps + `}`
	relationOut = `{"type":"object",` + relationProps + `,"additionalProperties":false}`

	graphOut = `{"type":"object","properties":{"entities":{"type":"array","items":` + entityOut + `},"relations":{"type":"array","items":` + relationOut + `}},` +
		`"required":["entities","relations"],"additionalProperties":false}`
	successOut = `{"type":"object","properties":{"success":{"type":"boolean"},"message":{"type":"string"}},"required":["success","message"],"additionalProperties":false}`
)

// annotations returns tool annotations with the reference's hints.
func annotations(readOnly, destructive, idempotent bool) *abi.ToolAnnotations {
	return &abi.ToolAnnotations{ReadOnlyHint: readOnly, DestructiveHint: &destructive, IdempotentHint: idempotent, OpenWorldHint: new(bool)}
}

func init() {
	sdk.AddTool(abi.Tool{
		Name:         "create_entities",
		Title:        "Create Entities",
		Description:  "Create multiple new entities in the knowledge graph",
		InputSchema:  json.RawMessage(`{"type":"object","properties":{"entities":{"type":"array","items":` + entityIn + `}},"required":["entities"]}`),
		OutputSchema: json.RawMessage(`{"type":"object","properties":{"entities":{"type":"array","items":` + entityOut + `}},"required":["entities"],"additionalProperties":false}`),
		Annotations:  annotations(false, false, false),
	}, createEntitiesTool)
	sdk.AddTool(abi.Tool{
		Name:         "create_relations",
		Title:        "Create Relations",
		Description:  "Create multiple new relations between entities in the knowledge graph. Relations should be in active voice",
		InputSchema:  json.RawMessage(`{"type":"object","properties":{"relations":{"type":"array","items":` + relationIn + `}},"required":["relations"]}`),
		OutputSchema: json.RawMessage(`{"type":"object","properties":{"relations":{"type":"array","items":` + relationOut + `}},"required":["relations"],"additionalProperties":false}`),
		Annotations:  annotations(false, false, false),
	}, createRelationsTool)
	sdk.AddTool(abi.Tool{
		Name:        "add_observations",
		Title:       "Add Observations",
		Description: "Add new observations to existing entities in the knowledge graph",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"observations":{"type":"array","items":{"type":"object","properties":{` +
			`"entityName":{"type":"string","description":"The name of the entity to add the observations to"},` +
			`"contents":{"type":"array","items":{"type":"string"},"description":"An array of observation contents to add"}},` +
			`"required":["entityName","contents"]}}},"required":["observations"]}`),
		OutputSchema: json.RawMessage(`{"type":"object","properties":{"results":{"type":"array","items":{"type":"object","properties":{` +
			`"entityName":{"type":"string"},"addedObservations":{"type":"array","items":{"type":"string"}}},` +
			`"required":["entityName","addedObservations"],"additionalProperties":false}}},"required":["results"],"additionalProperties":false}`),
		Annotations: annotations(false, false, false),
	}, addObservationsTool)
	sdk.AddTool(abi.Tool{
		Name:         "delete_entities",
		Title:        "Delete Entities",
		Description:  "Delete multiple entities and their associated relations from the knowledge graph",
		InputSchema:  json.RawMessage(`{"type":"object","properties":{"entityNames":{"type":"array","items":{"type":"string"},"description":"An array of entity names to delete"}},"required":["entityNames"]}`),
		OutputSchema: json.RawMessage(successOut),
		Annotations:  annotations(false, true, true),
	}, deleteEntitiesTool)
	sdk.AddTool(abi.Tool{
		Name:        "delete_observations",
		Title:       "Delete Observations",
		Description: "Delete specific observations from entities in the knowledge graph",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"deletions":{"type":"array","items":{"type":"object","properties":{` +
			`"entityName":{"type":"string","description":"The name of the entity containing the observations"},` +
			`"observations":{"type":"array","items":{"type":"string"},"description":"An array of observations to delete"}},` +
			`"required":["entityName","observations"]}}},"required":["deletions"]}`),
		OutputSchema: json.RawMessage(successOut),
		Annotations:  annotations(false, true, true),
	}, deleteObservationsTool)
	sdk.AddTool(abi.Tool{
		Name:         "delete_relations",
		Title:        "Delete Relations",
		Description:  "Delete multiple relations from the knowledge graph",
		InputSchema:  json.RawMessage(`{"type":"object","properties":{"relations":{"type":"array","items":` + relationIn + `,"description":"An array of relations to delete"}},"required":["relations"]}`),
		OutputSchema: json.RawMessage(successOut),
		Annotations:  annotations(false, true, true),
	}, deleteRelationsTool)
	sdk.AddTool(abi.Tool{
		Name:         "read_graph",
		Title:        "Read Graph",
		Description:  "Read the entire knowledge graph",
		InputSchema:  json.RawMessage(`{"type":"object","properties":{}}`),
		OutputSchema: json.RawMessage(graphOut),
		Annotations:  annotations(true, false, true),
	}, readGraphTool)
	sdk.AddTool(abi.Tool{
		Name:         "search_nodes",
		Title:        "Search Nodes",
		Description:  "Search for nodes in the knowledge graph based on a query",
		InputSchema:  json.RawMessage(`{"type":"object","properties":{"query":{"type":"string","description":"The search query to match against entity names, types, and observation content"}},"required":["query"]}`),
		OutputSchema: json.RawMessage(graphOut),
		Annotations:  annotations(true, false, true),
	}, searchNodesTool)
	sdk.AddTool(abi.Tool{
		Name:         "open_nodes",
		Title:        "Open Nodes",
		Description:  "Open specific nodes in the knowledge graph by their names",
		InputSchema:  json.RawMessage(`{"type":"object","properties":{"names":{"type":"array","items":{"type":"string"},"description":"An array of entity names to retrieve"}},"required":["names"]}`),
		OutputSchema: json.RawMessage(graphOut),
		Annotations:  annotations(true, false, true),
	}, openNodesTool)

	sdk.AddResource(abi.Resource{
		URI:         resourceURI,
		Name:        "knowledge-graph",
		Title:       "Knowledge Graph",
		Description: "The full knowledge graph with all entities and relations",
		MimeType:    "application/json",
	}, readGraphResource)
}

// decode unmarshals a call's arguments (already checked by the host
// against the tool's input schema).
func decode(args json.RawMessage, v any) error {
	if err := json.Unmarshal(args, v); err != nil {
		return sdk.InvalidParams("arguments: %v", err)
	}
	return nil
}

// result is a tool result whose text is JSON.stringify(value, null, 2) of
// the value whose compact JSON is textJSON, with structuredContent
// structured.
func result(textJSON, structured []byte) *abi.CallToolResult {
	return &abi.CallToolResult{
		Content:           []abi.Content{sdk.Text(pretty(textJSON))},
		StructuredContent: json.RawMessage(structured),
	}
}

// success is the result of the delete tools.
func success(message string) *abi.CallToolResult {
	return &abi.CallToolResult{
		Content:           []abi.Content{sdk.Text(message)},
		StructuredContent: json.RawMessage(fmt.Sprintf(`{"success":true,"message":%q}`, message)),
	}
}

// mutate opens the configured store and runs op under its lock; on
// success it tells subscribers of the graph resource that it changed.
func mutate(ctx *sdk.Context, op func(*Graph) error) error {
	s, err := openStore(ctx.Config)
	if err != nil {
		return err
	}
	if err := s.update(op); err != nil {
		return err
	}
	sdk.ResourceUpdated(resourceURI)
	return nil
}

// loadGraph reads the configured store's graph.
func loadGraph(ctx *sdk.Context) (Graph, error) {
	s, err := openStore(ctx.Config)
	if err != nil {
		return Graph{}, err
	}
	return s.load()
}

func createEntitiesTool(ctx *sdk.Context, args json.RawMessage) (*abi.CallToolResult, error) {
	var in struct {
		Entities []Entity `json:"entities"`
	}
	if err := decode(args, &in); err != nil {
		return nil, err
	}
	var added []Entity
	if err := mutate(ctx, func(g *Graph) error { added = createEntities(g, in.Entities); return nil }); err != nil {
		return nil, err
	}
	text := appendEntities(nil, added)
	return result(text, append(append([]byte(`{"entities":`), text...), '}')), nil
}

func createRelationsTool(ctx *sdk.Context, args json.RawMessage) (*abi.CallToolResult, error) {
	var in struct {
		Relations []Relation `json:"relations"`
	}
	if err := decode(args, &in); err != nil {
		return nil, err
	}
	var added []Relation
	if err := mutate(ctx, func(g *Graph) error { added = createRelations(g, in.Relations); return nil }); err != nil {
		return nil, err
	}
	text := appendRelations(nil, added)
	return result(text, append(append([]byte(`{"relations":`), text...), '}')), nil
}

func addObservationsTool(ctx *sdk.Context, args json.RawMessage) (*abi.CallToolResult, error) {
	var in struct {
		Observations []ObservationAddition `json:"observations"`
	}
	if err := decode(args, &in); err != nil {
		return nil, err
	}
	var results []ObservationResult
	err := mutate(ctx, func(g *Graph) error {
		var err error
		results, err = addObservations(g, in.Observations)
		return err
	})
	if err != nil {
		return nil, err
	}
	text := appendResults(nil, results)
	return result(text, append(append([]byte(`{"results":`), text...), '}')), nil
}

func deleteEntitiesTool(ctx *sdk.Context, args json.RawMessage) (*abi.CallToolResult, error) {
	var in struct {
		EntityNames []string `json:"entityNames"`
	}
	if err := decode(args, &in); err != nil {
		return nil, err
	}
	if err := mutate(ctx, func(g *Graph) error { deleteEntities(g, in.EntityNames); return nil }); err != nil {
		return nil, err
	}
	return success("Entities deleted successfully"), nil
}

func deleteObservationsTool(ctx *sdk.Context, args json.RawMessage) (*abi.CallToolResult, error) {
	var in struct {
		Deletions []ObservationDeletion `json:"deletions"`
	}
	if err := decode(args, &in); err != nil {
		return nil, err
	}
	if err := mutate(ctx, func(g *Graph) error { deleteObservations(g, in.Deletions); return nil }); err != nil {
		return nil, err
	}
	return success("Observations deleted successfully"), nil
}

func deleteRelationsTool(ctx *sdk.Context, args json.RawMessage) (*abi.CallToolResult, error) {
	var in struct {
		Relations []Relation `json:"relations"`
	}
	if err := decode(args, &in); err != nil {
		return nil, err
	}
	if err := mutate(ctx, func(g *Graph) error { deleteRelations(g, in.Relations); return nil }); err != nil {
		return nil, err
	}
	return success("Relations deleted successfully"), nil
}

// graphResult is the result of the tools that return a graph.
func graphResult(g Graph) *abi.CallToolResult {
	b := appendGraph(nil, g)
	return result(b, b)
}

func readGraphTool(ctx *sdk.Context, _ json.RawMessage) (*abi.CallToolResult, error) {
	g, err := loadGraph(ctx)
	if err != nil {
		return nil, err
	}
	return graphResult(g), nil
}

func searchNodesTool(ctx *sdk.Context, args json.RawMessage) (*abi.CallToolResult, error) {
	var in struct {
		Query string `json:"query"`
	}
	if err := decode(args, &in); err != nil {
		return nil, err
	}
	g, err := loadGraph(ctx)
	if err != nil {
		return nil, err
	}
	return graphResult(searchNodes(&g, in.Query)), nil
}

func openNodesTool(ctx *sdk.Context, args json.RawMessage) (*abi.CallToolResult, error) {
	var in struct {
		Names []string `json:"names"`
	}
	if err := decode(args, &in); err != nil {
		return nil, err
	}
	g, err := loadGraph(ctx)
	if err != nil {
		return nil, err
	}
	return graphResult(openNodes(&g, in.Names)), nil
}

// readGraphResource serves memory://knowledge-graph: the graph as
// read_graph's text.
func readGraphResource(ctx *sdk.Context, uri string) (*abi.ReadResourceResult, error) {
	g, err := loadGraph(ctx)
	if err != nil {
		return nil, err
	}
	return &abi.ReadResourceResult{Contents: []abi.ResourceContents{
		sdk.TextContents(uri, "application/json", pretty(appendGraph(nil, g))),
	}}, nil
}
