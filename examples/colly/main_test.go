package main

import (
	"crypto/ed25519"
	"errors"
	"log/slog"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gocolly/colly/v2"
	"go.uber.org/goleak"

	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/fetch/fetchtest"
	"github.com/goodbot-go/goodbot/politeness"
	"github.com/goodbot-go/goodbot/robots"
	"github.com/goodbot-go/goodbot/signing"
	"github.com/goodbot-go/goodbot/signing/signingtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const ua = "CollyBot/1.0 (+https://colly.test/bot)"

// A colly crawl on goodbot keeps the bot's promises: robots.txt read once,
// with the bot's User-Agent, and obeyed; one request at a time per host, at
// least the bot's 100 ms apart; every request signed; no cookies; a chain
// of 4 redirects for a 3-redirect bot stopped before its last target, one
// of 3 followed; and colly's own redirect filter (AllowedDomains) still
// applied.
func TestColly_KeepsPromises(t *testing.T) {
	w := fetchtest.New()
	tr := w.Transport()
	t.Cleanup(func() {
		tr.CloseIdleConnections()
		w.Close()
	})
	w.Host("a.test").
		Handle("/robots.txt", fetchtest.Robots("User-agent: *\nDisallow: /private\n")).
		Handle("/", fetchtest.HTML(`<a href="/p1">1</a> <a href="/p2">2</a> <a href="/private/x">x</a>
			<a href="/r/0">r</a> <a href="/s/0">s</a> <a href="/out">out</a>`)).
		Handle("/p1", fetchtest.SetCookie("sid", "1", fetchtest.HTML(`<a href="/p2">2</a>`))).
		Handle("/p2", fetchtest.HTML("two")).
		Handle("/out", fetchtest.Redirect("http://b.test/", 0)).
		HandleChain("/r", 4, fetchtest.HTML("end")).
		HandleChain("/s", 3, fetchtest.HTML("end"))
	w.Host("b.test").Handle("/robots.txt", fetchtest.Robots("")).Handle("/", fetchtest.HTML("b"))
	key := signingtest.Key("colly")
	ks, err := signing.NewKeySet(key.Public().(ed25519.PublicKey))
	if err != nil {
		t.Fatal(err)
	}
	bot := fetch.Bot{
		UserAgent:     ua,
		Transport:     tr,
		AllowInternal: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
		Politeness:    politeness.Policy{MinDelay: 100 * time.Millisecond},
		Limits:        fetch.Limits{MaxRedirects: 3},
		Signer:        &signing.Signer{Key: key, Agent: "https://colly.test"},
	}
	c, err := newCollector(bot, colly.AllowedDomains("a.test"))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	errs := map[string]error{}
	c.OnError(func(r *colly.Response, err error) {
		mu.Lock()
		errs[r.Request.URL.Path] = err
		mu.Unlock()
	})
	crawl(c, slog.New(slog.DiscardHandler), "http://a.test/")

	// The work happened: every allowed page was fetched once.
	for _, p := range []string{"/", "/p1", "/p2", "/r/3", "/s/3", "/out"} {
		if n := w.Count("a.test", p); n != 1 {
			t.Errorf("%s fetched %d times, want 1", p, n)
		}
	}
	if n := w.Count("a.test", "/robots.txt"); n != 1 {
		t.Errorf("robots.txt fetched %d times, want 1", n)
	}
	var fe *fetch.Error
	if err := errs["/r/0"]; !errors.As(err, &fe) || fe.Outcome != fetch.TooManyRedirects {
		t.Errorf("/r/0: err %v, want TooManyRedirects", err)
	}
	if err := errs["/private/x"]; !errors.Is(err, fetch.ErrDisallowed) {
		t.Errorf("/private/x: err %v, want ErrDisallowed", err)
	}
	if err := errs["/out"]; err == nil || !strings.Contains(err.Error(), "b.test") {
		t.Errorf("/out: err %v, want colly's refusal of b.test", err)
	}
	w.Check(t,
		fetchtest.NotFetched("a.test", "/private/x", "/r/4"),
		fetchtest.NotFetched("b.test", "/", "/robots.txt"),
		fetchtest.RobotsFirst(),
		w.ObeysRobots(robots.Agent{Token: "CollyBot"}),
		fetchtest.NoOverlap(),
		fetchtest.MinGap(100*time.Millisecond),
		fetchtest.UserAgent(ua),
		fetchtest.Signed(fetchtest.Verify(&signing.Verifier{Keys: ks})),
		fetchtest.NoCookies(),
	)
	for _, r := range w.RequestsTo("a.test") {
		if r.Path == "/robots.txt" {
			continue
		}
		// the bot's Accept, not colly's */*
		if got := r.Header.Get("Accept"); got != "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8" {
			t.Errorf("%s asked with Accept %q", r.Path, got)
		}
	}
}

// What each colly hook keeps, as the README's table says: through
// WithTransport, colly's redirect filter (AllowedDomains) still stops a
// redirect off the site and goodbot's transport stops the 4th redirect of a
// 3-redirect bot; through SetClient, goodbot's client stops the 4th redirect
// but colly's filter is gone, so the redirect off the site is followed.
func TestColly_Hooks(t *testing.T) {
	for _, tt := range []struct {
		hook        string
		offSiteSeen bool
	}{{"WithTransport", false}, {"SetClient", true}} {
		t.Run(tt.hook, func(t *testing.T) {
			w := fetchtest.New()
			tr := w.Transport()
			t.Cleanup(func() {
				tr.CloseIdleConnections()
				w.Close()
			})
			w.Host("a.test").Handle("/robots.txt", fetchtest.Robots("")).
				Handle("/out", fetchtest.Redirect("http://b.test/", 0)).
				HandleChain("/r", 4, fetchtest.HTML("end"))
			w.Host("b.test").Handle("/robots.txt", fetchtest.Robots("")).Handle("/", fetchtest.HTML("b"))
			bot := fetch.Bot{
				UserAgent:     ua,
				Transport:     tr,
				AllowInternal: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
				Politeness:    politeness.Policy{MinDelay: -1},
				Limits:        fetch.Limits{MaxRedirects: 3},
			}
			var c *colly.Collector
			if tt.hook == "WithTransport" {
				var err error
				if c, err = newCollector(bot, colly.AllowedDomains("a.test")); err != nil {
					t.Fatal(err)
				}
			} else {
				client, err := fetch.New(bot)
				if err != nil {
					t.Fatal(err)
				}
				c = colly.NewCollector(colly.AllowedDomains("a.test"))
				c.SetClient(client)
			}
			if err := c.Visit("http://a.test/out"); (err == nil) != tt.offSiteSeen {
				t.Errorf("/out: err %v", err)
			}
			var fe *fetch.Error
			if err := c.Visit("http://a.test/r/0"); !errors.As(err, &fe) || fe.Outcome != fetch.TooManyRedirects {
				t.Errorf("/r/0: err %v, want TooManyRedirects", err)
			}
			if n := w.Count("a.test", "/r/3"); n != 1 {
				t.Errorf("/r/3 fetched %d times, want 1", n)
			}
			w.Check(t, fetchtest.NotFetched("a.test", "/r/4"))
			if seen := w.Count("b.test", "/") == 1; seen != tt.offSiteSeen {
				t.Errorf("b.test/ fetched: %v, want %v", seen, tt.offSiteSeen)
			}
		})
	}
}
