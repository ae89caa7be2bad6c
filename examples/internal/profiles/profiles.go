// Package profiles holds the [fetch.Bot] profile of each example bot: the
// promises of its public page (../shared/BEHAVIOURS.md) written down as
// configuration. Every field set here names the promise it keeps; the
// examples README has the same table.
//
// Each constructor takes a scale: 1 in production; the demo passes a small
// factor so that hours of pacing play out in seconds. Only durations the bot
// chooses are scaled; values a site sends (Crawl-delay, Retry-After) are
// obeyed as sent, capped by the scaled caps.
package profiles

import (
	"crypto/ed25519"
	"github.com/goodbot-go/goodbot/signing/identity"
	"net/netip"
	"time"

	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/politeness"
	"github.com/goodbot-go/goodbot/robots"
	"github.com/goodbot-go/goodbot/signing"
)

// The identities of the bots (B1, H1, S1, D1).
const (
	BothyUA       = "BothyBot/1.0 (+https://bothy.tools/bot)"
	BothyAgent    = "https://bothy.tools"
	HootyUA       = "Mozilla/5.0 (compatible; HootyBot/1.0; +https://hooty.to/bot)"
	HootyFrom     = "bot@hooty.to"
	SofyaUA       = "SofyaBot/1.0 (+https://sofya.co/bot)"
	DirectoriesUA = "DirectoriesBot/1.0 (+https://directories.prosvita.io/bot; verification for {directory})"
	// DirectoriesVar is the User-Agent placeholder filled per request with the
	// directory whose listing is checked (fetch.WithUserAgentVar).
	DirectoriesVar   = "directory"
	DirectoriesAgent = "https://directories.prosvita.io"
)

// BothyOperator is what BothyBot's page states that its profile does not
// hold, for its Signature Agent Card.
func BothyOperator() identity.Operator {
	return identity.Operator{
		CardURL:         "https://bothy.tools/bot/signature-agent-card.json",
		AboutURL:        "https://bothy.tools/bot",
		Contacts:        []string{"mailto:hello@madebyhighland.com"},
		Trigger:         "crawler",
		Purpose:         "seo",
		TargetedContent: "links and page structure for search engine optimization audits",
	}
}

// DirectoriesOperator is what DirectoriesBot's page states that its
// profile does not hold, for its Signature Agent Card.
func DirectoriesOperator() identity.Operator {
	return identity.Operator{
		CardURL:         "https://directories.prosvita.io/bot/signature-agent-card.json",
		AboutURL:        "https://directories.prosvita.io/bot",
		Trigger:         "fetcher", // it visits only the pages directory operators listed
		Purpose:         "reciprocal link verification",
		TargetedContent: "the links on a listed page",
	}
}

// BothyKit is BothyBot's identity kit (signed key directory, Signature
// Agent Card) built from its profile; the readiness check, which runs as
// BothyBot, publishes the same.
func BothyKit(key ed25519.PrivateKey) (*identity.Kit, error) {
	return identity.New(Bothy(key, 1), BothyOperator(), time.Now())
}

// DirectoriesKit is DirectoriesBot's identity kit, built from its profile.
func DirectoriesKit(key ed25519.PrivateKey) (*identity.Kit, error) {
	return identity.New(Directories(key, nil, 1), DirectoriesOperator(), time.Now())
}

// KeyDirectory returns the key directory URL of a Signature-Agent origin.
func KeyDirectory(agent string) string {
	return agent + "/.well-known/http-message-signatures-directory"
}

// Scale multiplies d by f (f <= 0 means 1).
func Scale(d time.Duration, f float64) time.Duration {
	if f <= 0 || f == 1 || d <= 0 {
		return d
	}
	return max(time.Duration(float64(d)*f), time.Millisecond)
}

// ScaleTimeout scales a fetch time limit like Scale, but never below two
// seconds (or d, if shorter), so that a scaled-down demo on a busy machine
// does not turn slow answers into timeouts.
func ScaleTimeout(d time.Duration, f float64) time.Duration {
	return max(Scale(d, f), min(d, 2*time.Second))
}

// Bothy is BothyBot's profile, for its crawler and its readiness check.
func Bothy(key ed25519.PrivateKey, scale float64) fetch.Bot {
	return fetch.Bot{
		UserAgent:    BothyUA,                                    // B1
		Token:        "BothyBot",                                 // B3
		FormerTokens: []string{"CleatBot", "UnvarnishedCrawler"}, // B3: a block against any former name holds
		RobotsTTL:    Scale(24*time.Hour, scale),                 // B11: re-read at least daily
		Politeness: politeness.Policy{
			MinDelay:       Scale(2*time.Second, scale),  // B5: at least 2 s, one at a time
			MaxCrawlDelay:  Scale(60*time.Second, scale), // B4: Crawl-delay honoured up to 60 s
			MaxRetryAfter:  Scale(time.Hour, scale),      // B6: Retry-After up to an hour...
			RetryAfterMode: politeness.Clamp,             // ...then come back
			DefaultBackoff: Scale(time.Minute, scale),    // B6: one minute, doubling
			BreakerCoolOff: Scale(10*time.Minute, scale),
		}, // B6: afterwards more slowly: the default slow-down (MaxSlowdown 3)
		Signer:          &signing.Signer{Key: key, Agent: BothyAgent, Form: signing.BareURL}, // B2, B12 (robots.txt fetches signed too)
		RefuseDowngrade: true,                                                                // signed requests never leave TLS for plain http
		Limits:          fetch.Limits{Timeout: ScaleTimeout(30*time.Second, scale)},
		// Its page: the text powers a question-answering assistant (AI
		// input), not the training of foundation models. A page the site
		// refuses for AI input is not fetched (robots.txt) or not kept
		// (header): it would feed the assistant.
		Purposes:  []robots.Purpose{robots.AIInput},
		UsageMode: fetch.UsageRefuse,
	}
}

// Hooty is HootyBot's profile. maxWait is the longest Retry-After it accepts
// before giving up on a site (H4); zero means 10 minutes. maxPages bounds
// the pages fetched per site (H7); zero means no bound.
func Hooty(maxWait time.Duration, maxPages int, scale float64) fetch.Bot {
	if maxWait <= 0 {
		maxWait = 10 * time.Minute
	}
	return fetch.Bot{
		UserAgent: HootyUA,                 // H1
		From:      HootyFrom,               // H1
		Token:     "HootyBot",              // H1: the only name
		RobotsTTL: Scale(time.Hour, scale), // H9: changes take effect within an hour
		Politeness: politeness.Policy{
			MinDelay:         Scale(500*time.Millisecond, scale), // H3: at least 0.5 s, one page at a time
			MaxCrawlDelay:    Scale(time.Hour, scale),            // H3: Crawl-delay honoured (no low cap)
			MaxRetryAfter:    Scale(maxWait, scale),              // H4: the longest wait it accepts...
			RetryAfterMode:   politeness.GiveUp,                  // H4: ...beyond it, give up, never come early
			BreakerThreshold: 3,                                  // H6: 3 failures in a row: the host is down
			BreakerCoolOff:   Scale(time.Hour, scale),            // H6: and stays given up for the crawl
		},
		HTMLOnly:        true,     // H7: HTML pages only
		MaxPagesPerSite: maxPages, // H7: a bounded number of pages per site
		// Its page: a knowledge source for an assistant (AI input), set up by
		// whoever configures it, not necessarily the site's owner; never
		// training. A page the site refuses for AI input is not fetched or
		// not kept.
		Purposes:  []robots.Purpose{robots.AIInput},
		UsageMode: fetch.UsageRefuse,
		// H7: never forms (fetch sends only GET/HEAD), logins, carts or
		// checkouts: fetch.DefaultDeny and fetch.DefaultLogin apply (nil).
		Limits: fetch.Limits{Timeout: ScaleTimeout(30*time.Second, scale)},
	}
}

// Sofya is SofyaBot's profile. local, if valid, is the published source
// address every connection is made from (S2).
func Sofya(local netip.Addr, scale float64) fetch.Bot {
	return fetch.Bot{
		UserAgent: SofyaUA,                    // S1
		Token:     "SofyaBot",                 // S3: its group first, else *
		RobotsTTL: Scale(24*time.Hour, scale), // S10: picked up within 24 hours
		Politeness: politeness.Policy{
			MinDelay:          Scale(time.Second, scale),          // S5: at most one request a second...
			Jitter:            Scale(500*time.Millisecond, scale), // S5: ...with jitter
			MaxCrawlDelay:     Scale(time.Hour, scale),            // S4: Crawl-delay honoured
			RateLimitStatuses: []int{429, 503, 509},               // S6: 429, 503 and 509 slow the whole site
			BreakerCoolOff:    Scale(10*time.Minute, scale),
		},
		// Its page: it builds a search index. A page the site refuses for
		// search is not fetched or not indexed.
		Purposes:  []robots.Purpose{robots.Search},
		UsageMode: fetch.UsageRefuse,
		HTMLOnly:  true,  // S7: HTML over plain HTTP, no scripts
		Once:      true,  // S8: each URL once (with Fetched from the state file)
		LocalAddr: local, // S2
		Limits:    fetch.Limits{Timeout: ScaleTimeout(30*time.Second, scale)},
		// S9: 401/403 and redirects to login pages end as AuthRequired
		// (fetch.DefaultLogin).
	}
}

// Directories is DirectoriesBot's profile. blocked are the domains never
// fetched (D14).
func Directories(key ed25519.PrivateKey, blocked []string, scale float64) fetch.Bot {
	return fetch.Bot{
		UserAgent: DirectoriesUA,                                                                  // D1: the directory filled in per request
		Token:     "DirectoriesBot",                                                               // D7: its group wins over *
		RobotsTTL: Scale(24*time.Hour, scale),                                                     // D9: cached 24 hours
		Signer:    &signing.Signer{Key: key, Agent: DirectoriesAgent, Form: signing.QuotedString}, // D2
		// Signed requests never leave TLS for plain http: a listing page that
		// redirects https -> http ends as insecure_redirect.
		RefuseDowngrade: true,
		Limits: fetch.Limits{
			Timeout:      ScaleTimeout(15*time.Second, scale), // D11: 15 s for the whole fetch
			MaxRedirects: 3,                                   // D4, D11
			MaxBodyBytes: 5_000_000,                           // D11: stop reading after 5 MB
		},
		// D10: one connection per host: fetch's default base transport keeps
		// at most one per host, and the politeness gate one request per host.
		Politeness: politeness.Policy{
			MinDelay:       Scale(time.Second, scale), // polite default between checks on one host
			BreakerCoolOff: Scale(10*time.Minute, scale),
		},
		Deny:           []string{}, // D3: the exact URL entered, whatever its words
		BlockedDomains: blocked,    // D14
		// D5: no cookie jar (fetch's default).
		// No Purposes: it only checks that a page links to a listing and
		// keeps nothing of the page, so usage preferences do not apply to
		// it (UsageMode stays record: nothing is refused).
	}
}
