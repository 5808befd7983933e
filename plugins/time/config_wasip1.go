//go:build wasip1

package main

import "github.com/extism/go-pdk"

// configValue reads a key of the plugin's config. It is called from init,
// before any export, so it reads Extism's config directly rather than
// through a handler's sdk.Context.
func configValue(key string) (string, bool) { return pdk.GetConfig(key) }
