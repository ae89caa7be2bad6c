package otelmetrics_test

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/fetch/fetchtest"
	"github.com/goodbot-go/goodbot/fetch/otelmetrics"
	"github.com/goodbot-go/goodbot/politeness"
)

// Instrument a bot, crawl, and read the metrics (a bot would export them,
// e.g. with the OpenTelemetry Prometheus exporter, instead of a
// ManualReader).
func ExampleMetrics_Instrument() {
	w := fetchtest.New()
	defer w.Close()
	w.Host("a.test").Handle("/robots.txt", fetchtest.Robots("User-agent: *\nDisallow: /private\n")).
		Fallback(fetchtest.HTML("<p>hello</p>"))
	tr := w.Transport()
	defer tr.CloseIdleConnections()

	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(context.Background())
	m, err := otelmetrics.New(mp, otelmetrics.Config{})
	if err != nil {
		panic(err)
	}
	bot := fetch.Bot{UserAgent: "ExampleBot/1.0", Transport: tr, Politeness: politeness.Policy{MinDelay: -1}}
	m.Instrument(&bot)
	f, err := fetch.NewFetcher(bot)
	if err != nil {
		panic(err)
	}
	for _, u := range []string{"http://a.test/", "http://a.test/about", "http://a.test/private"} {
		_, _ = f.Get(context.Background(), u)
	}

	var rm metricdata.ResourceMetrics
	_ = reader.Collect(context.Background(), &rm)
	for _, sm := range rm.ScopeMetrics {
		for _, mt := range sm.Metrics {
			if s, ok := mt.Data.(metricdata.Sum[int64]); ok && (mt.Name == "goodbot.requests" || mt.Name == "goodbot.fetches") {
				var n int64
				for _, p := range s.DataPoints {
					n += p.Value
				}
				fmt.Println(mt.Name, n)
			}
		}
	}
	// Output:
	// goodbot.requests 3
	// goodbot.fetches 3
}

// Without fetch, a politeness.Transport's events still feed the pause and
// wait instruments (Observe: m.Politeness); Event records a fetch.Event
// from any source.
func ExampleMetrics_Politeness() {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(context.Background())
	m, err := otelmetrics.New(mp, otelmetrics.Config{NoHostAttribute: true})
	if err != nil {
		panic(err)
	}
	m.Politeness(politeness.Event{Kind: politeness.EventPause, Host: "https://a.test:443", Reason: "retry-after"})
	m.Event(fetch.Event{Kind: fetch.EventGet, Outcome: fetch.RateLimited})

	var rm metricdata.ResourceMetrics
	_ = reader.Collect(context.Background(), &rm)
	for _, mt := range rm.ScopeMetrics[0].Metrics {
		if s, ok := mt.Data.(metricdata.Sum[int64]); ok {
			for _, p := range s.DataPoints {
				fmt.Println(mt.Name, p.Attributes.Encoded(attribute.DefaultEncoder()), p.Value)
			}
		}
	}
	// Output:
	// goodbot.fetches outcome=rate_limited 1
	// goodbot.pauses kind=pause,reason=retry-after 1
}
