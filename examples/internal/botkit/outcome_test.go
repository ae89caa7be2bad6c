package botkit

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/goodbot-go/goodbot/challenge"
	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/politeness"
	"github.com/goodbot-go/goodbot/robots"
)

// C7: every failure is told apart through errors.Is/As (robots, politeness,
// fetch typed errors, wrapped), for the reason shown and whether the site stops.
func TestReasonAndStopsSite_C7(t *testing.T) {
	disallowed := &fetch.Error{Outcome: fetch.Disallowed, Err: &robots.DisallowedError{Agent: "BothyBot", Rule: "Disallow: /x", Err: nil}}
	unreachable := &fetch.Error{Outcome: fetch.Unreachable, Err: &robots.DisallowedError{Agent: "HootyBot", Unreachable: true}}
	gaveUp := &fetch.Error{Outcome: fetch.GaveUp, Err: &politeness.HostError{Host: "http://a.test:80", Err: politeness.ErrGaveUp, Until: time.Unix(0, 0)}}
	down := fmt.Errorf("wrapped: %w", &politeness.HostError{Host: "http://a.test:80", Err: politeness.ErrHostDown})
	internal := &fetch.Error{Outcome: fetch.InternalAddress, Err: &fetch.InternalAddressError{Addr: netip.MustParseAddr("169.254.169.254"), Kind: "link-local"}}
	challenged := &fetch.Error{Outcome: fetch.Unreachable, Err: &robots.DisallowedError{Agent: "HootyBot", Unreachable: true,
		Err: &challenge.ChallengeError{Verdict: challenge.Verdict{Blocked: true, Vendor: "cloudflare", Kind: challenge.JSChallenge}}}}
	tests := []struct {
		err    error
		reason string
		stops  bool
	}{
		{disallowed, "robots.txt: Disallow: /x (for BothyBot)", false},
		{unreachable, "robots.txt unreachable: no permission assumed", true},
		{gaveUp, "politeness: gave up on host", true},
		{down, "politeness: host is down", true},
		{internal, "169.254.169.254 is a link-local address: not reached without -allow-internal", false},
		{challenged, "robots.txt answered with a challenge page, not rules (cloudflare js_challenge): no permission assumed", true},
		{&fetch.Error{Outcome: fetch.Timeout, URL: "http://a.test/", Err: errors.New("slow")}, "timeout http://a.test/: slow", false},
	}
	for _, tt := range tests {
		if got := Reason(nil, tt.err); !strings.HasPrefix(got, tt.reason) {
			t.Errorf("Reason(%v) = %q, want prefix %q", tt.err, got, tt.reason)
		}
		if got := StopsSite(tt.err); got != tt.stops {
			t.Errorf("StopsSite(%v) = %v", tt.err, got)
		}
	}
	if Reason(nil, nil) != "" || StopsSite(nil) {
		t.Error("nil error")
	}
}

func TestResultOf(t *testing.T) {
	p := &fetch.Page{URL: "http://a.test/x", FinalURL: "http://a.test/y", Status: 200, Body: []byte("hello"), Outcome: fetch.OK}
	r := ResultOf("http://a.test/x", p, nil)
	if r.Outcome != "ok" || r.FinalURL != "http://a.test/y" || r.Bytes != 5 || r.Status != 200 {
		t.Errorf("%+v", r)
	}
	p = &fetch.Page{URL: "http://a.test/x", FinalURL: "http://a.test/x", Status: 200, Outcome: fetch.OK}
	if r = ResultOf("http://a.test/x", p, nil); r.FinalURL != "http://a.test/x" {
		t.Errorf("final URL without a redirect: %+v (the -json line must carry final_url)", r)
	}
	r = ResultOf("http://a.test/x", nil, &fetch.Error{Outcome: fetch.BlockedDomain})
	if r.Outcome != "blocked_domain" {
		t.Errorf("%+v", r)
	}
}

func TestSiteURLAndPageFile(t *testing.T) {
	for in, want := range map[string]string{
		"example.org":           "https://example.org/",
		"http://127.0.0.1:8080": "http://127.0.0.1:8080/",
		"https://a.test/x#frag": "https://a.test/x",
	} {
		u, err := SiteURL(in)
		if err != nil || u.String() != want {
			t.Errorf("SiteURL(%q) = %v, %v; want %s", in, u, err, want)
		}
	}
	for _, bad := range []string{"ftp://a.test/", "http://user:pw@a.test/", "http://", "%zz"} {
		if _, err := SiteURL(bad); err == nil {
			t.Errorf("SiteURL(%q) accepted", bad)
		}
	}
	for in, want := range map[string]string{
		"http://a.test/":                 filepath.Join("a.test", "index_.txt"),
		"http://a.test:8080/news/x?id=1": filepath.Join("a.test_3a8080", "news", "x_3fid_3d1.txt"),
		"http://a.test/../../etc/passwd": filepath.Join("a.test", "etc", "passwd.txt"),
		"http://a.test/%2e%2e/x":         filepath.Join("a.test", "x.txt"),
		"http://A.TEST.:080/":            filepath.Join("a.test", "index_.txt"),
		"http://\uff41\u3002test/":       filepath.Join("a.test", "index_.txt"),
		"http://[0::1]:8080/":            filepath.Join("_5b_3a_3a1_5d_3a8080", "index_.txt"),
	} {
		u, _ := url.Parse(in)
		if got := PageFile(u); got != want || strings.Contains(got, "..") {
			t.Errorf("PageFile(%s) = %s, want %s", in, got, want)
		}
	}
}
