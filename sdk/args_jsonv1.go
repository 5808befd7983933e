//go:build !goexperiment.jsonv2

package sdk

// fastArgs says whether decodeArgs decodes what it can itself. It matches
// encoding/json as Go builds it by default; under GOEXPERIMENT=jsonv2,
// where encoding/json is another implementation, json.Unmarshal does all.
const fastArgs = true
