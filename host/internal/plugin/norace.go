//go:build !race

package plugin

// compileTimeoutScale multiplies DefaultCompileTimeout; see race.go.
const compileTimeoutScale = 1
