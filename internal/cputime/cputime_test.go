package cputime

import (
	"testing"
	"time"
)

// Self grows with the work this process does, by about the work's length.
func TestSelf_GrowsWithWork(t *testing.T) {
	before := Self()
	if before <= 0 {
		t.Fatalf("Self = %v before any work; want the CPU time of the start", before)
	}
	for start := time.Now(); time.Since(start) < 50*time.Millisecond; {
	}
	if got := Self() - before; got < 20*time.Millisecond {
		t.Errorf("50 ms of busy work took %v of CPU time; want at least 20 ms", got)
	}
}
