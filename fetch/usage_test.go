package fetch_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"testing"
	"testing/synctest"

	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/fetch/fetchtest"
	"github.com/goodbot-go/goodbot/robots"
)

func verdicts(pairs ...any) robots.Usage {
	var u robots.Usage
	for i := 0; i < len(pairs); i += 2 {
		u = u.With(pairs[i].(robots.Purpose), pairs[i+1].(robots.Verdict))
	}
	return u
}

// usageSite serves /page (and /ok, /go which redirects to /page) on a.test
// with the given robots.txt and page header.
func usageSite(w *fetchtest.Web, robotsTxt string, h http.Header) {
	w.Host("a.test").
		Handle("/robots.txt", fetchtest.Robots(robotsTxt)).
		Handle("/page", fetchtest.Page{Body: "<p>page</p>", Header: h}).
		Handle("/ok", fetchtest.HTML("<p>ok</p>")).
		Handle("/go", fetchtest.Redirect("/page", 0))
}

// Refuse mode: a URL whose robots.txt refuses one of the bot's purposes is
// never requested; the outcome is usage_refused, typed like the others.
func TestUsage_RefuseRobotsMakesNoRequest(t *testing.T) {
	tests := []struct {
		name, robots string
		purposes     []robots.Purpose
		tokens       []robots.PurposeToken
		okToo        bool // the refusal covers /ok as well
	}{
		{"content-usage", "User-agent: *\nAllow: /\nContent-Usage: /page ai-use=n\n", []robots.Purpose{robots.AIInput}, nil, false},
		{"content-signal in group", "User-agent: *\nContent-Signal: search=no\nDisallow: /private\n", []robots.Purpose{robots.Search}, nil, true},
		{"content-signal file-wide", "Content-Signal: ai-input=no\n\nUser-agent: *\nAllow: /\n", []robots.Purpose{robots.Search, robots.AIInput}, nil, true},
		{"own group", "User-agent: *\nAllow: /\n\nUser-agent: TestBot\nContent-Usage: /pa ai-use=n\n", []robots.Purpose{robots.AIInput}, nil, false},
		{"purpose token", "User-agent: TestBot-AI\nDisallow: /page\n", []robots.Purpose{robots.AIInput},
			[]robots.PurposeToken{{Purpose: robots.AIInput, Token: "TestBot-AI"}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := fetchtest.New()
				defer w.Close()
				usageSite(w, tt.robots, nil)
				bot := memBot(w)
				bot.Purposes, bot.PurposeTokens, bot.UsageMode = tt.purposes, tt.tokens, fetch.UsageRefuse
				f := mustFetcher(t, bot)

				want, reqs := fetch.OK, 2 // robots.txt and /ok: the crawl itself is not refused
				if tt.okToo {
					want, reqs = fetch.UsageRefused, 1
				}
				get(t, f, "http://a.test/ok", want)
				p, err := f.Get(context.Background(), "http://a.test/page")
				if p.Outcome != fetch.UsageRefused || p.Outcome.String() != "usage_refused" {
					t.Fatalf("outcome %v, want usage_refused", p.Outcome)
				}
				var fe *fetch.Error
				var ue *fetch.UsageError
				if !errors.Is(err, fetch.ErrUsageRefused) || !errors.As(err, &fe) || !errors.As(err, &ue) || ue.Source != "robots.txt" {
					t.Fatalf("err %v: want a *fetch.Error with a robots.txt *fetch.UsageError", err)
				}
				if p.Status != 0 || p.Body != nil || p.Usage.Get(ue.Purpose) != robots.Disallowed {
					t.Errorf("page %d %q usage %v", p.Status, p.Body, p.Usage)
				}
				// The same through the http.Client: a *url.Error around the *Error.
				_, err = f.Client().Get("http://a.test/page")
				var ure *url.Error
				if !errors.As(err, &ure) || !errors.Is(err, fetch.ErrUsageRefused) || fetch.OutcomeOf(err) != fetch.UsageRefused {
					t.Errorf("client: %v", err)
				}
				if n := w.Count("a.test", "/page"); n != 0 {
					t.Errorf("/page requested %d times, want none", n)
				}
				if n := w.Count("a.test", ""); n != reqs {
					t.Errorf("a.test got %d requests, want %d", n, reqs)
				}
			})
		})
	}
}

// Refuse mode: a redirect into a path robots.txt refuses is not followed.
func TestUsage_RefuseRedirectHop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := fetchtest.New()
		defer w.Close()
		usageSite(w, "User-agent: *\nContent-Usage: /page search=n\n", nil)
		bot := memBot(w)
		bot.Purposes, bot.UsageMode = []robots.Purpose{robots.Search}, fetch.UsageRefuse
		get(t, mustFetcher(t, bot), "http://a.test/go", fetch.UsageRefused)
		if n, m := w.Count("a.test", "/go"), w.Count("a.test", "/page"); n != 1 || m != 0 {
			t.Errorf("/go requested %d times, /page %d: want 1 and 0", n, m)
		}
	})
}

// Refuse mode: a response whose header refuses a purpose is dropped: the
// request was made, nothing of the page is kept.
func TestUsage_RefuseHeaderDropsPage(t *testing.T) {
	tests := []struct {
		name     string
		h        http.Header
		purposes []robots.Purpose
		want     fetch.Outcome
	}{
		{"content-usage", http.Header{"Content-Usage": {"ai-use=n"}}, []robots.Purpose{robots.AIInput}, fetch.UsageRefused},
		{"tdm-reservation", http.Header{"Tdm-Reservation": {"1"}}, []robots.Purpose{robots.Search, robots.TrainAI}, fetch.UsageRefused},
		{"other purpose", http.Header{"Content-Usage": {"train-ai=n"}}, []robots.Purpose{robots.AIInput}, fetch.OK},
		{"allowed", http.Header{"Content-Usage": {"ai-use=y"}}, []robots.Purpose{robots.AIInput}, fetch.OK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := fetchtest.New()
				defer w.Close()
				usageSite(w, "User-agent: *\nAllow: /\n", tt.h)
				bot := memBot(w)
				bot.Purposes, bot.UsageMode = tt.purposes, fetch.UsageRefuse
				p := get(t, mustFetcher(t, bot), "http://a.test/page", tt.want)
				if n := w.Count("a.test", "/page"); n != 1 {
					t.Fatalf("/page requested %d times, want 1", n)
				}
				if tt.want == fetch.UsageRefused && (p.Body != nil || p.Usage.IsZero()) {
					t.Errorf("refused page kept %q, usage %v", p.Body, p.Usage)
				}
				if tt.want == fetch.OK && string(p.Body) != "<p>page</p>" {
					t.Errorf("body %q", p.Body)
				}
			})
		})
	}
}

// Record mode (the zero value): the page is fetched and kept, and carries
// what robots.txt and the header say, combined most restrictively.
func TestUsage_RecordKeepsPageWithVerdict(t *testing.T) {
	tests := []struct {
		name, robots string
		h            http.Header
		want         robots.Usage
	}{
		{"robots refuses", "User-agent: *\nContent-Usage: ai-use=n, search=y\n", nil,
			verdicts(robots.AIInput, robots.Disallowed, robots.Search, robots.Allowed)},
		{"header refuses", "User-agent: *\nAllow: /\n", http.Header{"Content-Usage": {"ai-use=n"}},
			verdicts(robots.AIInput, robots.Disallowed)},
		{"most restrictive", "User-agent: *\nContent-Signal: search=yes, ai-train=yes\n", http.Header{"Content-Usage": {"search=n"}, "Tdm-Reservation": {"1"}},
			verdicts(robots.Search, robots.Disallowed, robots.TrainAI, robots.Disallowed)},
		{"nothing said", "User-agent: *\nAllow: /\n", nil, robots.Usage{}},
	}
	for _, tt := range tests {
		for _, purposes := range [][]robots.Purpose{{robots.AIInput, robots.Search}, nil} {
			t.Run(tt.name, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					w := fetchtest.New()
					defer w.Close()
					usageSite(w, tt.robots, tt.h)
					bot := memBot(w)
					bot.Purposes = purposes // UsageMode zero: record
					p := get(t, mustFetcher(t, bot), "http://a.test/go", fetch.OK)
					if n := w.Count("a.test", "/page"); n != 1 {
						t.Fatalf("/page requested %d times, want 1", n)
					}
					if string(p.Body) != "<p>page</p>" {
						t.Errorf("body %q", p.Body)
					}
					if p.Usage != tt.want {
						t.Errorf("Page.Usage = %v, want %v", p.Usage, tt.want)
					}
				})
			})
		}
	}
}

func TestUsage_BadConfig(t *testing.T) {
	for _, bot := range []fetch.Bot{
		{UserAgent: testUA, Purposes: []robots.Purpose{robots.Purpose(9)}},
		{UserAgent: testUA, PurposeTokens: []robots.PurposeToken{{Purpose: robots.Purpose(9), Token: "X"}}},
		{UserAgent: testUA, UsageMode: fetch.UsageMode(7)},
	} {
		if _, err := fetch.NewFetcher(bot); err == nil {
			t.Errorf("NewFetcher(%+v) accepted", bot)
		}
	}
	if fetch.UsageRefuse.String() != "refuse" || fetch.UsageRecord.String() != "record" {
		t.Error("UsageMode names")
	}
}

// Page.Usage reads robots.txt for the page's escaped path and its query.
func TestUsage_PageVerdictTargets(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := fetchtest.New()
		defer w.Close()
		w.Host("a.test").
			Handle("/robots.txt", fetchtest.Robots("User-agent: *\nContent-Usage: /caf%C3%A9 search=n\nContent-Usage: /q?x=1 ai-use=n\n")).
			Handle("/café", fetchtest.HTML("c")).
			Handle("/q", fetchtest.HTML("q"))
		f := mustFetcher(t, memBot(w))
		if p := get(t, f, "http://a.test/caf%C3%A9", fetch.OK); p.Usage != verdicts(robots.Search, robots.Disallowed) {
			t.Errorf("escaped path: %v", p.Usage)
		}
		if p := get(t, f, "http://a.test/q?x=1", fetch.OK); p.Usage != verdicts(robots.AIInput, robots.Disallowed) {
			t.Errorf("query: %v", p.Usage)
		}
		if w.Count("a.test", "/café")+w.Count("a.test", "/q") != 2 {
			t.Error("pages not fetched")
		}
	})
}
