// Package coldcache disturbs the CPU's caches, for the module's benchmarks
// of work that a crawl of thousands of hosts does on cold caches: between
// two requests to one host, a crawler serves thousands of others, so the
// host's state has left the caches (and its page the TLB) by its next turn.
package coldcache

import (
	"testing"
	"time"
)

// Size is how much memory a Disturber walks: more than the caches of the
// machines the benchmarks run on.
const Size = 32 << 20

// Disturber walks a buffer of Size bytes. The zero value is ready to use;
// it is not safe for concurrent use.
type Disturber struct {
	buf []byte
	off int
}

// Touch writes 512 bytes of the buffer, each on a page of its own, 4 KiB
// plus 64 bytes apart: enough to push the last request's lines out of the
// caches and its pages out of the TLB.
func (d *Disturber) Touch() {
	if d.buf == nil {
		d.buf = make([]byte, Size)
	}
	for range 512 {
		d.off = (d.off + 97*4096 + 64) % len(d.buf)
		d.buf[d.off]++
	}
}

// EachHost runs b's loop over hosts hosts, each in turn but not in memory
// order (a step coprime with hosts), with the caches disturbed before each
// call of do, and returns the time spent in do alone.
func EachHost(b *testing.B, hosts int, do func(host int)) time.Duration {
	var d Disturber
	var spent time.Duration
	step := 7
	for gcd(step, hosts) != 1 {
		step++
	}
	i := 0
	for b.Loop() {
		d.Touch()
		h := i % hosts
		i += step
		t0 := time.Now()
		do(h)
		spent += time.Since(t0)
	}
	return spent
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}
