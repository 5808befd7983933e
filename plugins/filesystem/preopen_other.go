//go:build !wasip1

package main

import "time"

// preopens is empty outside WASI: the plugin is only built for wasip1, and
// this lets its package build (go vet, go test of the pure helpers) natively.
func preopens() []string { return nil }

// statTimes is unknown outside WASI.
func statTimes(any) (atime, ctime time.Time) { return time.Time{}, time.Time{} }
