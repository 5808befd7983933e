//go:build !wasip1

package main

// configValue stands in for the plugin's config outside Wasm (native
// tests and vet): there is none.
func configValue(string) (string, bool) { return "", false }
