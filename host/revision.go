package host

import (
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// revisionCacheable is the protocol revision that added the cache-control
// fields ttlMs and cacheScope (SEP-2549) to resources/read, the four list
// methods and server/discover; the schemas of 2025-11-25 and before have
// no such fields.
const revisionCacheable = "2026-07-28"

// cacheableMethods are the methods whose results go-sdk gives ttlMs and
// cacheScope, whatever the revision.
var cacheableMethods = map[string]bool{
	"resources/read": true, "tools/list": true, "prompts/list": true,
	"resources/list": true, "resources/templates/list": true,
	methodSkillsList: true, methodSkillsGet: true,
}

// oldListTools is a tools/list result as the revisions before 2026-07-28
// have it: ListToolsResult's fields in its order, less ttlMs and
// cacheScope. It is encoded in one pass where withoutCacheFields takes
// four (encode, decode, encode, and encoding/json's compaction of what a
// MarshalJSON returns): over half the server's work for a list of 30
// tools (BENCHMARKS.md, "Profiles and tool search"). The embedded Result
// (the original) gives it the methods of a result, and is not encoded.
type oldListTools struct {
	mcp.Result `json:"-"`
	ResultType string      `json:"resultType,omitempty"`
	Meta       mcp.Meta    `json:"_meta,omitempty"`
	NextCursor string      `json:"nextCursor,omitempty"`
	Tools      []*mcp.Tool `json:"tools"`
}

// withoutCache returns res, a result of a method in cacheableMethods, as
// a session before 2026-07-28 gets it: without ttlMs and cacheScope.
func withoutCache(res mcp.Result) mcp.Result {
	if r, ok := res.(*mcp.ListToolsResult); ok {
		return &oldListTools{Result: r, ResultType: string(r.ResultType), Meta: r.Meta, NextCursor: r.NextCursor, Tools: r.Tools}
	}
	return withoutCacheFields{res}
}

// withoutCacheFields is a result marshalled without ttlMs and cacheScope.
type withoutCacheFields struct{ mcp.Result }

// MarshalJSON implements json.Marshaler.
func (r withoutCacheFields) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(r.Result)
	if err != nil {
		return nil, err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b, &fields); err != nil {
		return nil, fmt.Errorf("result of %T is not a JSON object: %w", r.Result, err)
	}
	delete(fields, "ttlMs")
	delete(fields, "cacheScope")
	return json.Marshal(fields)
}
