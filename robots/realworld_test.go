package robots

import (
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/jimsmart/grobotstxt"
)

// realFile is one file of ../shared/robots-realworld, cut as Parse cuts it
// (RFC 9309 §2.5 lets a parser stop after 500 KiB; grobotstxt reads on).
type realFile struct {
	name string
	body string
}

func readRealWorld(t *testing.T) []realFile {
	t.Helper()
	dir := sharedData(t, "robots-realworld")
	names, err := filepath.Glob(filepath.Join(dir, "*.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(names) != 898 {
		t.Fatalf("%s has %d files, its README says 898", dir, len(names))
	}
	files := make([]realFile, 0, len(names))
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		b, _ = cutAtLine(b, MaxParseBytes)
		files = append(files, realFile{name: filepath.Base(n), body: string(b)})
	}
	return files
}

// lineScan calls fn with the key (lower case) and value of every line of
// body as grobotstxt's line parser reads it.
type lineScan struct {
	fn func(key, value string)
}

func (lineScan) HandleRobotsStart()                       {}
func (lineScan) HandleRobotsEnd()                         {}
func (s lineScan) HandleUserAgent(_ int, v string)        { s.fn("user-agent", v) }
func (s lineScan) HandleAllow(_ int, v string)            { s.fn("allow", v) }
func (s lineScan) HandleDisallow(_ int, v string)         { s.fn("disallow", v) }
func (s lineScan) HandleSitemap(_ int, v string)          { s.fn("sitemap", v) }
func (s lineScan) HandleUnknownAction(_ int, k, v string) { s.fn(strings.ToLower(k), v) }

// questions returns the agents and paths to ask about a file: every name
// its user-agent lines give (as a bot would send it) and one it does not
// name; the paths its own rules spell out, with variants on each side of
// each rule, and a few every site has. Past maxAgents names and maxPaths
// rule paths, it takes an even sample.
func questions(body string, maxAgents, maxPaths int) (agents, paths []string) {
	seen := map[string]bool{}
	addPath := func(p string) {
		if p == "" || p[0] != '/' {
			p = "/" + p
		}
		if !seen[p] {
			seen[p] = true
			paths = append(paths, p)
		}
	}
	names := map[string]bool{}
	grobotstxt.Parse(body, lineScan{func(key, v string) {
		switch key {
		case "user-agent":
			v = trimSpace(v)
			if tok := tcharPrefix(v); tok != "" && !isStar(v) {
				names[tok] = true
			}
		case "allow", "disallow":
			v = unmangle(v)
			if v == "" {
				return
			}
			lit := strings.TrimSuffix(v, "$")
			for _, fill := range []string{"", "x/y"} {
				base := strings.ReplaceAll(lit, "*", fill)
				addPath(base)
				addPath(base + "x")
				addPath(base + "/sub.html?q=1")
				if len(base) > 1 {
					addPath(base[:len(base)-1])
				}
			}
		}
	}})
	if len(paths) > maxPaths {
		picked := make([]string, 0, maxPaths)
		for i := range maxPaths {
			picked = append(picked, paths[i*len(paths)/maxPaths])
		}
		paths = picked
	}
	for _, p := range []string{"/", "/index.html", "/robots.txt", "/x"} {
		addPath(p)
	}
	for n := range names {
		agents = append(agents, n)
	}
	sort.Strings(agents)
	if len(agents) > maxAgents {
		picked := make([]string, 0, maxAgents)
		for i := range maxAgents {
			picked = append(picked, agents[i*len(agents)/maxAgents])
		}
		agents = picked
	}
	return append(agents, "Zzqxbot"), paths // Zzqxbot: named nowhere, reads *
}

// tcharPrefix is the name a bot sends: the leading RFC 9110 tchar run
// ("MJ12bot", "Googlebot-Image"), as grobotstxt reads user-agent lines.
func tcharPrefix(s string) string {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return s[:i]
		}
	}
	return s
}

// The reasons goodbot may answer otherwise than grobotstxt, each an RFC 9309
// rule (see the package documentation's list of departures).
const (
	whyRobotsTxt = "§2.2.2 /robots.txt is implicitly allowed"
	whyEncoding  = "§2.2.2 percent-encoding equivalence (both sides normalised)"
	whyToken     = "§2.2.1 product-token = identifier; \"*\" followed by white space"
	whyBoth      = "§2.2.1 token grammar and §2.2.2 percent-encoding together"
	whyURL       = "§2.2.2 the path as written (grobotstxt refuses what net/url cannot parse)"
	whyIndex     = "no RFC rule: grobotstxt's index.html extension (ours more restrictive)"
)

// explain returns the RFC 9309 rule that accounts for goodbot answering ours
// where grobotstxt answers the opposite, or "" if none does: grobotstxt,
// asked again with that rule's difference taken out of the file and the
// target, must give our answer.
func explain(body, agent, path string, ours bool) string {
	if isRobotsTxt(string(normalizeTarget(nil, path))) {
		return whyRobotsTxt
	}
	if _, err := url.Parse("https://example.com" + path); err != nil {
		return whyURL
	}
	g := func(body, agent, path string) bool {
		return grobotstxt.AgentAllowed(body, agent, "https://example.com"+path) == ours
	}
	tokBody, tokAgent := rfcAgents(body), productToken(agent)
	if tokAgent == "" {
		tokAgent = "Zzqxbot"
	}
	encBody, encPath := rfcPatterns(body), string(normalizeTarget(nil, path))
	switch {
	case g(tokBody, tokAgent, path):
		return whyToken
	case g(encBody, agent, encPath):
		return whyEncoding
	case g(rfcPatterns(tokBody), tokAgent, encPath):
		return whyBoth
	case !ours && strings.Contains(body, "index.htm"):
		return whyIndex
	}
	return ""
}

// rfcAgents rewrites every user-agent line to the name this package reads
// in it ("*", the identifier prefix, or nothing), so that grobotstxt groups
// as RFC 9309 §2.2.1 reads the names.
func rfcAgents(body string) string {
	return rewriteLines(body, func(key, value string) (string, bool) {
		if !strings.HasPrefix(key, "user-agent") && !strings.HasPrefix(key, "useragent") && !strings.HasPrefix(key, "user agent") {
			return "", false
		}
		v := trimSpace(value)
		if isStar(v) {
			return "User-agent: *", true
		}
		if tok := productToken(v); tok != "" {
			return "User-agent: " + tok, true
		}
		return "User-agent: -", true // names no bot, still starts a group
	})
}

// rfcPatterns rewrites every Allow and Disallow value to the normal form this
// package compares in (RFC 9309 §2.2.2).
func rfcPatterns(body string) string {
	return rewriteLines(body, func(key, value string) (string, bool) {
		var kind string
		switch {
		case strings.HasPrefix(key, "allow"):
			kind = "Allow"
		case strings.HasPrefix(key, "dis"):
			kind = "Disallow"
		default:
			return "", false
		}
		return kind + ": " + string(normalize(nil, strings.TrimSpace(value), true)), true
	})
}

// rewriteLines replaces the lines for which fn returns true. Lines are split
// on CR, LF and CRLF; the key is lower-cased, the value is cut at '#'.
func rewriteLines(body string, fn func(key, value string) (string, bool)) string {
	var b strings.Builder
	for i := 0; i < len(body); {
		j := strings.IndexAny(body[i:], "\r\n")
		end := len(body)
		if j >= 0 {
			end = i + j
		}
		line := body[i:end]
		content, _, _ := strings.Cut(line, "#")
		if k, v, ok := strings.Cut(content, ":"); ok {
			if repl, ok := fn(strings.ToLower(strings.TrimSpace(k)), v); ok {
				line = repl
			}
		}
		b.WriteString(line)
		b.WriteByte('\n')
		i = end
		if i < len(body) && body[i] == '\r' {
			i++
		}
		if i < len(body) && body[i] == '\n' {
			i++
		}
	}
	return b.String()
}

// TestRealWorld_Differential asks goodbot and grobotstxt the same questions
// about the 898 real files: for every file, every agent it names plus one it
// does not, and the paths its own rules spell out with variants. Every pair
// on which goodbot allows what grobotstxt disallows must be explained by an
// RFC 9309 rule (see explain); disagreements the other way are counted.
func TestRealWorld_Differential(t *testing.T) {
	files := readRealWorld(t)
	step, maxAgents, maxPaths := 1, 4, 24
	if testing.Short() {
		step, maxAgents, maxPaths = 8, 2, 12 // every eighth file, fewer questions
	}
	pairs := 0
	looser := map[string]int{}   // ours allows, grobotstxt disallows, by reason
	stricter := map[string]int{} // ours disallows, grobotstxt allows, by reason
	unexplained := 0
	for i := 0; i < len(files); i += step {
		f := files[i]
		r := Parse([]byte(f.body))
		// grobotstxt parses the whole file for every question: sample.
		agents, paths := questions(f.body, maxAgents, maxPaths)
		for _, ag := range agents {
			for _, p := range paths {
				pairs++
				ours := r.Allowed(Agent{Token: ag}, p)
				theirs := grobotstxt.AgentAllowed(f.body, ag, "https://example.com"+p)
				if ours == theirs {
					continue
				}
				why := explain(f.body, ag, p, ours)
				if ours {
					looser[why]++
				} else {
					stricter[why]++
				}
				if why == "" && ours {
					unexplained++
					if unexplained <= 10 {
						t.Errorf("%s: agent %q path %q: goodbot allows, grobotstxt disallows, no RFC rule explains it", f.name, ag, p)
					}
				}
			}
		}
	}
	if unexplained > 10 {
		t.Errorf("%d unexplained pairs in all", unexplained)
	}
	report := func(name string, m map[string]int) {
		n := 0
		for _, c := range m {
			n += c
		}
		t.Logf("%s: %d pairs", name, n)
		for _, why := range slices.Sorted(func(yield func(string) bool) {
			for k := range m {
				if !yield(k) {
					return
				}
			}
		}) {
			label := why
			if label == "" {
				label = "(no rule found)"
			}
			t.Logf("  %6d  %s", m[why], label)
		}
	}
	t.Logf("%d files, %d (agent, path) pairs compared", (len(files)+step-1)/step, pairs)
	report("goodbot allows, grobotstxt disallows", looser)
	report("goodbot disallows, grobotstxt allows", stricter)
	if pairs < 50_000 && !testing.Short() {
		t.Errorf("only %d pairs compared", pairs)
	}
}

// oldGrouping parses as the package did before it followed RFC 9309 §2.2.4:
// a Crawl-delay line after user-agent lines ended the list of user-agents.
// It counts the lines that did so while another user-agent line followed.
type oldGrouping struct {
	*parser
	cut     bool // the last record was a Crawl-delay that ended the user-agent list
	pattern int  // user-agent lines that started a new group because of one
	starCut bool // one of the groups so cut off names *
}

func (o *oldGrouping) HandleUserAgent(n int, v string) {
	if o.cut {
		o.pattern++
		o.cut = false
		if len(o.star) > 0 && o.star[len(o.star)-1] == int32(o.cur) {
			o.starCut = true
		}
	}
	o.parser.HandleUserAgent(n, v)
}

func (o *oldGrouping) HandleAllow(n int, v string)    { o.cut = false; o.parser.HandleAllow(n, v) }
func (o *oldGrouping) HandleDisallow(n int, v string) { o.cut = false; o.parser.HandleDisallow(n, v) }

func (o *oldGrouping) HandleUnknownAction(n int, k, v string) {
	if strings.EqualFold(k, "crawl-delay") && o.cur >= 0 && !o.inRules {
		o.inRules, o.cut = true, true
	}
	o.parser.HandleUnknownAction(n, k, v)
}

// TestRealWorld_OtherRecordsInAgentList counts, over the 898 real files, the
// files where a Crawl-delay between user-agent lines used to end the list of
// user-agents (RFC 9309 §2.2.4 says it must not), and in how many of them
// that changed what the matcher allows. Every changed answer must now be
// grobotstxt's, which groups as the RFC says.
func TestRealWorld_OtherRecordsInAgentList(t *testing.T) {
	files := readRealWorld(t)
	withPattern, changed, opened, starCut, starGroups, checked := 0, 0, 0, 0, 0, 0
	for _, f := range files {
		old := &oldGrouping{parser: &parser{r: &Robots{}, cur: -1}}
		grobotstxt.Parse(f.body, old)
		old.finish()
		if old.pattern == 0 {
			continue
		}
		withPattern++
		if old.starCut {
			starGroups++
		}
		r := Parse([]byte(f.body))
		agents, paths := questions(f.body, 1<<20, 1<<20) // every name, every rule
		fileChanged, fileOpened, fileStar, fileChecked := false, false, false, 0
		for _, ag := range agents {
			for _, p := range paths {
				now, before := r.Allowed(Agent{Token: ag}, p), old.r.Allowed(Agent{Token: ag}, p)
				if now == before {
					continue
				}
				fileChanged = true
				if before {
					fileOpened = true // the old grouping allowed what the file disallows
					if ag == "Zzqxbot" {
						fileStar = true
					}
				}
				if fileChecked++; fileChecked > 20 {
					continue // grobotstxt re-parses the file per question
				}
				checked++
				if g := grobotstxt.AgentAllowed(f.body, ag, "https://example.com"+p); g != now && explain(f.body, ag, p, now) == "" {
					t.Errorf("%s: agent %q path %q: now %v, grobotstxt %v", f.name, ag, p, now, g)
				}
			}
		}
		if fileChanged {
			changed++
		}
		if fileOpened {
			opened++
		}
		if fileStar {
			starCut++
		}
	}
	t.Logf("%d of %d files have a Crawl-delay between user-agent lines (in %d the group cut off names *); "+
		"it changes answers in %d, the old grouping allowed pages the file disallows in %d "+
		"(for a bot reading the * group in %d); %d changed answers checked against grobotstxt",
		withPattern, len(files), starGroups, changed, opened, starCut, checked)
	if withPattern == 0 || opened == 0 {
		t.Errorf("pattern in %d files, opened %d: the count found nothing", withPattern, opened)
	}
}
