package robots

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jimsmart/grobotstxt"

	"github.com/goodbot-go/goodbot/internal/cputime"
)

// Benchmarks come in pairs: ours and the grobotstxt baseline on the same
// inputs, so one run gives a ratio (see BENCHMARKS.md).
//
//	go test -run '^$' -bench . -benchmem ./robots

// measure runs op (given the iteration number) in b.Loop and reports
// allocations and cpu-ns/op.
func measure(b *testing.B, op func(i int)) {
	b.ReportAllocs()
	start, n := cputime.Self(), 0
	for b.Loop() {
		op(n)
		n++
	}
	b.ReportMetric(float64(cputime.Self()-start)/float64(n), "cpu-ns/op")
}

// tenRules is a small, typical file.
const tenRules = `User-agent: *
Disallow: /wp-admin/
Allow: /wp-admin/admin-ajax.php
Disallow: /cart/
Disallow: /checkout/
Disallow: /*?add-to-cart=
Disallow: /search
Disallow: /tmp/
Disallow: /*.pdf$

User-agent: BothyBot
Disallow: /private/
Allow: /private/press/
Crawl-delay: 2
`

var (
	bench30KB  = genRobots(42, 30<<10)
	bench500KB = genRobots(43, 500<<10)
)

// benchTargets is a fixed mix of URLs, as a crawler would ask about them.
func benchTargets() []string {
	g := newGen(99, false)
	ts := make([]string, 64)
	for i := range ts {
		ts[i] = g.target()
	}
	return ts
}

var benchAgent = Agent{Token: "Googlebot"}

func benchAllowed(b *testing.B, body string) {
	r := Parse([]byte(body))
	ts := benchTargets()
	measure(b, func(i int) { r.Allowed(benchAgent, ts[i%len(ts)]) })
}

func benchGrobotstxt(b *testing.B, body string) {
	ts := benchTargets()
	for i := range ts {
		ts[i] = "https://example.com" + ts[i]
	}
	measure(b, func(i int) { grobotstxt.AgentAllowed(body, benchAgent.Token, ts[i%len(ts)]) })
}

func BenchmarkAllowed_30KB(b *testing.B)       { benchAllowed(b, bench30KB) }
func BenchmarkGrobotstxt_30KB(b *testing.B)    { benchGrobotstxt(b, bench30KB) }
func BenchmarkAllowed_10Rules(b *testing.B)    { benchAllowed(b, tenRules) }
func BenchmarkGrobotstxt_10Rules(b *testing.B) { benchGrobotstxt(b, tenRules) }

// BenchmarkAllowed_30KB_FormerNames asks with a token and two former names
// (B3), so up to three sets of groups are consulted.
func BenchmarkAllowed_30KB_FormerNames(b *testing.B) {
	r := Parse([]byte(bench30KB))
	ts := benchTargets()
	a := Agent{Token: "BothyBot", Former: []string{"Bingbot", "GPTBot"}}
	measure(b, func(i int) { r.Allowed(a, ts[i%len(ts)]) })
}

// withUsage adds to every group of body a Content-Usage rule without a
// path, one with a path, and a Content-Signal line: what a file that states
// preferences looks like.
func withUsage(body string) string {
	var b strings.Builder
	i := 0
	for _, l := range strings.SplitAfter(body, "\n") {
		if l == "\n" {
			w := genWords[i%len(genWords)]
			i++
			fmt.Fprintf(&b, "Content-Usage: train-ai=n\nContent-Usage: /%s/ train-ai=y, search=y\nContent-Signal: search=yes, ai-input=yes\n", w)
		}
		b.WriteString(l)
	}
	return b.String()
}

var (
	bench30KBUsage = withUsage(bench30KB)
	tenRulesUsage  = withUsage(tenRules + "\n")
)

// benchUsage measures Usage over the benchmark targets.
func benchUsage(b *testing.B, body string, a Agent) {
	r := Parse([]byte(body))
	ts := benchTargets()
	measure(b, func(i int) { r.Usage(a, ts[i%len(ts)]) })
}

// benchUsageRatio alternates blocks of Usage and Allowed calls on the same
// file and targets and reports the CPU time of each per call and their
// ratio, so that load changes during the run hit both alike.
func benchUsageRatio(b *testing.B, body string) {
	r := Parse([]byte(body))
	ts := benchTargets()
	const block = 1024
	var tu, ta time.Duration
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		start := cputime.Self()
		for i := range block {
			r.Usage(benchAgent, ts[i%len(ts)])
		}
		mid := cputime.Self()
		for i := range block {
			r.Allowed(benchAgent, ts[i%len(ts)])
		}
		tu, ta = tu+mid-start, ta+cputime.Self()-mid
		n += block
	}
	b.ReportMetric(float64(tu)/float64(n), "usage-cpu-ns")
	b.ReportMetric(float64(ta)/float64(n), "allowed-cpu-ns")
	b.ReportMetric(float64(tu)/float64(ta), "usage/allowed")
}

func BenchmarkUsageRatio_30KB(b *testing.B)    { benchUsageRatio(b, bench30KBUsage) }
func BenchmarkUsageRatio_10Rules(b *testing.B) { benchUsageRatio(b, tenRulesUsage) }

var benchPurposeAgent = Agent{Token: "Googlebot", PurposeTokens: []PurposeToken{{TrainAI, "Google-Extended"}}}

func BenchmarkUsage_30KB(b *testing.B)              { benchUsage(b, bench30KBUsage, benchAgent) }
func BenchmarkUsage_10Rules(b *testing.B)           { benchUsage(b, tenRulesUsage, benchAgent) }
func BenchmarkUsage_30KB_PurposeToken(b *testing.B) { benchUsage(b, bench30KBUsage, benchPurposeAgent) }
func BenchmarkUsage_30KB_NoUsageLines(b *testing.B) { benchUsage(b, bench30KB, benchAgent) }

func BenchmarkParse_500KiB(b *testing.B) {
	body := []byte(bench500KB)
	b.SetBytes(int64(len(body)))
	measure(b, func(int) { Parse(body) })
}

// BenchmarkGrobotstxtParse_500KiB is grobotstxt's own parse of the same file
// with a handler that does nothing: the floor under any parse built on it.
func BenchmarkGrobotstxtParse_500KiB(b *testing.B) {
	body := []byte(bench500KB)
	b.SetBytes(int64(len(body)))
	measure(b, func(int) { grobotstxt.Parse(string(body), nopHandler{}) })
}

// BenchmarkGrobotstxtAgentAllowed_500KiB is one grobotstxt question on the
// same file: grobotstxt parses the whole file to answer it.
func BenchmarkGrobotstxtAgentAllowed_500KiB(b *testing.B) {
	body := bench500KB
	b.SetBytes(int64(len(body)))
	measure(b, func(int) { grobotstxt.AgentAllowed(body, benchAgent.Token, "https://example.com/shop/cart?sort=1") })
}

type nopHandler struct{}

func (nopHandler) HandleRobotsStart()                      {}
func (nopHandler) HandleRobotsEnd()                        {}
func (nopHandler) HandleUserAgent(int, string)             {}
func (nopHandler) HandleAllow(int, string)                 {}
func (nopHandler) HandleDisallow(int, string)              {}
func (nopHandler) HandleSitemap(int, string)               {}
func (nopHandler) HandleUnknownAction(int, string, string) {}

// TestBenchInputs keeps the benchmark inputs what BENCHMARKS.md says they are.
func TestBenchInputs(t *testing.T) {
	count := func(body string) (rules, wild, groups int) {
		for _, l := range strings.Split(body, "\n") {
			ll := strings.ToLower(l)
			if strings.HasPrefix(ll, "allow:") || strings.HasPrefix(ll, "disallow:") {
				rules++
				if strings.ContainsAny(l, "*$") {
					wild++
				}
			}
			if strings.HasPrefix(ll, "user-agent:") {
				groups++
			}
		}
		return
	}
	r, w, g := count(bench30KB)
	t.Logf("30KB file: %d bytes, %d rules (%d with * or $), %d user-agent lines", len(bench30KB), r, w, g)
	if len(bench30KB) < 29<<10 || len(bench30KB) > 32<<10 || r < 500 || w < 150 || g < 20 {
		t.Errorf("30KB input drifted")
	}
	if r, _, _ := count(tenRules); r != 10 {
		t.Errorf("tenRules has %d rules", r)
	}
	// The usage benchmarks walk Content-Usage tries for the agent they ask as.
	said := 0
	for _, body := range []string{bench30KBUsage, tenRulesUsage} {
		r := Parse([]byte(body))
		for _, target := range benchTargets() {
			if r.Usage(benchAgent, target).Get(TrainAI) != Unknown {
				said++
			}
		}
	}
	if said < 64 {
		t.Errorf("usage inputs state train-ai for %d of 128 targets", said)
	}
	if len(bench500KB) < 500<<10 || len(bench500KB) > MaxParseBytes {
		t.Errorf("500KiB input is %d bytes", len(bench500KB))
	}
}
