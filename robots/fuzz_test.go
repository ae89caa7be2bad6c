package robots

import (
	"testing"
)

func fuzzSeeds(f *testing.F) {
	f.Add("User-agent: *\nDisallow: /x\nAllow: /x/y$\n", "/x/y", "BothyBot")
	f.Add("\xEF\xBB\xBFuser-agent: a\rdisallow: /%2f*$\r", "/%2F/z", "a")
	f.Add("User-agent: a\nUser-agent: b\nCrawl-delay: 1.5\nDisallow: /*.gif$\nAllow: /%7E*\n", "/~x.gif", "b")
	f.Add("Sitemap: x\nUser-agent: *\nDisallow: /ツ?q=%24*\n", "https://h/%E3%83%84?q=$x#f", "*")
	f.Add("User-agent: *\nDisallow: /a**b$$\nAllow: $\nDisallow: *\n", "//h", "")
	f.Add(genRobots(7, 2000), "/shop/cart?sort=1", "Googlebot")
	// Other records inside the user-agent list (RFC 9309 §2.2.4).
	f.Add("User-agent: a\nCrawl-delay: 5\nSitemap: /s.xml\nContent-Usage: train-ai=n\nUser-agent: b\nDisallow: /p\n", "/p", "a")
	// "*" and white space; product tokens cut by the §2.2.1 grammar.
	f.Add("User-agent: *\xA0\nDisallow: /x\nUser-agent:\xC2\xA0*\x85all\nDisallow: /y\n", "/y", "anybot")
	f.Add("User-agent: examplebot*\nDisallow: /\nUser-agent: AB42bot/1.0\nAllow: /\n", "/x", "ExampleBot (+https://e)")
	// Partial byte order marks.
	f.Add("\xEF\xBBUser-agent: a\rDisallow: /x\r", "/x", "a")
	// Targets that start with "//" are paths.
	f.Add("User-agent: *\nDisallow: //\nDisallow: /*admin\n", "//admin/x?q#f", "")
}

// usageSeeds are files with the records Usage reads.
func usageSeeds(f *testing.F) {
	f.Add("User-Agent: *\nAllow: /\nDisallow: /never/\nContent-Usage: train-ai=n\nContent-Usage: /ai-ok/ train-ai=y\n\nUser-Agent: ExampleBot\nAllow: /\nContent-Usage: train-ai=y\n", "/ai-ok/test", "ExampleBot")
	f.Add("Content-Signal: search=yes\nUser-agent: a\nContent-Signals: ai-train=no, ai-input=yes\nContent-Usage: /*.pdf$\tsearch=n\nContent-Usage: /a*c search=y\nContent-Usage: /ab* search=n\n", "/abc.pdf", "a")
	f.Add("User-agent: a\nContent-Usage: /%7e%2f\xe3 train-ai=n;x, ai-use=?1\nUser-agent: a-Extended\nDisallow: /\nContent-Usage: /p\nContent-Usage: / search=\"y\"\n", "/~%2F%E3", "a")
}

// FuzzUsage checks Usage against a brute-force reading of the same rules:
// every Content-Usage rule of the chosen groups matched by a recursive glob,
// the longest ones combined.
func FuzzUsage(f *testing.F) {
	fuzzSeeds(f)
	usageSeeds(f)
	f.Fuzz(func(t *testing.T, body, target, agent string) {
		r := Parse([]byte(body))
		a := Agent{Token: agent, Former: []string{"CleatBot"}, PurposeTokens: []PurposeToken{{TrainAI, agent + "-Extended"}}}
		got := r.Usage(a, target)
		if want := slowUsage(r, a, target, true); got != want {
			t.Fatalf("Usage = %v, brute force says %v", got, want)
		}
		if got, want := r.Statement(a, target), slowUsage(r, a, target, false); got != want {
			t.Fatalf("Statement = %v, brute force says %v", got, want)
		}
		if r.Allowed(a, target) != (got.Get(Search) != NotApplicable) {
			t.Fatalf("Usage %v disagrees with Allowed", got)
		}
	})
}

// slowUsage is Usage (crawl) or Statement by brute force.
func slowUsage(r *Robots, a Agent, target string, crawl bool) Usage {
	if crawl && !slowAllowed(r, a, target) {
		return notApplicable()
	}
	p := string(normalizeTarget(nil, target))
	of := func(gs []int32) Usage {
		var u, sig Usage
		best := int32(-1)
		for _, gi := range gs {
			g := &r.groups[gi]
			sig = sig.Combine(g.signal)
			for i := g.ur0; i < g.ur1; i++ {
				ru := &r.um.rules[i]
				switch {
				case !globMatch(r.um.pattern(ru), p) || ru.n < best:
				case ru.n > best:
					best, u = ru.n, r.uses[i]
				default:
					u = u.Combine(r.uses[i])
				}
			}
		}
		return u.Combine(sig)
	}
	var u Usage
	if r != nil {
		u = r.signal
	}
	named := false
	for _, n := range append([]string{a.Token}, a.Former...) {
		if gs := r.lookup(n); gs != nil {
			named = true
			u = u.Combine(of(gs))
		}
	}
	if !named && r != nil {
		u = u.Combine(of(r.star))
	}
	for _, pt := range a.PurposeTokens {
		if gs := r.lookup(pt.Token); gs != nil {
			v := Allowed
			if !slowAllowed(r, Agent{Token: pt.Token}, target) {
				v = Disallowed
			}
			u = u.Combine(Usage{}.With(pt.Purpose, v))
		}
	}
	return u
}

// FuzzParse: no panic, and the invariants every file keeps.
func FuzzParse(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, body, target, agent string) {
		r := Parse([]byte(body))
		a := Agent{Token: agent, Former: []string{"CleatBot"}}
		if !r.Allowed(a, "/robots.txt") {
			t.Fatal("/robots.txt disallowed")
		}
		r.CrawlDelay(a)
		r.Sitemaps()
		_ = r.Truncated()
	})
}

// FuzzAllowed checks the compiled matcher against a plain linear scan of the
// same rules.
func FuzzAllowed(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, body, target, agent string) {
		r := Parse([]byte(body))
		a := Agent{Token: agent}
		got, rule := r.Decide(a, target)
		if want := slowAllowed(r, a, target); got != want {
			t.Fatalf("Allowed = %v (%q), linear scan says %v", got, rule, want)
		}
		if got != r.Allowed(a, target) {
			t.Fatal("Allowed and Decide disagree")
		}
	})
}

// slowAllowed is Allowed by brute force: every rule of the chosen groups,
// matched by a recursive glob.
func slowAllowed(r *Robots, a Agent, target string) bool {
	p := string(normalizeTarget(nil, target))
	if isRobotsTxt(p) {
		return true
	}
	decide := func(gs []int32) (matched, allow bool) {
		best := int32(-1)
		for _, gi := range gs {
			g := &r.groups[gi]
			for i := g.r0; i < g.r1; i++ {
				ru := &r.m.rules[i]
				if !globMatch(r.m.pattern(ru), p) {
					continue
				}
				if ru.n > best || (ru.n == best && ru.allow) {
					best, allow = ru.n, ru.allow || (ru.n == best && allow)
				}
			}
		}
		return best >= 0, allow
	}
	named := false
	for _, n := range append([]string{a.Token}, a.Former...) {
		if gs := r.lookup(n); gs != nil {
			named = true
			if m, allow := decide(gs); m && !allow {
				return false
			}
		}
	}
	if named {
		return true
	}
	if m, allow := decide(r.star); m {
		return allow
	}
	return true
}

// globMatch matches a normalised pattern ('*' any run, final '$' anchor)
// against a prefix of s, by dynamic programming over (pattern, text) positions.
func globMatch(pat, s string) bool {
	anchored := len(pat) > 0 && pat[len(pat)-1] == '$'
	if anchored {
		pat = pat[:len(pat)-1]
	}
	// cur[j]: pat[:i] matches s[:j].
	cur := make([]bool, len(s)+1)
	cur[0] = true
	for i := 0; i < len(pat); i++ {
		next := make([]bool, len(s)+1)
		for j := 0; j <= len(s); j++ {
			if pat[i] == '*' {
				next[j] = cur[j] || (j > 0 && next[j-1])
			} else {
				next[j] = j > 0 && cur[j-1] && s[j-1] == pat[i]
			}
		}
		cur = next
	}
	if anchored {
		return cur[len(s)]
	}
	for _, ok := range cur {
		if ok {
			return true
		}
	}
	return false
}

// otherRecords are lines of the kinds RFC 9309 §2.2.4 says must not
// interfere with user-agent, allow and disallow lines. Content-Usage is not
// one: draft-ietf-aipref-attach §3 makes it a rule, which closes the list of
// user-agents.
var fuzzOtherRecords = []string{
	"Crawl-delay: 5", "Sitemap: https://example.com/s.xml", "Host: example.com",
	"Content-Signal: search=yes", "Noindex: /", "X-Unknown: 1", "<br />", "# comment", "",
}

// FuzzOtherRecords: adding a line of another record kind at any line
// boundary changes no answer (RFC 9309 §2.2.4).
func FuzzOtherRecords(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, body, target, agent string) {
		if len(body) > 64<<10 {
			return
		}
		a := Agent{Token: agent}
		want := Parse([]byte(body)).Allowed(a, target)
		for i := 0; i < len(body); i++ {
			if body[i] != '\n' {
				continue
			}
			rec := fuzzOtherRecords[i%len(fuzzOtherRecords)]
			b := body[:i+1] + rec + "\n" + body[i+1:]
			if got := Parse([]byte(b)).Allowed(a, target); got != want {
				t.Fatalf("inserting %q after byte %d: Allowed = %v, was %v\n%q", rec, i, got, want, b)
			}
		}
	})
}
