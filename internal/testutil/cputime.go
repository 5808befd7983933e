//go:build unix

package testutil

import (
	"syscall"
	"time"
)

// CPUTime returns the CPU time (user + system) this process has used so
// far, or 0 where the system cannot say. Benchmarks report it beside wall
// time because it is less disturbed by other work on a shared machine.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
