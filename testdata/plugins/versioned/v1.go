//go:build !v2

package main

const version = "v1"
