package robots_test

import (
	"net/http"
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
		{"train-ai=no", robots.Usage{}}, // the AIPREF label is not a Content Signals key
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
