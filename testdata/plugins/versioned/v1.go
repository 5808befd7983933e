//go:build !v2

package main

const (
	version            = "v1"
	versionDescription = "Says which build of the plugin is running."
)
