// Package cputime reads the CPU time this process has used, for the
// module's benchmarks: CPU time per operation is what other processes on a
// shared machine disturb least, and what a user pays for.
package cputime

import (
	"syscall"
	"time"
)

// Self returns the CPU time (user and system) this process has used so
// far, or 0 where the system cannot tell.
func Self() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
