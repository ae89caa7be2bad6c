// Package politeness paces a bot's requests per host, as an
// [http.RoundTripper] that any Go program can put under its [http.Client]:
//
//	client := &http.Client{Transport: &politeness.Transport{
//		Policy: politeness.Policy{MinDelay: 2 * time.Second},
//	}}
//
// # What a site owner gets
//
//   - One request in flight per host (scheme, host and port; see [HostKey]).
//     Every spelling of one host is that host: case, trailing dots,
//     zero-padded or default ports, the IDNA full stops, full-width letters,
//     Unicode and punycode labels.
//     Callers for a busy host wait in arrival order; a caller whose context
//     ends leaves the queue at once with ctx.Err(). Waiting costs no goroutine
//     beyond the caller's own.
//   - A gap from the end of one response (body read to EOF or closed, or the
//     failure) to the start of the next request: MinDelay, or the host's
//     Crawl-delay up to MaxCrawlDelay when larger, plus optional jitter.
//   - Rate-limit answers (429 and 503 by default, 509 when configured) pause
//     the whole host for the Retry-After time (delta-seconds or HTTP-date) or a
//     doubling default backoff; a pause longer than MaxRetryAfter is clamped, or
//     the Transport gives up on the host ([GiveUp]). Afterwards the host is
//     paced more slowly, easing back after a run of successes.
//   - A host that stops answering is left alone for a cool-off (breaker).
//
// The rate-limit response itself is returned unchanged; the Transport never
// retries. Later requests wait, or fail fast with a [*HostError] wrapping
// [ErrRateLimited] when their deadline ends before the host reopens, or
// [ErrGaveUp] or [ErrHostDown]. These work with errors.Is and errors.As
// through the *url.Error that [http.Client] wraps them in.
//
// A caller that waits for many hosts at once can wait for a host's gap
// with [Transport.Wait] before it builds its request: the request is then
// sent at once by RoundTrip (which still keeps every rule), and the waiting
// caller holds no request meanwhile.
//
// [Policy] documents every rule and default. The zero [Transport] is polite:
// one second between requests, Crawl-delay honoured up to 60 s, pauses up to
// one hour, default backoff one minute.
//
// # Shared state
//
// Per-host state sits behind the [Gate] interface: a [MemoryGate] by default,
// or a gate shared by a fleet of processes (politeness/redisgate). A Gate only
// stores [State] and serialises access; every decision stays in the Transport.
// politeness/gatetest checks a Gate implementation against the contract.
//
// State for idle hosts is forgotten after [Policy.IdleTime], so a crawl over
// millions of hosts keeps memory bounded (about 200 bytes per tracked host in
// a MemoryGate).
//
// # Observability
//
// [Transport.Logger] (a *slog.Logger, nil = silent) and [Transport.Observe]
// report each wait, pause, give-up, breaker trip and refused request with host,
// reason and duration. [Transport.Hosts] is a snapshot of every host the
// Transport knows ([HostStatus]: requests queued, the one in flight, last
// status, the pause with its reason and end, slow-down level, breaker), for a
// status page or a metrics scrape.
//
// # Dependencies
//
// The RateLimit fields are Structured Field Lists (RFC 9651); they are parsed
// with github.com/dunglas/httpsfv (no dependencies of its own; the signing
// package uses it too), only when a response carries them.
//
// This package does not read robots.txt: the Crawl-delay comes from
// [Transport.CrawlDelay] (or [Transport.CrawlDelayFor]), typically backed
// by a robots cache.
//
// [HostKey] uses golang.org/x/net/idna (UTS #46 lookup mapping), the one
// dependency outside the standard library: without it the Unicode,
// full-width and punycode spellings of one host would be paced as different
// hosts.
package politeness
