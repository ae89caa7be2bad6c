// Package otelmetrics records a bot's work as OpenTelemetry metrics: requests
// sent, Get outcomes, body bytes, pauses by reason, politeness waits per host,
// robots.txt fetches and signed requests.
//
// It hooks into the observation points the fetch and politeness packages
// already have ([fetch.Bot.Events] and [fetch.Bot.Observe]), so the core
// packages do not import OpenTelemetry; only a bot that wants metrics pays
// for the dependency. Export them with any OpenTelemetry reader, such as the
// Prometheus exporter (go.opentelemetry.io/otel/exporters/prometheus), which
// the example bots serve on /metrics.
//
// # Instruments
//
// All counters are monotonic; "host" is the site key
// ([politeness.HostKey], e.g. "https://example.org:443").
//
//	goodbot.requests         counter   {request}  requests sent (robots.txt included); host, robots
//	goodbot.signed_requests  counter   {request}  requests sent with a Signature; host
//	goodbot.robots.fetches   counter   {request}  robots.txt requests (redirect hops included); host
//	goodbot.response.bytes   counter   By         body bytes read; host
//	goodbot.fetches          counter   {fetch}    Fetcher.Get calls ended; outcome
//	goodbot.pauses           counter   {pause}    pauses, give-ups and breaker trips; host, kind, reason
//	goodbot.wait.duration    histogram s          politeness waits before a request; host, reason
//
// The wait histogram records waits made inside the politeness layer. A
// fetch/crawl Crawler asks [fetch.Fetcher.NextTurn] and serves a site only
// when its turn has come, so its requests seldom wait there: the histogram
// then holds the waits the schedule could not foresee, and the time a site
// spends waiting for its turn shows in the crawler's queue, not here.
//
// The host attribute makes one series per site: fine for a bot that visits a
// few thousand sites; set [Config.NoHostAttribute] for wide crawls.
package otelmetrics

import (
	"context"
	"errors"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/politeness"
)

// ScopeName is the instrumentation scope of the meter the instruments come
// from.
const ScopeName = "github.com/goodbot-go/goodbot/fetch/otelmetrics"

// ErrNoProvider is returned by [New] without a meter provider.
var ErrNoProvider = errors.New("otelmetrics: nil MeterProvider")

// Config tunes [New]. The zero Config records every instrument with its host
// attribute.
type Config struct {
	// NoHostAttribute drops the host attribute from every instrument, for
	// crawls over more sites than a metrics backend wants series.
	NoHostAttribute bool
}

// Metrics records [fetch.Event] and [politeness.Event] values into
// OpenTelemetry instruments. Make one with [New]; the zero Metrics records
// nothing. It is safe for concurrent use, and each record costs a few
// attribute allocations and the SDK's aggregation (no lock of its own).
type Metrics struct {
	cfg      Config
	requests metric.Int64Counter
	signed   metric.Int64Counter
	robots   metric.Int64Counter
	bytes    metric.Int64Counter
	fetches  metric.Int64Counter
	pauses   metric.Int64Counter
	waits    metric.Float64Histogram
}

// New makes the instruments on mp's meter for [ScopeName].
func New(mp metric.MeterProvider, cfg Config) (*Metrics, error) {
	if mp == nil {
		return nil, ErrNoProvider
	}
	meter := mp.Meter(ScopeName)
	m := &Metrics{cfg: cfg}
	var errs []error
	counter := func(name, unit, desc string) metric.Int64Counter {
		c, err := meter.Int64Counter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		errs = append(errs, err)
		return c
	}
	m.requests = counter("goodbot.requests", "{request}", "Requests sent, robots.txt fetches included.")
	m.signed = counter("goodbot.signed_requests", "{request}", "Requests sent with an HTTP message signature.")
	m.robots = counter("goodbot.robots.fetches", "{request}", "robots.txt requests, redirect hops included.")
	m.bytes = counter("goodbot.response.bytes", "By", "Response body bytes read.")
	m.fetches = counter("goodbot.fetches", "{fetch}", "Fetcher.Get calls ended, by outcome.")
	m.pauses = counter("goodbot.pauses", "{pause}", "Host pauses, give-ups and breaker trips, by reason.")
	w, err := meter.Float64Histogram("goodbot.wait.duration", metric.WithUnit("s"),
		metric.WithDescription("Politeness waits before a request, by host and reason."),
		metric.WithExplicitBucketBoundaries(0.1, 0.5, 1, 2, 5, 10, 30, 60, 300, 3600))
	errs = append(errs, err)
	m.waits = w
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("otelmetrics: %w", err)
	}
	return m, nil
}

// Instrument sets bot's Events and Observe hooks to record into m. Hooks
// already set are kept: they are called first, then m records.
func (m *Metrics) Instrument(bot *fetch.Bot) {
	if prev := bot.Events; prev != nil {
		bot.Events = func(ev fetch.Event) { prev(ev); m.Event(ev) }
	} else {
		bot.Events = m.Event
	}
	if prev := bot.Observe; prev != nil {
		bot.Observe = func(ev politeness.Event) { prev(ev); m.Politeness(ev) }
	} else {
		bot.Observe = m.Politeness
	}
}

func (m *Metrics) host(h string) []attribute.KeyValue {
	if m.cfg.NoHostAttribute {
		return nil
	}
	return []attribute.KeyValue{attribute.String("host", h)}
}

// Event records one [fetch.Event] (the [fetch.Bot.Events] hook).
func (m *Metrics) Event(ev fetch.Event) {
	if m == nil || m.requests == nil {
		return
	}
	ctx := context.Background()
	switch ev.Kind {
	case fetch.EventSend:
		host := m.host(ev.Host)
		m.requests.Add(ctx, 1, metric.WithAttributes(append(host, attribute.Bool("robots", ev.Robots))...))
		if ev.Robots {
			m.robots.Add(ctx, 1, metric.WithAttributes(host...))
		}
		if ev.Signed {
			m.signed.Add(ctx, 1, metric.WithAttributes(host...))
		}
	case fetch.EventDone:
		m.bytes.Add(ctx, ev.Bytes, metric.WithAttributes(m.host(ev.Host)...))
	case fetch.EventGet:
		m.fetches.Add(ctx, 1, metric.WithAttributes(attribute.String("outcome", ev.Outcome.String())))
	}
}

// Politeness records one [politeness.Event] (the [fetch.Bot.Observe] or
// [politeness.Transport.Observe] hook): waits into the wait histogram,
// pauses, give-ups and breaker trips into the pause counter.
func (m *Metrics) Politeness(ev politeness.Event) {
	if m == nil || m.requests == nil {
		return
	}
	ctx := context.Background()
	switch ev.Kind {
	case politeness.EventWait:
		m.waits.Record(ctx, ev.Duration.Seconds(),
			metric.WithAttributes(append(m.host(ev.Host), attribute.String("reason", ev.Reason))...))
	case politeness.EventPause, politeness.EventGiveUp, politeness.EventBreakerTrip:
		m.pauses.Add(ctx, 1, metric.WithAttributes(append(m.host(ev.Host),
			attribute.String("kind", ev.Kind.String()), attribute.String("reason", ev.Reason))...))
	}
}
