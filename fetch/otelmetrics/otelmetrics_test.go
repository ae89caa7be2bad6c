package otelmetrics_test

import (
	"context"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.uber.org/goleak"

	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/fetch/fetchtest"
	"github.com/goodbot-go/goodbot/fetch/otelmetrics"
	"github.com/goodbot-go/goodbot/politeness"
	"github.com/goodbot-go/goodbot/signing"
	"github.com/goodbot-go/goodbot/signing/signingtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// collected is the metrics read from a ManualReader, by instrument name.
type collected map[string]metricdata.Aggregation

func collect(t *testing.T, r *sdkmetric.ManualReader) collected {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out := collected{}
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != otelmetrics.ScopeName {
			t.Errorf("scope %q", sm.Scope.Name)
		}
		for _, m := range sm.Metrics {
			out[m.Name] = m.Data
		}
	}
	return out
}

// sum adds the points of counter name whose attributes include every one
// of match.
func (c collected) sum(t *testing.T, name string, match ...attribute.KeyValue) int64 {
	t.Helper()
	s, ok := c[name].(metricdata.Sum[int64])
	if !ok {
		t.Fatalf("%s: %T, want an int64 sum", name, c[name])
	}
	var n int64
	for _, p := range s.DataPoints {
		if has(p.Attributes, match) {
			n += p.Value
		}
	}
	return n
}

func has(set attribute.Set, match []attribute.KeyValue) bool {
	for _, kv := range match {
		if v, ok := set.Value(kv.Key); !ok || v != kv.Value {
			return false
		}
	}
	return true
}

// waits returns the count and the sum (seconds) of the wait histogram's
// points matching match.
func (c collected) waits(t *testing.T, match ...attribute.KeyValue) (uint64, float64) {
	t.Helper()
	h, ok := c["goodbot.wait.duration"].(metricdata.Histogram[float64])
	if !ok {
		t.Fatalf("wait histogram: %T", c["goodbot.wait.duration"])
	}
	var n uint64
	var s float64
	for _, p := range h.DataPoints {
		if has(p.Attributes, match) {
			n += p.Count
			s += p.Sum
		}
	}
	return n, s
}

func host(h string) attribute.KeyValue { return attribute.String("host", h) }

// After a crawl of a test web, the metrics equal what the web recorded:
// requests per host, robots.txt fetches, signed requests, body bytes,
// pauses by reason and the pause waited out; and Get outcomes equal what
// Get returned.
func TestMetrics_EqualTheWebsRecords(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := fetchtest.New()
		defer w.Close()
		w.Host("a.test").Handle("/robots.txt", fetchtest.Robots("User-agent: *\nDisallow: /no\n")).
			Fallback(fetchtest.HTML("<p>a page</p>"))
		w.Host("b.test").Handle("/robots.txt", fetchtest.Robots("")).
			Handle("/limited", fetchtest.RetryAfter(http.StatusTooManyRequests, "30")).
			Fallback(fetchtest.HTML("<p>b</p>"))
		w.Host("c.test").Handle("/robots.txt", fetchtest.Status(http.StatusNotFound)).
			Handle("/gone", fetchtest.Status(http.StatusInternalServerError))

		reader := sdkmetric.NewManualReader()
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
		defer mp.Shutdown(context.Background())
		m, err := otelmetrics.New(mp, otelmetrics.Config{})
		if err != nil {
			t.Fatal(err)
		}
		observed := 0
		bot := fetch.Bot{
			UserAgent:  "TestBot/1.0",
			Transport:  w.RoundTripper(),
			Politeness: politeness.Policy{MinDelay: time.Second, MaxRetryAfter: time.Hour},
			Signer:     &signing.Signer{Key: signingtest.BothyKey(), Agent: "https://bothy.tools", Form: signing.BareURL},
			Observe:    func(politeness.Event) { observed++ }, // kept by Instrument
		}
		m.Instrument(&bot)
		f, err := fetch.NewFetcher(bot)
		if err != nil {
			t.Fatal(err)
		}
		urls := []string{
			"http://a.test/", "http://a.test/one", "http://a.test/no", "http://a.test/two",
			"http://b.test/limited", "http://b.test/after",
			"http://c.test/gone", "http://c.test/",
		}
		outcomes := map[fetch.Outcome]int64{}
		for _, u := range urls {
			p, _ := f.Get(context.Background(), u)
			outcomes[p.Outcome]++
		}
		reqs := w.Requests()
		if len(reqs) != 10 {
			t.Fatalf("the web saw %d requests, want 10 (3 robots.txt, 7 pages)", len(reqs))
		}
		if observed == 0 {
			t.Errorf("the bot's own Observe hook was dropped")
		}
		got := collect(t, reader)

		var bytes, signed int64
		robotsTxt := map[string]int64{}
		for _, r := range reqs {
			bytes += r.BytesWritten
			if r.Header.Get("Signature") != "" {
				signed++
			}
			if r.Path == "/robots.txt" {
				robotsTxt[r.Host]++
			}
		}
		for _, h := range []string{"a.test", "b.test", "c.test"} {
			key := "http://" + h + ":80"
			if g, want := got.sum(t, "goodbot.requests", host(key)), int64(w.Count(h, "")); g != want {
				t.Errorf("requests to %s: metric %d, web %d", h, g, want)
			}
			if g := got.sum(t, "goodbot.robots.fetches", host(key)); g != robotsTxt[h] || g != 1 {
				t.Errorf("robots.txt fetches of %s: metric %d, web %d", h, g, robotsTxt[h])
			}
		}
		if g := got.sum(t, "goodbot.requests", attribute.Bool("robots", true)); g != 3 {
			t.Errorf("requests marked robots: %d, want 3", g)
		}
		if g := got.sum(t, "goodbot.signed_requests"); g != signed || g != 10 {
			t.Errorf("signed requests: metric %d, web %d, want 10", g, signed)
		}
		if g := got.sum(t, "goodbot.response.bytes"); g != bytes || g == 0 {
			t.Errorf("bytes: metric %d, web %d", g, bytes)
		}
		for o, n := range outcomes {
			if g := got.sum(t, "goodbot.fetches", attribute.String("outcome", o.String())); g != n {
				t.Errorf("outcome %s: metric %d, Get returned it %d times", o, g, n)
			}
		}
		if g := got.sum(t, "goodbot.fetches"); g != int64(len(urls)) {
			t.Errorf("fetches: %d, want %d", g, len(urls))
		}
		if g := got.sum(t, "goodbot.pauses", host("http://b.test:80"), attribute.String("reason", "retry-after"),
			attribute.String("kind", "pause")); g != 1 {
			t.Errorf("retry-after pauses of b.test: %d, want 1", g)
		}
		// The wait before /after is the 30 s pause, as the web saw it.
		limited, after := w.RequestsTo("b.test", "/limited")[0], w.RequestsTo("b.test", "/after")[0]
		n, s := got.waits(t, host("http://b.test:80"), attribute.String("reason", "pause"))
		if n != 1 || time.Duration(s*float64(time.Second)) != after.Start.Sub(limited.Start) {
			t.Errorf("pause waits on b.test: %d summing %.3fs; the web saw %v between the 429 and the next request",
				n, s, after.Start.Sub(limited.Start))
		}
		n, s = got.waits(t, host("http://a.test:80"), attribute.String("reason", "delay"))
		if n != 3 || s != 3 {
			t.Errorf("delay waits on a.test: %d summing %vs, want 3 of 1 s (robots.txt then three pages)", n, s)
		}
	})
}

// Without the host attribute, the series are per outcome and reason only.
func TestMetrics_NoHostAttribute(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(context.Background())
	m, err := otelmetrics.New(mp, otelmetrics.Config{NoHostAttribute: true})
	if err != nil {
		t.Fatal(err)
	}
	m.Event(fetch.Event{Kind: fetch.EventSend, Host: "http://a.test:80"})
	m.Politeness(politeness.Event{Kind: politeness.EventPause, Host: "http://a.test:80", Reason: "backoff"})
	got := collect(t, reader)
	if got.sum(t, "goodbot.requests") != 1 || got.sum(t, "goodbot.pauses", attribute.String("reason", "backoff")) != 1 {
		t.Fatalf("metrics not recorded: %v", got)
	}
	for _, name := range []string{"goodbot.requests", "goodbot.pauses"} {
		for _, p := range got[name].(metricdata.Sum[int64]).DataPoints {
			if _, ok := p.Attributes.Value("host"); ok {
				t.Errorf("%s has a host attribute", name)
			}
		}
	}
}

func TestNew_Errors(t *testing.T) {
	if _, err := otelmetrics.New(nil, otelmetrics.Config{}); err != otelmetrics.ErrNoProvider {
		t.Errorf("New(nil) = %v", err)
	}
	var zero otelmetrics.Metrics // records nothing, does not panic
	zero.Event(fetch.Event{Kind: fetch.EventSend})
	zero.Politeness(politeness.Event{Kind: politeness.EventWait})
}
