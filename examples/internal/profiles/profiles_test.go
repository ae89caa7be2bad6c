package profiles

import (
	"context"
	"net/netip"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/fetch/fetchtest"
	"github.com/goodbot-go/goodbot/politeness"
	"github.com/goodbot-go/goodbot/signing/signingtest"
)

// Every profile composes into a fetcher, and its identity is the page's.
func TestProfiles_B1_H1_S1_D1(t *testing.T) {
	for name, tc := range map[string]struct {
		bot   fetch.Bot
		ua    string
		token string
	}{
		"bothy":       {Bothy(signingtest.BothyKey(), 1), "BothyBot/1.0 (+https://bothy.tools/bot)", "BothyBot"},
		"hooty":       {Hooty(0, 0, 1), "Mozilla/5.0 (compatible; HootyBot/1.0; +https://hooty.to/bot)", "HootyBot"},
		"sofya":       {Sofya(netip.MustParseAddr("127.0.0.1"), 1), "SofyaBot/1.0 (+https://sofya.co/bot)", "SofyaBot"},
		"directories": {Directories(signingtest.DirectoriesKey(), []string{"spam.test"}, 1), "DirectoriesBot/1.0 (+https://directories.prosvita.io/bot; verification for {directory})", "DirectoriesBot"},
	} {
		if tc.bot.UserAgent != tc.ua || tc.bot.Token != tc.token {
			t.Errorf("%s: UA %q token %q", name, tc.bot.UserAgent, tc.bot.Token)
		}
		if _, err := fetch.NewFetcher(tc.bot); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestScale(t *testing.T) {
	tests := []struct {
		d    time.Duration
		f    float64
		want time.Duration
	}{
		{2 * time.Second, 1, 2 * time.Second},
		{2 * time.Second, 0, 2 * time.Second},
		{2 * time.Second, 0.05, 100 * time.Millisecond},
		{time.Microsecond, 0.001, time.Millisecond},
	}
	for _, tt := range tests {
		if got := Scale(tt.d, tt.f); got != tt.want {
			t.Errorf("Scale(%v, %v) = %v, want %v", tt.d, tt.f, got, tt.want)
		}
	}
	if got := ScaleTimeout(15*time.Second, 0.01); got != 2*time.Second {
		t.Errorf("ScaleTimeout floor: %v", got)
	}
	if got := ScaleTimeout(time.Second, 0.01); got != time.Second {
		t.Errorf("ScaleTimeout short: %v", got)
	}
}

// D8, D11: DirectoriesBot abandons a robots.txt that trickles one byte a
// second at its 15 s time limit, exactly (fake time), and does not fetch the
// page.
func TestDirectories_D8_D11_TrickleRobotsAbandonedAt15s(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := fetchtest.New()
		defer w.Close()
		w.Host("dir.test").Handle("/robots.txt", fetchtest.Trickle(time.Second, strings.Repeat("#", 600))).
			Handle("/partners", fetchtest.HTML("partners"))
		bot := Directories(signingtest.DirectoriesKey(), nil, 1)
		bot.Transport = w.RoundTripper()
		f, err := fetch.NewFetcher(bot)
		if err != nil {
			t.Fatal(err)
		}
		ctx, err := fetch.WithUserAgentVar(context.Background(), "directory", "example.directory")
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		p, err := f.Get(ctx, "http://dir.test/partners")
		if p == nil || p.Outcome != fetch.Unreachable {
			t.Fatalf("outcome %v, err %v; want unreachable", p, err)
		}
		if n := w.Count("dir.test", "/robots.txt"); n != 1 {
			t.Fatalf("robots.txt asked %d times", n)
		}
		if d := time.Since(start); d != 15*time.Second {
			t.Errorf("robots.txt abandoned after %v, want 15s", d)
		}
		synctest.Wait()
		if n := w.Count("dir.test", "/partners"); n != 0 {
			t.Errorf("page fetched %d times without robots.txt", n)
		}
	})
}

// The signed bots (B2, D2) never follow a redirect from https to plain
// http: their signed requests stay on TLS. The unsigned ones follow it.
func TestProfiles_SignedBotsRefuseDowngrade(t *testing.T) {
	for name, tc := range map[string]struct {
		bot  fetch.Bot
		want fetch.Outcome
	}{
		"bothy":       {Bothy(signingtest.BothyKey(), 1), fetch.InsecureRedirect},
		"directories": {Directories(signingtest.DirectoriesKey(), nil, 1), fetch.InsecureRedirect},
		"hooty":       {Hooty(0, 0, 1), fetch.OK},
	} {
		w := fetchtest.New()
		w.Host("a.test").Handle("/robots.txt", fetchtest.Robots("User-agent: *\nAllow: /\n")).
			Handle("/p", fetchtest.Redirect("http://a.test/plain", 0)).Handle("/plain", fetchtest.HTML("plain"))
		bot := tc.bot
		bot.Transport = w.RoundTripper()
		bot.Politeness = politeness.Policy{MinDelay: -1}
		f, err := fetch.NewFetcher(bot)
		if err != nil {
			t.Fatal(err)
		}
		ctx, _ := fetch.WithUserAgentVar(context.Background(), "directory", "d.example")
		p, err := f.Get(ctx, "https://a.test/p")
		if w.Count("a.test", "/p") != 1 {
			t.Fatalf("%s: /p not asked for", name)
		}
		if p.Outcome != tc.want || (w.Count("a.test", "/plain") == 0) != (tc.want != fetch.OK) {
			t.Errorf("%s: %v (%v), /plain asked %d times; want %v", name, p.Outcome, err, w.Count("a.test", "/plain"), tc.want)
		}
	}
}
