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
