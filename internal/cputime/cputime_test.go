package cputime

import (
	"runtime"
	"testing"
	"time"
)

// Self grows with the work this process does, and by no more than the
// wall time passed on every CPU. The busy work runs until Self has grown by
// 20 ms, not for a wall-clock span: on a loaded machine (CI's two cores
// beside the other packages' tests) 50 ms of wall time gave this process
// 17 ms of CPU.
func TestSelf_GrowsWithWork(t *testing.T) {
	before := Self()
	if before <= 0 {
		t.Fatalf("Self = %v before any work; want the CPU time of the start", before)
	}
	const work, patience = 20 * time.Millisecond, 30 * time.Second
	start := time.Now()
	got := time.Duration(0)
	for got < work && time.Since(start) < patience {
		for spin := time.Now(); time.Since(spin) < time.Millisecond; {
		}
		got = Self() - before
	}
	wall := time.Since(start)
	if got < work {
		t.Fatalf("%v of busy work took %v of CPU time; want at least %v", wall, got, work)
	}
	if most := wall * time.Duration(runtime.NumCPU()); got > most+10*time.Millisecond {
		t.Errorf("Self grew by %v in %v on %d CPUs; want at most %v", got, wall, runtime.NumCPU(), most)
	}
}
