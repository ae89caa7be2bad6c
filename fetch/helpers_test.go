package fetch_test

import (
	"context"
	"net/http"
	"net/netip"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/fetch/fetchtest"
	"github.com/goodbot-go/goodbot/internal/manyhosts"
	"github.com/goodbot-go/goodbot/politeness"
	"github.com/goodbot-go/goodbot/robots"
)

func TestMain(m *testing.M) {
	manyhosts.Main() // the web of BenchmarkScale, in its own process; returns only in the test process
	goleak.VerifyTestMain(m)
}

const testUA = "TestBot/1.0 (+https://test.example/bot)"

// loopbackOnly is what every test that lives on loopback allows: 127.0.0.0/8
// and nothing else (so a redirect to [::1] is still refused).
var loopbackOnly = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}

var testAgent = robots.Agent{Token: "TestBot"}

// site adds a host with a robots.txt and a home page.
func site(w *fetchtest.Web, host, robotsTxt string) *fetchtest.Host {
	return w.Host(host).
		Handle("/robots.txt", fetchtest.Robots(robotsTxt)).
		Handle("/", fetchtest.HTML("<p>home of "+host+"</p>"))
}

// loopback returns a started Web and a bot using it over loopback with no
// politeness delay (tests that prove waits use memBot in a bubble).
func loopback(t *testing.T) (*fetchtest.Web, fetch.Bot) {
	t.Helper()
	w := fetchtest.New()
	tr := w.Transport()
	t.Cleanup(func() {
		tr.CloseIdleConnections()
		w.Close()
	})
	return w, fetch.Bot{
		UserAgent:     testUA,
		Transport:     tr,
		Politeness:    politeness.Policy{MinDelay: -1},
		AllowInternal: loopbackOnly,
	}
}

// memBot returns a bot over the Web's in-memory transport, for synctest
// bubbles; politeness keeps its default policy.
func memBot(w *fetchtest.Web) fetch.Bot {
	return fetch.Bot{UserAgent: testUA, Transport: w.RoundTripper()}
}

func mustFetcher(t *testing.T, bot fetch.Bot) *fetch.Fetcher {
	t.Helper()
	f, err := fetch.NewFetcher(bot)
	if err != nil {
		t.Fatalf("NewFetcher: %v", err)
	}
	return f
}

func mustClient(t *testing.T, bot fetch.Bot) *http.Client {
	t.Helper()
	c, err := fetch.New(bot)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return c
}

// get fetches u and checks the outcome.
func get(t *testing.T, f *fetch.Fetcher, u string, want fetch.Outcome) *fetch.Page {
	t.Helper()
	return getCtx(t, context.Background(), f, u, want)
}

func getCtx(t *testing.T, ctx context.Context, f *fetch.Fetcher, u string, want fetch.Outcome) *fetch.Page {
	t.Helper()
	p, err := f.Get(ctx, u)
	if p == nil {
		t.Fatalf("Get(%s): nil page, err %v", u, err)
	}
	if p.Outcome != want {
		t.Fatalf("Get(%s): outcome %v (status %d, err %v), want %v", u, p.Outcome, p.Status, err, want)
	}
	if (err == nil) != (want == fetch.OK || want == fetch.NotModified) {
		t.Fatalf("Get(%s): err %v with outcome %v", u, err, p.Outcome)
	}
	if err != nil && !errIs(err, want.Err()) {
		t.Fatalf("Get(%s): errors.Is(err, %v) false for %v", u, want.Err(), err)
	}
	return p
}

// ci reports whether the tests run under CI (env CI set), where a missing
// service or capability fails a test instead of skipping it.
func ci() bool { return os.Getenv("CI") != "" }
