//go:build !unix

package testutil

import "time"

// CPUTime returns 0: this system's CPU time is not read here.
func CPUTime() time.Duration { return 0 }
