//go:build unix

package signing

import (
	"crypto/ed25519"
	"testing"
	"time"

	"github.com/goodbot-go/goodbot/internal/cputime"
	"github.com/goodbot-go/goodbot/signing/signingtest"
)

// cpuRatio runs ours and raw alternately in blocks and reports the CPU-time
// ratio ours/raw as "x-raw-cpu". Run it with -cpu 1 so that garbage
// collection of ours' allocations is charged to the same process time.
func cpuRatio(b *testing.B, ours, raw func()) {
	const block = 200
	var o, r time.Duration
	for i := 0; i < b.N; i += block {
		t0 := cputime.Self()
		for range block {
			ours()
		}
		t1 := cputime.Self()
		for range block {
			raw()
		}
		t2 := cputime.Self()
		o += t1 - t0
		r += t2 - t1
	}
	if r > 0 {
		b.ReportMetric(float64(o)/float64(r), "x-raw-cpu")
	}
}

// BenchmarkSignCPURatio: Signer.Sign against ed25519.Sign of the same base,
// in CPU time (goal: at most 1.1).
func BenchmarkSignCPURatio(b *testing.B) {
	s := benchSigner()
	req, base, _ := benchRequest(b, s)
	key := signingtest.BothyKey()
	cpuRatio(b, func() {
		if err := s.Sign(req); err != nil {
			b.Fatal(err)
		}
	}, func() { _ = ed25519.Sign(key, base) })
}

// BenchmarkVerifyCPURatio: Verifier.Verify (directory cached) against
// ed25519.Verify of the same base and signature, in CPU time (goal: at most
// 1.1).
func BenchmarkVerifyCPURatio(b *testing.B) {
	s := benchSigner()
	req, base, sig := benchRequest(b, s)
	pub := s.Key.Public().(ed25519.PublicKey)
	v := cachedVerifier(b, s, req)
	cpuRatio(b, func() {
		if _, err := v.Verify(req); err != nil {
			b.Fatal(err)
		}
	}, func() {
		if !ed25519.Verify(pub, base, sig) {
			b.Fatal("does not verify")
		}
	})
}
