package testutil

import (
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
)

// RSS returns the process's resident set size in bytes, from
// /proc/self/statm; it skips the benchmark or test where that is missing.
func RSS(tb testing.TB) int64 {
	tb.Helper()
	data, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		tb.Skip("no /proc/self/statm:", err)
	}
	fields := strings.Fields(string(data))
	if len(fields) < 2 {
		tb.Fatalf("/proc/self/statm: unexpected %q", data)
	}
	pages, err := strconv.ParseInt(fields[1], 10, 64)
	if err != nil {
		tb.Fatal(err)
	}
	return pages * int64(os.Getpagesize())
}

// SettledMemStats collects garbage and returns freed memory to the OS
// first, so that RSS and heap figures count live memory only.
func SettledMemStats() runtime.MemStats {
	runtime.GC()
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms
}

// MemoryMappings returns the number of the process's memory mappings (lines
// of /proc/self/maps), or -1 where that file is missing. Mapped memory a
// closed Wasm module or instance forgot to unmap shows here, not on the Go
// heap.
func MemoryMappings() int {
	data, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return -1
	}
	return strings.Count(string(data), "\n")
}
