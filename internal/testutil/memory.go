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
//
// Under -race it leaves out anonymous read-write mappings of exactly 1 MiB:
// the race runtime maps those for its own goroutine and synchronisation
// metadata and never unmaps them (a program that starts 20,000 goroutines
// with a mutex each gains about 6 a round under -race, none without), so
// they grow with the work a test does, not with what it leaks.
func MemoryMappings() int {
	data, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return -1
	}
	n := 0
	for line := range strings.Lines(string(data)) {
		if RaceEnabled && isRaceRuntimeMapping(line) {
			continue
		}
		n++
	}
	return n
}

// isRaceRuntimeMapping reports whether a line of /proc/self/maps is an
// anonymous read-write mapping of exactly 1 MiB.
func isRaceRuntimeMapping(line string) bool {
	fields := strings.Fields(line)
	if len(fields) != 5 || fields[1] != "rw-p" {
		return false
	}
	start, end, ok := strings.Cut(fields[0], "-")
	if !ok {
		return false
	}
	lo, err1 := strconv.ParseUint(start, 16, 64)
	hi, err2 := strconv.ParseUint(end, 16, 64)
	return err1 == nil && err2 == nil && hi-lo == 1<<20
}
