package robots

import (
	"net/url"
	"strings"
	"testing"

	"github.com/jimsmart/grobotstxt"
)

// TestDifferential compares Allowed with grobotstxt.AgentAllowed over a
// generated corpus of realistic files and URLs, one agent at a time (C1).
//
// On the plain corpus (no escapes, no UTF-8, no literal '$' or '*' in URLs)
// the two must agree on every pair. On the tricky corpus they may disagree
// only where percent-encoding normalisation explains it (see
// departureApplies and TestDeparture).
func TestDifferential(t *testing.T) {
	files, targets := 40, 70
	if testing.Short() {
		files = 15
	}
	for _, tricky := range []bool{false, true} {
		pairs, disagree, explained := 0, 0, 0
		for seed := uint64(1); seed <= uint64(files); seed++ {
			g := newGen(seed, tricky)
			body := g.robots(300 + int(seed%5)*600)
			r := Parse([]byte(body))
			agents := []string{"*none*", g.pick(genAgents), g.pick(genAgents), "BothyBot"}
			for range targets {
				target := g.target()
				for _, ag := range agents {
					pairs++
					ours := r.Allowed(Agent{Token: ag}, target)
					theirs := grobotstxt.AgentAllowed(body, ag, "https://example.com"+target)
					if ours == theirs {
						continue
					}
					disagree++
					if tricky && departureApplies(body, ag, target, ours) {
						explained++
						continue
					}
					t.Errorf("tricky=%v seed=%d agent=%s target=%q: ours=%v grobotstxt=%v", tricky, seed, ag, target, ours, theirs)
					if disagree > 10 {
						t.Fatalf("too many disagreements; first file:\n%s", body)
					}
				}
			}
		}
		t.Logf("tricky=%v: %d pairs, %d disagreements, %d explained by documented departures", tricky, pairs, disagree, explained)
		if pairs < 10000 && !testing.Short() {
			t.Errorf("only %d pairs", pairs)
		}
	}
}

// departureApplies reports whether a disagreement is one of the documented
// percent-encoding departures: once rules and target are both put in the
// normal form RFC 9309 asks for (escapes of unreserved characters decoded,
// hex upper-cased, UTF-8 and literal '*'/'$' escaped), grobotstxt must give
// our answer. A target net/url cannot parse is another departure.
func departureApplies(body, agent, target string, ours bool) bool {
	if _, err := url.Parse("https://example.com" + target); err != nil {
		return true // grobotstxt disallows what net/url cannot parse
	}
	var b strings.Builder
	for _, line := range strings.Split(body, "\n") {
		key, value, ok := strings.Cut(line, ":")
		k := strings.ToLower(key)
		if ok && (k == "allow" || k == "disallow") {
			value, comment, _ := strings.Cut(value, "#")
			value = strings.TrimSpace(value)
			line = key + ": " + string(normalize(nil, value, true))
			if comment != "" {
				line += " #" + comment
			}
		}
		b.WriteString(line)
		b.WriteString("\n")
	}
	nt := string(normalizeTarget(nil, target))
	return grobotstxt.AgentAllowed(b.String(), agent, "https://example.com"+nt) == ours
}
