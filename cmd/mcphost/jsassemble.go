package main

import (
	"errors"

	"github.com/mcphost/mcphost/internal/jsbundle"
)

// assembleJSPlugin puts a bundle into the JavaScript engine's module.
func assembleJSPlugin(res *jsbundle.Result) ([]byte, error) {
	return nil, errors.New("JavaScript plugins: the engine is not part of this build yet")
}
