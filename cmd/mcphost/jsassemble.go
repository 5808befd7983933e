package main

import (
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/internal/jsbundle"
)

// assembleJSPlugin puts a bundle, with the positions of its sources for
// stack traces, into the JavaScript engine's module.
func assembleJSPlugin(res *jsbundle.Result) ([]byte, error) {
	js, err := res.WithPositions()
	if err != nil {
		return nil, err
	}
	return host.BuildJSPlugin(js)
}
