package robots_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/goodbot-go/goodbot/robots"
)

func usage(pairs ...any) robots.Usage {
	var u robots.Usage
	for i := 0; i < len(pairs); i += 2 {
		u = u.With(pairs[i].(robots.Purpose), pairs[i+1].(robots.Verdict))
	}
	return u
}

func TestParseUsage(t *testing.T) {
	tests := []struct {
		in   string
		want robots.Usage
	}{
		// draft-ietf-aipref-vocab §6: allow training, disallow search.
		{"train-ai=y, search=n", usage(robots.TrainAI, robots.Allowed, robots.Search, robots.Disallowed)},
		{"ai-use=n", usage(robots.AIInput, robots.Disallowed)},
		// §6.5.1: the last value of a key applies; a Boolean or a String is not a Token.
		{`train-ai=y, train-ai, search=n, search="n"`, robots.Usage{}},
		{`search="y", train-ai=?1`, robots.Usage{}},
		// §6.5.2: only the selected value's parameters count, and they are ignored.
		{"train-ai;allow=n, train-ai=y", usage(robots.TrainAI, robots.Allowed)},
		{`train-ai;has;parameters="?";`, robots.Usage{}},
		// Keys are case-sensitive; an upper-case key fails the parse: all unknown.
		{"Train-AI=n, search=n", robots.Usage{}},
		{"train-ai=maybe", robots.Usage{}},
		{"train-ai=n, future-use=n", usage(robots.TrainAI, robots.Disallowed)},
		{"", robots.Usage{}},
		{"train-ai=n,,", robots.Usage{}},
	}
	for _, tc := range tests {
		if got := robots.ParseUsage(tc.in); got != tc.want {
			t.Errorf("ParseUsage(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

// ParsePurpose reads exactly what String writes: the names are
// case-sensitive, as the AIPREF labels are.
func TestParsePurpose(t *testing.T) {
	for _, p := range robots.Purposes() {
		if got, ok := robots.ParsePurpose(p.String()); !ok || got != p {
			t.Errorf("ParsePurpose(%q) = %v, %v", p.String(), got, ok)
		}
	}
	for _, s := range []string{"Search", "TRAIN-AI", "ai-train", "train_ai", "", "purpose(3)"} {
		if got, ok := robots.ParsePurpose(s); ok {
			t.Errorf("ParsePurpose(%q) = %v, want false", s, got)
		}
	}
}

func TestParseContentSignal(t *testing.T) {
	tests := []struct {
		in   string
		want robots.Usage
	}{
		{"search=yes, ai-input=yes, ai-train=no",
			usage(robots.Search, robots.Allowed, robots.AIInput, robots.Allowed, robots.TrainAI, robots.Disallowed)},
		{"ai-train=no", usage(robots.TrainAI, robots.Disallowed)}, // absent keys neither grant nor restrict
		{"Search=YES", usage(robots.Search, robots.Allowed)},
		{"search=perhaps, ai-input", robots.Usage{}},
		{"ai-input, ai-train=no", usage(robots.TrainAI, robots.Disallowed)}, // a pair without "=" is skipped, not the end
		{"train-ai=no", robots.Usage{}},                                     // the AIPREF label is not a Content Signals key
	}
	for _, tc := range tests {
		if got := robots.ParseContentSignal(tc.in); got != tc.want {
			t.Errorf("ParseContentSignal(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestUsageFromHeader(t *testing.T) {
	tests := []struct {
		name string
		h    http.Header
		want robots.Usage
	}{
		// draft-ietf-aipref-attach §1.2 example.
		{"attach example", http.Header{"Content-Usage": {"train-ai=n"}}, usage(robots.TrainAI, robots.Disallowed)},
		// Field lines form one Dictionary: the last value of a key wins.
		{"lines are one dictionary", http.Header{"Content-Usage": {"train-ai=n", "train-ai=y, search=y"}},
			usage(robots.TrainAI, robots.Allowed, robots.Search, robots.Allowed)},
		{"tdm reservation", http.Header{"Tdm-Reservation": {"1"}}, usage(robots.TrainAI, robots.Disallowed)},
		{"tdm reservation 0", http.Header{"Tdm-Reservation": {"0"}}, robots.Usage{}},
		{"tdm is more restrictive", http.Header{"Content-Usage": {"train-ai=y"}, "Tdm-Reservation": {"1"}},
			usage(robots.TrainAI, robots.Disallowed)},
		{"none", http.Header{"Content-Type": {"text/html"}}, robots.Usage{}},
	}
	for _, tc := range tests {
		if got := robots.UsageFromHeader(tc.h); got != tc.want {
			t.Errorf("%s: UsageFromHeader = %v, want %v", tc.name, got, tc.want)
		}
	}
	h := http.Header{"Content-Type": {"text/html"}, "Etag": {`"x"`}}
	if n := testing.AllocsPerRun(100, func() { robots.UsageFromHeader(h) }); n != 0 {
		t.Errorf("UsageFromHeader allocates %v times without the fields", n)
	}
}

func TestUsage_CombineMostRestrictive(t *testing.T) {
	a := usage(robots.Search, robots.Allowed, robots.TrainAI, robots.Allowed)
	b := usage(robots.TrainAI, robots.Disallowed, robots.AIInput, robots.Allowed)
	want := usage(robots.Search, robots.Allowed, robots.TrainAI, robots.Disallowed, robots.AIInput, robots.Allowed)
	if got := a.Combine(b); got != want {
		t.Errorf("Combine = %v, want %v", got, want)
	}
	if got := b.Combine(a); got != want {
		t.Errorf("Combine is not symmetric: %v", got)
	}
	if got := want.String(); got != "search=y, ai-input=y, train-ai=n" {
		t.Errorf("String = %q", got)
	}
	na := usage(robots.Search, robots.NotApplicable, robots.TrainAI, robots.Disallowed)
	if got := na.String(); got != "search=n/a, train-ai=n" {
		t.Errorf("String = %q, want %q", got, "search=n/a, train-ai=n")
	}
}

func FuzzParseUsage(f *testing.F) {
	f.Add("train-ai=y, search=n")
	f.Add("search=yes, ai-input=yes, ai-train=no")
	f.Fuzz(func(t *testing.T, s string) {
		for _, u := range []robots.Usage{robots.ParseUsage(s), robots.ParseContentSignal(s)} {
			for _, p := range robots.Purposes() {
				if v := u.Get(p); v != robots.Unknown && v != robots.Allowed && v != robots.Disallowed {
					t.Errorf("%q: %v for %v", s, v, p)
				}
			}
		}
	})
}

// attachExample is the robots.txt of draft-ietf-aipref-attach §3.4.
const attachExample = `User-Agent: *
Allow: /
Disallow: /never/
Content-Usage: train-ai=n
Content-Usage: /ai-ok/ train-ai=y

User-Agent: ExampleBot
Allow: /
Content-Usage: train-ai=y
`

// TestRobotsUsage_AttachExample is the table of draft-ietf-aipref-attach
// §3.4, row by row.
func TestRobotsUsage_AttachExample(t *testing.T) {
	r := robots.Parse([]byte(attachExample))
	na := usage(robots.Search, robots.NotApplicable, robots.AIInput, robots.NotApplicable, robots.TrainAI, robots.NotApplicable)
	tests := []struct {
		agent, target string
		crawl         bool
		want          robots.Usage
	}{
		{"SomeBot", "/test", true, usage(robots.TrainAI, robots.Disallowed)},
		{"SomeBot", "/never/test", false, na},
		{"SomeBot", "/ai-ok/test", true, usage(robots.TrainAI, robots.Allowed)},
		{"ExampleBot", "/test", true, usage(robots.TrainAI, robots.Allowed)},
		{"ExampleBot", "/never/test", true, usage(robots.TrainAI, robots.Allowed)},
		{"ExampleBot", "/ai-ok/test", true, usage(robots.TrainAI, robots.Allowed)},
	}
	for _, tc := range tests {
		a := robots.Agent{Token: tc.agent}
		if got := r.Allowed(a, tc.target); got != tc.crawl {
			t.Errorf("%s %s: Allowed = %v, want %v", tc.agent, tc.target, got, tc.crawl)
		}
		if got := r.Usage(a, tc.target); got != tc.want {
			t.Errorf("%s %s: Usage = %v, want %v", tc.agent, tc.target, got, tc.want)
		}
	}
}

func TestRobotsUsage(t *testing.T) {
	na := usage(robots.Search, robots.NotApplicable, robots.AIInput, robots.NotApplicable, robots.TrainAI, robots.NotApplicable)
	n, y := robots.Disallowed, robots.Allowed
	tests := []struct {
		name, body string
		agent      robots.Agent
		target     string
		want       robots.Usage
	}{
		// draft-ietf-aipref-attach: the path is matched as Allow and Disallow
		// are: longest pattern, wildcards, "$", percent-encoding equivalence.
		{"longest wins", "User-agent: *\nContent-Usage: /a train-ai=n\nContent-Usage: /a/b train-ai=y\n",
			robots.Agent{}, "/a/b/c", usage(robots.TrainAI, y)},
		{"shorter applies elsewhere", "User-agent: *\nContent-Usage: /a train-ai=n\nContent-Usage: /a/b train-ai=y\n",
			robots.Agent{}, "/a/c", usage(robots.TrainAI, n)},
		{"no match is unknown", "User-agent: *\nContent-Usage: /a train-ai=n\n", robots.Agent{}, "/b", robots.Usage{}},
		{"wildcard", "User-agent: *\nContent-Usage: /*.pdf$ train-ai=n\n", robots.Agent{}, "/x/y.pdf", usage(robots.TrainAI, n)},
		{"anchor", "User-agent: *\nContent-Usage: /*.pdf$ train-ai=n\n", robots.Agent{}, "/x/y.pdf?v=1", robots.Usage{}},
		{"percent-encoding", "User-agent: *\nContent-Usage: /%7Ejo train-ai=n\n", robots.Agent{}, "https://h/~jo/x", usage(robots.TrainAI, n)},
		{"lower-case escape", "User-agent: *\nContent-Usage: /a%2fb search=n\n", robots.Agent{}, "/a%2Fb", usage(robots.Search, n)},
		{"raw UTF-8 path", "User-agent: *\nContent-Usage: /ツ search=n\n", robots.Agent{}, "/%E3%83%84", usage(robots.Search, n)},
		// Identical paths with conflicting preferences: most restrictive
		// (draft-ietf-aipref-vocab §5.1), whatever their order.
		{"identical paths", "User-agent: *\nContent-Usage: /p train-ai=n\nContent-Usage: /p train-ai=y, search=y\n",
			robots.Agent{}, "/p/x", usage(robots.TrainAI, n, robots.Search, y)},
		{"identical paths reversed", "User-agent: *\nContent-Usage: /p train-ai=y, search=y\nContent-Usage: /p train-ai=n\n",
			robots.Agent{}, "/p/x", usage(robots.TrainAI, n, robots.Search, y)},
		{"equal length patterns", "User-agent: *\nContent-Usage: /a*c search=y\nContent-Usage: /ab* search=n\n",
			robots.Agent{}, "/abc", usage(robots.Search, n)},
		{"no path means every path", "User-agent: *\nContent-Usage: train-ai=n, ai-use=y\n",
			robots.Agent{}, "/any", usage(robots.TrainAI, n, robots.AIInput, y)},
		{"absent path is shorter than /", "User-agent: *\nContent-Usage: train-ai=n\nContent-Usage: / train-ai=y\n",
			robots.Agent{}, "/any", usage(robots.TrainAI, y)},
		{"absent paths combine", "User-agent: *\nContent-Usage: train-ai=n\nContent-Usage: train-ai=y, search=y\n",
			robots.Agent{}, "/any", usage(robots.TrainAI, n, robots.Search, y)},
		{"tab ends the path", "User-agent: *\nContent-Usage: /p\ttrain-ai=n\n", robots.Agent{}, "/p", usage(robots.TrainAI, n)},
		// §3.2: "SP (U+20) and HTAB (U+09) characters need to be replaced
		// with "%20" and "%09"" in a path.
		{"encoded space in the path", "User-agent: *\nContent-Usage: /a%20b train-ai=n\n", robots.Agent{}, "/a b/c", usage(robots.TrainAI, n)},
		// The value ends at "#".
		{"comment", "User-agent: *\nContent-Usage: / train-ai=n # search=n\n", robots.Agent{}, "/", usage(robots.TrainAI, n)},
		{"unknown labels ignored", "User-agent: *\nContent-Usage: / train-ai=n, future=n;x=1\n", robots.Agent{}, "/", usage(robots.TrainAI, n)},
		// vocab §6.5.1: "If the parsing of the Dictionary fails, preferences
		// are unknown": the rule stands, chosen by its path, and says nothing.
		{"not a dictionary is unknown", "User-agent: *\nContent-Usage: / train-ai=n\nContent-Usage: /p Train-AI=y\n",
			robots.Agent{}, "/p", robots.Usage{}},
		{"not a dictionary is unknown only for its path", "User-agent: *\nContent-Usage: / train-ai=n\nContent-Usage: /p Train-AI=y\n",
			robots.Agent{}, "/q", usage(robots.TrainAI, n)},
		{"path without preference is unknown", "User-agent: *\nContent-Usage: / train-ai=n\nContent-Usage: /p\n",
			robots.Agent{}, "/p", robots.Usage{}},
		{"empty preference is unknown", "User-agent: *\nContent-Usage: / train-ai=n\nContent-Usage: /p \n",
			robots.Agent{}, "/p/x", robots.Usage{}},
		{"unknown beside a rule of its length", "User-agent: *\nContent-Usage: /p train-ai=n\nContent-Usage: /p train-ai=maybe\n",
			robots.Agent{}, "/p", usage(robots.TrainAI, n)},
		{"empty rule without a path", "User-agent: *\nContent-Usage:\nContent-Usage: train-ai=n\n",
			robots.Agent{}, "/", usage(robots.TrainAI, n)},
		{"outside any group ignored", "Content-Usage: / train-ai=n\nUser-agent: *\nAllow: /\n", robots.Agent{}, "/", robots.Usage{}},
		// Only crawlable paths have preferences.
		{"disallowed is n/a", "User-agent: *\nDisallow: /p\nContent-Usage: / train-ai=y\n", robots.Agent{}, "/p", na},
		{"unreachable is n/a", "", robots.Agent{}, "/", na},
		// Group selection is that of Allowed: own group over "*", former
		// names too, merged groups of one name.
		{"own group", "User-agent: *\nContent-Usage: / search=n\n\nUser-agent: ExampleBot\nContent-Usage: / search=y\n",
			robots.Agent{Token: "examplebot/2.0"}, "/", usage(robots.Search, y)},
		{"former name", "User-agent: NewBot\nContent-Usage: / search=y\n\nUser-agent: OldBot\nContent-Usage: / search=n\n",
			robots.Agent{Token: "NewBot", Former: []string{"OldBot"}}, "/", usage(robots.Search, n)},
		{"merged groups", "User-agent: a\nContent-Usage: /x search=y\nDisallow: /z\n\nUser-agent: a\nContent-Usage: /x search=n\n",
			robots.Agent{Token: "a"}, "/x", usage(robots.Search, n)},
		{"merged groups, longest", "User-agent: a\nContent-Usage: /x search=n\nDisallow: /z\n\nUser-agent: a\nContent-Usage: /x/y search=y\n",
			robots.Agent{Token: "a"}, "/x/y", usage(robots.Search, y)},
		// A Content-Usage rule closes the user-agent list (§3: "rule =/
		// content-usage"); a Content-Signal line does not.
		{"usage closes the user-agent list", "User-agent: a\nContent-Usage: / search=n\nUser-agent: b\nDisallow: /z\n",
			robots.Agent{Token: "b"}, "/", robots.Usage{}},
		{"usage closes the user-agent list for Allowed", "User-agent: a\nContent-Usage: / search=n\nUser-agent: b\nDisallow: /z\n",
			robots.Agent{Token: "a"}, "/z", usage(robots.Search, n)},
		{"signal inside the user-agent list", "User-agent: a\nContent-Signal: search=no\nUser-agent: b\nDisallow: /z\n",
			robots.Agent{Token: "b"}, "/", usage(robots.Search, n)},
		// Cloudflare Content Signals: in a group, and outside any group for
		// every agent; absent keys neither grant nor restrict.
		{"signal in group", "User-Agent: *\nContent-Signal: search=yes, ai-train=no\nAllow: /\n",
			robots.Agent{}, "/x", usage(robots.Search, y, robots.TrainAI, n)},
		// Cloudflare's managed robots.txt writes the pairs without spaces.
		{"managed robots.txt", "User-agent: *\nContent-Signal: search=yes,ai-train=no\nAllow: /\n",
			robots.Agent{}, "/x", usage(robots.Search, y, robots.TrainAI, n)},
		{"signal alias", "User-Agent: *\nContent-Signals: ai-input=no\nAllow: /\n", robots.Agent{}, "/x", usage(robots.AIInput, n)},
		{"signal of another group", "User-Agent: other\nContent-Signal: search=no\nAllow: /\n", robots.Agent{Token: "me"}, "/x", robots.Usage{}},
		{"signal file-wide", "Content-Signal: ai-train=no\n\nUser-Agent: me\nAllow: /\n",
			robots.Agent{Token: "me"}, "/x", usage(robots.TrainAI, n)},
		{"signal and usage combine", "User-Agent: *\nContent-Signal: search=yes, ai-train=yes\nContent-Usage: / train-ai=n\n",
			robots.Agent{}, "/x", usage(robots.Search, y, robots.TrainAI, n)},
		// A purpose token's verdict combines most restrictively with what
		// the groups say: its Allowed does not lift a Content-Usage "n".
		{"purpose token does not lift a group's n", "User-agent: *\nContent-Usage: train-ai=n\n\nUser-agent: Example-Extended\nAllow: /\n",
			robots.Agent{Token: "ExampleBot", PurposeTokens: []robots.PurposeToken{{robots.TrainAI, "Example-Extended"}}},
			"/x", usage(robots.TrainAI, n)},
		{"signals of one group combine", "User-Agent: *\nContent-Signal: search=yes\nContent-Signal: ai-train=no\nAllow: /\n",
			robots.Agent{}, "/x", usage(robots.Search, y, robots.TrainAI, n)},
		{"file-wide signals combine", "Content-Signal: search=yes\nContent-Signal: ai-train=no\n\nUser-Agent: *\nAllow: /\n",
			robots.Agent{}, "/x", usage(robots.Search, y, robots.TrainAI, n)},
		// RFC 9309 §2.2.1 merges the groups of one name: their Content-Signal
		// lines combine too, whichever group is last.
		{"merged groups' signals combine", "User-agent: a\nContent-Signal: search=no\nDisallow: /z\n\nUser-agent: a\nContent-Signal: ai-train=no\nDisallow: /y\n",
			robots.Agent{Token: "a"}, "/x", usage(robots.Search, n, robots.TrainAI, n)},
		{"merged groups' signals combine, last without", "User-agent: a\nContent-Signal: search=no\nDisallow: /z\n\nUser-agent: a\nDisallow: /y\n",
			robots.Agent{Token: "a"}, "/x", usage(robots.Search, n)},
		{"file-wide and group combine", "Content-Signal: search=yes\nUser-Agent: *\nContent-Signal: search=no\n",
			robots.Agent{}, "/x", usage(robots.Search, n)},
		{"signal does not open the path", "User-Agent: *\nDisallow: /\nContent-Signal: search=yes\n", robots.Agent{}, "/x", na},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := robots.DisallowAll
			if tc.body != "" {
				r = robots.Parse([]byte(tc.body))
			}
			if got := r.Usage(tc.agent, tc.target); got != tc.want {
				t.Errorf("Usage(%+v, %q) = %v, want %v", tc.agent, tc.target, got, tc.want)
			}
		})
	}
}

// TestRobotsUsage_Empty: a nil Robots, an empty file and AllowAll say
// nothing.
func TestRobotsUsage_Empty(t *testing.T) {
	a := robots.Agent{Token: "x", PurposeTokens: []robots.PurposeToken{{robots.TrainAI, "x-ext"}}}
	for _, r := range []*robots.Robots{nil, robots.Parse(nil), robots.AllowAll} {
		if got := r.Usage(a, "/p"); got != (robots.Usage{}) {
			t.Errorf("%v", got)
		}
	}
}

// TestRobotsUsage_PurposeTokens: a control-only token is read as a robots.txt
// verdict for its purpose and never changes the crawl decision.
func TestRobotsUsage_PurposeTokens(t *testing.T) {
	const body = `User-agent: *
Disallow: /private/

User-agent: Example-Extended
Disallow: /
Allow: /open/

User-agent: Example-Search
Disallow: /drafts/
`
	r := robots.Parse([]byte(body))
	a := robots.Agent{Token: "ExampleBot", PurposeTokens: []robots.PurposeToken{
		{robots.TrainAI, "Example-Extended"},
		{robots.Search, "Example-Search"},
		{robots.AIInput, "Example-Nobody"},
	}}
	na := usage(robots.Search, robots.NotApplicable, robots.AIInput, robots.NotApplicable, robots.TrainAI, robots.NotApplicable)
	tests := []struct {
		target string
		crawl  bool
		want   robots.Usage
	}{
		{"/page", true, usage(robots.TrainAI, robots.Disallowed, robots.Search, robots.Allowed)},
		{"/open/page", true, usage(robots.TrainAI, robots.Allowed, robots.Search, robots.Allowed)},
		{"/drafts/x", true, usage(robots.TrainAI, robots.Disallowed, robots.Search, robots.Disallowed)},
		{"/private/x", false, na},
	}
	for _, tc := range tests {
		if got := r.Allowed(a, tc.target); got != tc.crawl {
			t.Errorf("%s: Allowed = %v, want %v", tc.target, got, tc.crawl)
		}
		if got := r.Allowed(robots.Agent{Token: a.Token}, tc.target); got != tc.crawl {
			t.Errorf("%s: the purpose tokens changed Allowed", tc.target)
		}
		if got := r.Usage(a, tc.target); got != tc.want {
			t.Errorf("%s: Usage = %v, want %v", tc.target, got, tc.want)
		}
	}
}

func TestUsage_Disallows(t *testing.T) {
	u := usage(robots.Search, robots.Allowed, robots.TrainAI, robots.Disallowed)
	if p, ok := u.Disallows([]robots.Purpose{robots.Search, robots.AIInput}); ok {
		t.Errorf("Disallows search/ai-input = %v", p)
	}
	if p, ok := u.Disallows([]robots.Purpose{robots.AIInput, robots.TrainAI}); !ok || p != robots.TrainAI {
		t.Errorf("Disallows = %v, %v; want train-ai", p, ok)
	}
	if p, ok := usage(robots.Search, robots.NotApplicable).Disallows([]robots.Purpose{robots.Search}); !ok || p != robots.Search {
		t.Errorf("n/a: Disallows = %v, %v", p, ok)
	}
}

func TestRobotsUsage_NoAllocation(t *testing.T) {
	r := robots.Parse([]byte(attachExample + "User-agent: *\nContent-Usage: /*.pdf$ search=n\nContent-Signal: ai-input=yes\n"))
	a := robots.Agent{Token: "SomeBot", Former: []string{"OldBot"},
		PurposeTokens: []robots.PurposeToken{{robots.TrainAI, "Some-Extended"}}}
	for _, target := range []string{"/ai-ok/test", "/x.pdf", "https://h/caf\u00e9?q=1"} {
		if n := testing.AllocsPerRun(100, func() { r.Usage(a, target) }); n != 0 {
			t.Errorf("Usage(%q) allocates %v times", target, n)
		}
	}
}

// Statement is what the file says, also where the agent may not fetch:
// the draft's /never/test row has no preference, but the file does state
// one for it, which is what a check for contradictions compares.
func TestRobotsStatement(t *testing.T) {
	r := robots.Parse([]byte(attachExample + "\nUser-agent: HootyBot\nDisallow: /\nContent-Signal: search=yes\n"))
	tests := []struct {
		agent, target string
		want          robots.Usage
	}{
		{"SomeBot", "/never/test", usage(robots.TrainAI, robots.Disallowed)},
		{"SomeBot", "/ai-ok/test", usage(robots.TrainAI, robots.Allowed)},
		{"HootyBot", "/", usage(robots.Search, robots.Allowed)},
	}
	for _, tc := range tests {
		a := robots.Agent{Token: tc.agent}
		if got := r.Statement(a, tc.target); got != tc.want {
			t.Errorf("%s %s: Statement = %v, want %v", tc.agent, tc.target, got, tc.want)
		}
	}
	if got := r.Usage(robots.Agent{Token: "HootyBot"}, "/").Get(robots.Search); got != robots.NotApplicable {
		t.Errorf("Usage for a disallowed path: %v", got)
	}
	if got, want := r.Names(), []string{"examplebot", "hootybot"}; !slices.Equal(got, want) {
		t.Errorf("Names = %q, want %q", got, want)
	}
	if (*robots.Robots)(nil).Names() != nil || robots.DisallowAll.Statement(robots.Agent{}, "/") != (robots.Usage{}) {
		t.Error("nil and DisallowAll state nothing")
	}
}

// TestUsage_Boundaries pins the 8 KiB Content-Usage limit to the byte, the
// lenient spellings of the header forms, and the names of every value.
func TestUsage_Boundaries(t *testing.T) {
	sized := func(n int) string { return strings.Repeat(" ", n-len("train-ai=n")) + "train-ai=n" }
	noTrain := robots.Usage{}.With(robots.TrainAI, robots.Disallowed)
	headers := []struct {
		name string
		h    http.Header
		want robots.Usage
	}{
		{"8192-byte Content-Usage read", http.Header{"Content-Usage": {sized(8192)}}, noTrain},
		{"8193-byte Content-Usage ignored", http.Header{"Content-Usage": {sized(8193)}}, robots.Usage{}},
		{"tdm-reservation with spaces", http.Header{"Tdm-Reservation": {" 1 "}}, noTrain},
	}
	for _, tc := range headers {
		if got := robots.UsageFromHeader(tc.h); got != tc.want {
			t.Errorf("%s: UsageFromHeader = %v, want %v", tc.name, got, tc.want)
		}
	}
	signals := []struct {
		in   string
		want robots.Usage
	}{
		{"ai-train=NO", noTrain},
		{"ai-train= no ", noTrain},
		{"search = Yes , ai-input=no", robots.Usage{}.With(robots.Search, robots.Allowed).With(robots.AIInput, robots.Disallowed)},
	}
	for _, tc := range signals {
		if got := robots.ParseContentSignal(tc.in); got != tc.want {
			t.Errorf("ParseContentSignal(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
	names := []struct{ got, want string }{
		{robots.Search.String(), "search"},
		{robots.AIInput.String(), "ai-input"},
		{robots.TrainAI.String(), "train-ai"},
		{robots.Purpose(3).String(), "purpose(3)"},
		{robots.Unknown.String(), "unknown"},
		{robots.Allowed.String(), "allow"},
		{robots.Disallowed.String(), "disallow"},
		{robots.NotApplicable.String(), "n/a"},
		{robots.Verdict(4).String(), "verdict(?)"},
	}
	for _, n := range names {
		if n.got != n.want {
			t.Errorf("String = %q, want %q", n.got, n.want)
		}
	}
	all := robots.Usage{}.With(robots.Search, robots.Disallowed).With(robots.Purpose(3), robots.Allowed)
	if v := all.Get(robots.Purpose(3)); v != robots.Unknown {
		t.Errorf("Get(purpose(3)) = %v, want unknown", v)
	}
	if v := all.Get(robots.Search); v != robots.Disallowed {
		t.Errorf("Get(search) = %v, want disallow", v)
	}
}

// What is skipped is skipped alone: a key whose value is not an Item (an
// Inner List) says nothing, and the keys after it still count
// (draft-ietf-aipref-vocab §6: any other value is ignored); a purpose token
// without a group is Unknown, and the purpose tokens after it still count;
// a group of the agent whose Content-Usage rules do not match the path does
// not hide the rules of its other groups (RFC 9309 §2.2.1 merges them).
func TestRobotsUsage_SkippedPartsDoNotStopTheRest(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want robots.Usage
	}{
		{"search=(y n), ai-use=n, train-ai=n", usage(robots.AIInput, robots.Disallowed, robots.TrainAI, robots.Disallowed)},
		{"search=y, ai-use=(n), train-ai=n", usage(robots.Search, robots.Allowed, robots.TrainAI, robots.Disallowed)},
	} {
		if got := robots.ParseUsage(tc.in); got != tc.want {
			t.Errorf("ParseUsage(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}

	r := robots.Parse([]byte("User-agent: Example-Extended\nDisallow: /\n"))
	a := robots.Agent{Token: "ExampleBot", PurposeTokens: []robots.PurposeToken{
		{Purpose: robots.TrainAI, Token: "Example-Nobody"},
		{Purpose: robots.AIInput, Token: "Example-Extended"},
	}}
	if got, want := r.Usage(a, "/page"), usage(robots.AIInput, robots.Disallowed); got != want {
		t.Errorf("purpose tokens, the first without a group: Usage = %v, want %v", got, want)
	}

	const merged = `User-agent: ExampleBot
Content-Usage: /private/ train-ai=n
Disallow: /tmp/

User-agent: ExampleBot
Content-Usage: /blog/ train-ai=y, search=y
`
	r = robots.Parse([]byte(merged))
	for _, tc := range []struct {
		target string
		want   robots.Usage
	}{
		{"/blog/post", usage(robots.TrainAI, robots.Allowed, robots.Search, robots.Allowed)},
		{"/private/x", usage(robots.TrainAI, robots.Disallowed)},
		{"/other", robots.Usage{}},
	} {
		if got := r.Usage(robots.Agent{Token: "ExampleBot"}, tc.target); got != tc.want {
			t.Errorf("merged groups, %s: Usage = %v, want %v", tc.target, got, tc.want)
		}
	}
}
