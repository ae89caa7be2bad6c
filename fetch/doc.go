// Package fetch composes the goodbot packages into a bot's HTTP client: one
// [Bot] profile in, an *http.Client (or a [Fetcher]) out, keeping every
// common promise (robots.txt first and obeyed, one request at a time per
// host, rate limits honoured, signatures, no cookies, GET and HEAD only,
// challenges never taken for content, typed errors).
//
//	bot := fetch.Bot{
//		UserAgent:    "ExampleBot/1.0 (+https://bot.example.com/)",
//		FormerTokens: []string{"OldExampleBot"},
//		Signer:       &signing.Signer{Key: key, Agent: "https://bot.example.com"},
//	}
//	f, err := fetch.NewFetcher(bot)
//	page, err := f.Get(ctx, "https://example.org/")
//	switch page.Outcome { case fetch.OK: ...; case fetch.Blocked: ... }
//
// # How a request travels
//
// Every request, and every redirect hop again, passes these layers, outermost
// first:
//
//  1. URL checks: GET or HEAD only; an absolute http(s) URL without
//     credentials; not on the domain block list; not a literal
//     internal address (loopback, private, link-local such as the cloud
//     metadata address 169.254.169.254, unspecified, multicast) unless
//     Bot.AllowInternal opens its range (InternalAddress); no login words
//     (a login page, even as a redirect target, ends as AuthRequired)
//     and no deny words (carts, checkouts, accounts). A redirect from
//     https to http ends as InsecureRedirect when Bot.RefuseDowngrade is
//     set.
//  2. The robots.txt gate ([robots.Cache]): robots.txt is fetched before the
//     first request to an origin and the URL is refused if it is disallowed
//     or if robots.txt is unreachable (5xx, timeout). robots.txt
//     requests themselves go through layers 3 to 6, with the bot's headers,
//     so they are paced and signed too.
//     A bot that declares purposes (Bot.Purposes) in [UsageRefuse] mode is
//     refused here too, before any request, when the cached robots.txt
//     refuses one of them ([robots.Robots.Usage]): UsageRefused.
//  3. Headers: User-Agent (fixed, or filled per request from
//     [WithUserAgentVar]), From, Accept; Cookie removed unless the bot has
//     a Jar; Authorization and Proxy-Authorization always removed (a bot
//     sends no credentials, jar or not); validators for conditional refetches;
//     Cache-Control: no-cache for GetOptions.Fresh or [WithFresh].
//  4. Politeness ([politeness.Transport]): waits for the host's turn, learns
//     from 429/503 and Crawl-delay.
//  5. Signing ([signing.Transport]): signs at send time, after the wait, so a
//     request that waited 60 s still carries a fresh signature.
//  6. Limits: the fetch's time budget starts when its first request leaves
//     and bounds every later hop and the body; the body is cut at the byte
//     limit and its connection closed.
//  7. The base transport (by default net/http with one connection per host
//     and an optional source address). A host's connection stays
//     idle for the longest gap pacing can put between two of its requests,
//     with no global cap on idle connections, so a crawl of thousands of
//     hosts opens one connection per host, not one per request; HTTP/2 is
//     used where the site offers it. An answer's header is read up to
//     Limits.MaxHeaderBytes (256 KiB, a browser's bound; past it the fetch
//     is TooLarge with ErrHeaderTooLarge). Its dialer checks the
//     address it connects to, after DNS, against Bot.AllowInternal, so a
//     name that resolves to an internal address ends as InternalAddress too.
//
// On the way back, above politeness (so that pacing sees the answer as it
// came), a challenge page ([challenge.Detector]) becomes a Blocked error (a
// RateLimited one for a vendor's rate-limit page such as Cloudflare's 1015:
// the site asks for "later", not "never") and, for HTML-only bots, another
// content type a NotHTML error (except for GetOptions.MachineFile or
// [WithMachineFile], for sitemaps and /llms.txt), and in [UsageRefuse] mode a response whose
// Content-Usage or tdm-reservation field refuses one of the bot's purposes
// a UsageRefused error; a 402 Payment Required answer (pay per crawl's
// crawler-price, x402's PAYMENT-REQUIRED, or neither) a PaymentRequired
// error carrying what the site asks ([PaymentError]; not retried); their
// bodies are never returned. A bot with a [PayPolicy] (Bot.Pay) sends
// crawler-max-price, signed, adds up crawler-charged ([Fetcher.Spent]) and
// sends no request its budget cannot cover (PaymentRequired with
// [ErrBudgetSpent]). In the default
// [UsageRecord] mode [Page.Usage] carries what robots.txt and the header
// say, combined most restrictively, and [Page.Rules] what the page's
// Robots-Tag / X-Robots-Tag fields and robots meta elements tell the bot
// (noindex, nofollow, noai...). Pacing
// pauses the host when such a page comes with a rate-limit status (429, 503);
// one served with another status gets the normal gap only.
//
// The redirect limit and the total time limit are the transport's own: it
// counts a fetch's hops (through each hop's Request.Response, as net/http's
// client sets it) and refuses the one past Limits.MaxRedirects, and its time
// budget runs across the hops and the body. So a client that another library
// builds around [NewTransport] keeps the bot's limits even without
// CheckRedirect or Timeout; [New]'s client also checks the limit in
// CheckRedirect, so that it returns the last redirect answer with the error.
//
// # Answers that come back as errors
//
// net/http asks a RoundTripper to return a nil error whenever it obtained a
// response, leaving statuses to the caller. This package's transport
// departs from that on purpose for two kinds of answer: a challenge page
// (Blocked or RateLimited, with the *challenge.ChallengeError) and, for an
// HTML-only bot, a content type other than HTML (NotHTML). They come back
// as an [*Error] with no response, the body read no further and closed. The
// classification stays in the transport, not only in [Fetcher.Get], so that
// every user of the client or of [NewTransport] (colly, a retrying client, a
// sitemap walker) is safe by default: a challenge page never reaches code
// that would take it for content, and the pacing above has seen it. Every
// other status, 4xx and 5xx included, is a response with a nil error, as
// net/http expects; [Fetcher.Get] classifies those into outcomes.
//
// # Retries
//
// Retry above the bot, never below it. A retrying client (such as
// hashicorp/go-retryablehttp) whose HTTPClient is the bot's client, or that
// wraps [NewTransport], sends each retry through the whole chain again: the
// retry waits for the host's turn and for the Retry-After or Crawl-delay the
// site asked for, whatever backoff the retrying client computed. Used as
// Bot.Transport, the same client retries inside one politeness turn, on its
// own schedule, and the host gets its requests at once (three within a few
// milliseconds for a 503 with Retry-After: 1). The chain cannot undo that,
// but it notices: when a Bot.Transport writes one request more than once
// for a turn (seen through an httptrace.ClientTrace on the request's
// context), it logs a Warn line with the URL and the count.
//
// # Errors
//
// Every refusal or failure from the chain is an [*Error] (inside the
// *url.Error of http.Client) whose Outcome says what happened;
// errors.Is(err, ErrDisallowed) and the like match it, and Unwrap reaches the
// cause from the packages below (robots.ErrDisallowed,
// challenge.ErrChallenged, politeness.ErrGaveUp...). Requests a polite bot
// never sends (POST, a URL with credentials, a User-Agent placeholder without
// a value) fail with ErrMethod, ErrBadURL or ErrUserAgent. A URL in an
// error or a log record never shows a password: it is redacted
// (url.URL.Redacted, or [Redact] for text that does not parse).
//
// # State
//
// robots.txt copies, validators and the fetched set sit behind the
// interfaces [robots.Store], [ValidatorStore] and [FetchedSet]: in memory by
// default, or all in one bbolt file with fetch/boltstate, so a bot restarted
// tomorrow still makes a one-request freshness check. Pacing state sits in a
// [politeness.Gate] (in memory, or Redis for a fleet).
//
// # Watching a bot
//
// [Fetcher.Hosts] is a snapshot per site: what politeness knows (queue,
// request in flight, last status, pause reason and end, slow-down level,
// breaker) and the age of the site's robots.txt copy. [Bot.Events] reports
// each request as it leaves and ends (robots.txt fetches marked, signatures
// noted, bytes counted) and each Get's outcome; with [Bot.Observe] (the
// pacing decisions) it is what fetch/otelmetrics turns into OpenTelemetry
// metrics, so this package does not depend on OpenTelemetry.
package fetch
