package plugin

// InterruptCheck is interruptCheck, for the benchmarks (package plugin_test)
// that build Extism instances the way Load does.
var InterruptCheck = interruptCheck
