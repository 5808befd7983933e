//go:build race

package plugin

// compileTimeoutScale multiplies DefaultCompileTimeout in a build with the
// race detector (tests): it slows wazero's compiler, which is Go, about
// tenfold, and a Go plugin that compiles in seconds in a release build
// then takes most of a minute on a busy machine.
const compileTimeoutScale = 5
