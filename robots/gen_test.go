package robots

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// A grammar of realistic robots.txt files and URLs, for the differential
// test and the benchmarks. Everything is generated from a seed, so runs are
// repeatable.

var (
	genWords = []string{"shop", "cart", "checkout", "account", "search", "tag", "category", "page",
		"blog", "news", "images", "img", "static", "api", "v1", "v2", "admin", "login", "user",
		"profile", "wp-admin", "wp-content", "cgi-bin", "tmp", "private", "print", "feed",
		"comments", "archive", "2023", "2024", "en", "de", "products", "item", "media", "docs"}
	genExts   = []string{".php", ".pdf", ".gif", ".jpg", ".html", ".json", ".xml", ".js"}
	genParams = []string{"sort", "filter", "page", "q", "sessionid", "ref", "utm_source", "replytocom", "id", "lang"}
	genAgents = []string{"Googlebot", "Bingbot", "Slurp", "DuckDuckBot", "Baiduspider", "YandexBot",
		"AhrefsBot", "SemrushBot", "MJ12bot", "GPTBot", "CCBot", "BothyBot", "facebookexternalhit",
		"Applebot", "PetalBot", "DotBot", "Bytespider", "ClaudeBot", "Amazonbot", "SofyaBot"}
	// Extras that exercise RFC 9309 normalisation where grobotstxt departs.
	genTricky = []string{"%7E", "%7e", "%2F", "%2f", "%41", "%2A", "%24", "ツ", "é", "$", "*", "%3A", "%zz"}
)

type gen struct {
	r      *rand.Rand
	tricky bool // use escapes, UTF-8 and literal '$'/'*' (known departures)
}

func newGen(seed uint64, tricky bool) *gen {
	return &gen{r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), tricky: tricky}
}

func (g *gen) pick(xs []string) string { return xs[g.r.IntN(len(xs))] }

func (g *gen) word() string {
	if g.tricky && g.r.IntN(12) == 0 {
		return g.pick(genWords)[:2] + g.pick(genTricky)
	}
	return g.pick(genWords)
}

// pattern returns one Allow/Disallow value.
func (g *gen) pattern() string {
	w1, w2 := g.word(), g.word()
	switch g.r.IntN(14) {
	case 0:
		return "/" + w1 + "/"
	case 1:
		return "/" + w1 + "/" + w2
	case 2:
		return "/*?" + g.pick(genParams) + "="
	case 3:
		return "/*" + g.pick(genExts) + "$"
	case 4:
		return "/" + w1 + "/*/" + w2
	case 5:
		return "/" + w1 + "*"
	case 6:
		return "/*/" + w1 + "/"
	case 7:
		return "/" + w1 + "/*" + g.pick(genExts) + "$"
	case 8:
		return "*?" + g.pick(genParams) + "="
	case 9:
		return "/" + w1 + "?" + g.pick(genParams) + "=*&"
	case 10:
		return "/" + w1 + "/" + w2 + "/" + g.word() + g.pick(genExts)
	case 11:
		return "/" + w1 + "$"
	case 12:
		return "/*" + w1 + "*" + w2
	default:
		return "/" + w1
	}
}

// robots returns a file of about size bytes with groups for * and some
// named agents.
func (g *gen) robots(size int) string {
	var b strings.Builder
	b.WriteString("# robots.txt generated for tests\n")
	agents := append([]string(nil), genAgents...)
	g.r.Shuffle(len(agents), func(i, j int) { agents[i], agents[j] = agents[j], agents[i] })
	first := true
	for b.Len() < size || first {
		if first {
			b.WriteString("User-agent: *\n")
		} else {
			for n := 1 + g.r.IntN(3); n > 0; n-- {
				fmt.Fprintf(&b, "User-agent: %s\n", agents[g.r.IntN(len(agents))])
			}
		}
		n := 2 + g.r.IntN(12)
		if first {
			n = 20 + size/120
		}
		if !first && g.r.IntN(5) == 0 {
			b.WriteString("Disallow: /\n")
			n = g.r.IntN(3)
		}
		for ; n > 0; n-- {
			switch g.r.IntN(10) {
			case 0, 1, 2:
				fmt.Fprintf(&b, "Allow: %s\n", g.pattern())
			case 3:
				fmt.Fprintf(&b, "Disallow: %s # %s\n", g.pattern(), g.pick(genWords))
			default:
				fmt.Fprintf(&b, "Disallow: %s\n", g.pattern())
			}
		}
		if g.r.IntN(4) == 0 {
			fmt.Fprintf(&b, "Crawl-delay: %d\n", 1+g.r.IntN(20))
		}
		if g.r.IntN(6) == 0 {
			b.WriteString("Disallow:\n")
		}
		b.WriteString("\n")
		first = false
	}
	fmt.Fprintf(&b, "Sitemap: https://example.com/sitemap-%d.xml\n", g.r.IntN(10))
	return b.String()
}

// target returns a path with an optional query.
func (g *gen) target() string {
	var b strings.Builder
	for n := 1 + g.r.IntN(4); n > 0; n-- {
		b.WriteString("/")
		b.WriteString(g.word())
	}
	switch g.r.IntN(4) {
	case 0:
		b.WriteString(g.pick(genExts))
	case 1:
		b.WriteString("/")
	}
	if g.r.IntN(3) == 0 {
		fmt.Fprintf(&b, "?%s=%s", g.pick(genParams), g.word())
		if g.r.IntN(2) == 0 {
			fmt.Fprintf(&b, "&%s=%d", g.pick(genParams), g.r.IntN(100))
		}
	}
	return b.String()
}

// genRobots is a realistic file of about size bytes.
func genRobots(seed uint64, size int) string { return newGen(seed, false).robots(size) }
