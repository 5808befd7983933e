//go:build goexperiment.jsonv2

package sdk

// fastArgs: see args_jsonv1.go.
const fastArgs = false
