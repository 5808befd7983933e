module github.com/mcphost/mcphost/bench/plugins/gojajs

go 1.25.0

require (
	github.com/dop251/goja v0.0.0-20260917113740-793a2a65c13b
	github.com/mcphost/mcphost/abi v0.0.0
	github.com/mcphost/mcphost/sdk v0.0.0
)

require (
	github.com/dlclark/regexp2/v2 v2.5.2 // indirect
	github.com/extism/go-pdk v1.1.3 // indirect
	github.com/go-sourcemap/sourcemap v2.1.3+incompatible // indirect
	github.com/google/pprof v0.0.0-20230207041349-798e818bf904 // indirect
	golang.org/x/text v0.3.8 // indirect
)

replace (
	github.com/mcphost/mcphost/abi => ../../../abi
	github.com/mcphost/mcphost/sdk => ../../../sdk
)
