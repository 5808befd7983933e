// Command hopfloor is a benchmark fixture that decomposes the cost of one
// call into a Go plugin (host/internal/plugin, BenchmarkHopFloor): each
// export does one more step of what call_tool does in the Go SDK, written
// directly against Extism's Go PDK.
//
//	nothing        returns at once (entering the Go guest, Extism's fixed cost)
//	input_only     reads the input (8 bytes per host call)
//	raw            reads the input and writes it back as output
//	decode         reads and decodes the ABI envelope, the params and the arguments
//	decode_encode  decode, then marshals a text result and outputs it (= echo)
//
// The exports are in exports_wasip1.go, so that the package (an empty
// command elsewhere) does not break go vet ./... on the host.
//
// Build: GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o hopfloor.wasm ./bench/plugins/hopfloor
package main

func main() {} // never called: a reactor runs only init and its exports
