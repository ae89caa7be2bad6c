package otelmetrics_test

import (
	"context"
	"net/http"
	"slices"
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

// newMetrics returns Metrics on a meter provider of their own, read by
// reader; the provider is shut down when the test ends.
func newMetrics(t *testing.T, cfg otelmetrics.Config) (*otelmetrics.Metrics, *sdkmetric.ManualReader) {
	t.Helper()
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	m, err := otelmetrics.New(mp, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return m, reader
}

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

		m, reader := newMetrics(t, otelmetrics.Config{})
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
	m, reader := newMetrics(t, otelmetrics.Config{NoHostAttribute: true})
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

// The instruments carry the scope, names, units and wait buckets the
// package documentation lists: what dashboards and alerts are written
// against.
func TestNew_Instruments(t *testing.T) {
	if otelmetrics.ScopeName != "github.com/goodbot-go/goodbot/fetch/otelmetrics" {
		t.Errorf("ScopeName %q, want the import path", otelmetrics.ScopeName)
	}
	m, reader := newMetrics(t, otelmetrics.Config{})
	const h = "http://a.test:80"
	m.Event(fetch.Event{Kind: fetch.EventSend, Host: h, Robots: true, Signed: true})
	m.Event(fetch.Event{Kind: fetch.EventDone, Host: h, Bytes: 10})
	m.Event(fetch.Event{Kind: fetch.EventGet, Host: h})
	m.Politeness(politeness.Event{Kind: politeness.EventWait, Host: h, Reason: "delay", Duration: time.Second})
	m.Politeness(politeness.Event{Kind: politeness.EventPause, Host: h, Reason: "retry-after"})
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	units := map[string]string{}
	var bounds []float64
	for _, sm := range rm.ScopeMetrics {
		for _, mt := range sm.Metrics {
			units[mt.Name] = mt.Unit
			if hist, ok := mt.Data.(metricdata.Histogram[float64]); ok && len(hist.DataPoints) > 0 {
				bounds = hist.DataPoints[0].Bounds
			}
		}
	}
	want := map[string]string{
		"goodbot.requests": "{request}", "goodbot.signed_requests": "{request}", "goodbot.robots.fetches": "{request}",
		"goodbot.response.bytes": "By", "goodbot.fetches": "{fetch}", "goodbot.pauses": "{pause}", "goodbot.wait.duration": "s",
	}
	for name, unit := range want {
		if u, ok := units[name]; !ok || u != unit {
			t.Errorf("%s: unit %q (recorded %v), want %q", name, u, ok, unit)
		}
	}
	if len(units) != len(want) {
		t.Errorf("instruments %v, want %v", units, want)
	}
	if !slices.Equal(bounds, []float64{0.1, 0.5, 1, 2, 5, 10, 30, 60, 300, 3600}) {
		t.Errorf("wait buckets %v", bounds)
	}
}

// Each event lands in its instruments with its attributes: an unsigned
// page request counts no signature; a signature and body bytes count per
// host; give-ups and breaker trips are pauses of their own kind; a refusal
// is no pause.
func TestMetrics_EventsAndAttributes(t *testing.T) {
	m, reader := newMetrics(t, otelmetrics.Config{})
	const a, b = "http://a.test:80", "https://b.test:443"
	m.Event(fetch.Event{Kind: fetch.EventSend, Host: a})
	m.Event(fetch.Event{Kind: fetch.EventSend, Host: b, Signed: true})
	m.Event(fetch.Event{Kind: fetch.EventDone, Host: a, Bytes: 7})
	m.Event(fetch.Event{Kind: fetch.EventDone, Host: b, Bytes: 100})
	m.Politeness(politeness.Event{Kind: politeness.EventGiveUp, Host: a, Reason: "ratelimit"})
	m.Politeness(politeness.Event{Kind: politeness.EventBreakerTrip, Host: b, Reason: "connection errors"})
	m.Politeness(politeness.Event{Kind: politeness.EventRefused, Host: b, Reason: "connection errors"})
	got := collect(t, reader)
	for _, c := range []struct {
		name  string
		match []attribute.KeyValue
		want  int64
	}{
		{"goodbot.requests", []attribute.KeyValue{host(a), attribute.Bool("robots", false)}, 1},
		{"goodbot.signed_requests", []attribute.KeyValue{host(a)}, 0},
		{"goodbot.signed_requests", []attribute.KeyValue{host(b)}, 1},
		{"goodbot.response.bytes", []attribute.KeyValue{host(a)}, 7},
		{"goodbot.response.bytes", []attribute.KeyValue{host(b)}, 100},
		{"goodbot.pauses", []attribute.KeyValue{host(a), attribute.String("kind", "give_up"), attribute.String("reason", "ratelimit")}, 1},
		{"goodbot.pauses", []attribute.KeyValue{host(b), attribute.String("kind", "breaker_trip"), attribute.String("reason", "connection errors")}, 1},
		{"goodbot.pauses", nil, 2},
	} {
		if g := got.sum(t, c.name, c.match...); g != c.want {
			t.Errorf("%s %v: %d, want %d", c.name, c.match, g, c.want)
		}
	}
}

// Instrument keeps hooks already set and calls them before it records: a
// hook sees the metrics as they were before its event.
func TestInstrument_KeepsHooksFirst(t *testing.T) {
	m, reader := newMetrics(t, otelmetrics.Config{})
	// count is the counter's total, 0 before its first point.
	count := func(name string) int64 {
		var rm metricdata.ResourceMetrics
		if err := reader.Collect(context.Background(), &rm); err != nil {
			t.Fatal(err)
		}
		var n int64
		for _, sm := range rm.ScopeMetrics {
			for _, mt := range sm.Metrics {
				if s, ok := mt.Data.(metricdata.Sum[int64]); ok && mt.Name == name {
					for _, p := range s.DataPoints {
						n += p.Value
					}
				}
			}
		}
		return n
	}
	var seen []int64
	bot := fetch.Bot{
		Events:  func(fetch.Event) { seen = append(seen, count("goodbot.requests")) },
		Observe: func(politeness.Event) { seen = append(seen, count("goodbot.pauses")) },
	}
	m.Instrument(&bot)
	bot.Events(fetch.Event{Kind: fetch.EventSend, Host: "http://a.test:80"})
	bot.Observe(politeness.Event{Kind: politeness.EventPause, Host: "http://a.test:80", Reason: "backoff"})
	bot.Events(fetch.Event{Kind: fetch.EventSend, Host: "http://a.test:80"})
	if !slices.Equal(seen, []int64{0, 0, 1}) {
		t.Errorf("the hooks saw %v, want [0 0 1] (called, and before the record)", seen)
	}
	if g, p := count("goodbot.requests"), count("goodbot.pauses"); g != 2 || p != 1 {
		t.Errorf("recorded %d requests and %d pauses, want 2 and 1", g, p)
	}
}
