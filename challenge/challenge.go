package challenge

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"

	"github.com/goodbot-go/goodbot/internal/iox"
)

// MaxBytes is the number of body bytes Detect examines: at most the first
// 64 KiB. Measured on the real challenge pages in the project's samples, the
// deepest marker a verdict needs sits at about 12 KB (a 2019 Cloudflare
// interstitial, TestSamples_MarkerDepth), and whole challenge pages run to
// about 28 KB (DDoS-Guard), so 64 KiB leaves a wide margin for heavier
// future pages while bounding the work per response. Bytes beyond MaxBytes
// are never looked at: a marker deep in a long page cannot flag it.
const MaxBytes = 64 << 10

// Kind is the kind of a blocking response. The zero value means "not blocked"
// and its String is "".
//
// A Kind is a plain value, safe to share.
type Kind int

// The kinds of blocking response.
const (
	None        Kind = iota
	JSChallenge      // a JavaScript, proof-of-work or managed challenge ("js_challenge")
	Captcha          // a CAPTCHA a human has to solve ("captcha")
	Block            // a hard block or access-denied page ("block")
	RateLimit        // a vendor's rate-limit page ("rate_limit")
)

var kindNames = [...]string{"", "js_challenge", "captcha", "block", "rate_limit"}

// String returns "js_challenge", "captcha", "block", "rate_limit", or "" for
// None and unknown values.
func (k Kind) String() string {
	if k < 0 || int(k) >= len(kindNames) {
		return ""
	}
	return kindNames[k]
}

// ParseKind is the inverse of [Kind.String]; it returns false for an unknown
// name.
func ParseKind(s string) (Kind, bool) {
	for i, n := range kindNames {
		if n == s {
			return Kind(i), true
		}
	}
	return None, false
}

// Verdict is the result of [Detect]. The zero value means "not a challenge".
//
// It is plain data, returned by value; Evidence is never shared between
// verdicts.
type Verdict struct {
	Blocked  bool     // the response is a challenge, CAPTCHA, block or vendor rate-limit page, not content
	Vendor   string   // lower-case vendor name ("cloudflare", "akamai", …), "" when unknown
	Kind     Kind     // None when not Blocked
	Rule     string   // name of the rule that matched
	Evidence []string // what matched: "status:403", "header:cf-mitigated: challenge", "body:_cf_chl_opt"
}

// String formats v for logs: "not blocked" or "cloudflare js_challenge".
func (v Verdict) String() string {
	if !v.Blocked {
		return "not blocked"
	}
	vendor := v.Vendor
	if vendor == "" {
		vendor = "unknown vendor"
	}
	return vendor + " " + v.Kind.String()
}

// std is the compiled default table; it is never modified after init.
var std = compile(defaultRules())

// Detect reports whether a response is a bot challenge, CAPTCHA, block or
// vendor rate-limit page rather than content, using the default rules
// ([DefaultRules]). It looks at the status (0 means unknown: rules that
// need a status do not apply), the header (keys in canonical form, as
// net/http stores them; header may be nil) and body[:min(len(body),
// MaxBytes)] only, and never modifies its arguments. Body markers count
// only where the page uses them, not where it quotes them (see the package
// documentation). A 402 that carries a price (a Crawler-Price header, pay
// per crawl, or an x402 Payment-Required header) is never a challenge,
// whatever the rules. A negative verdict does not allocate. It is safe for
// concurrent use.
func Detect(status int, header http.Header, body []byte) Verdict {
	return std.detect(status, header, body)
}

// Detector applies a rule table. The zero value uses [DefaultRules]. Set
// Rules before the first call to Detect and do not modify them afterwards:
// the table is compiled once, on first use. A Detector is safe for
// concurrent use and must not be copied after first use.
type Detector struct {
	// Rules are tried in order; the first that matches gives the verdict.
	// nil means DefaultRules(). Rules that fail [Rule.Validate] never match.
	Rules Rules

	once sync.Once
	c    *compiled
}

// Detect is [Detect] with d's rules.
func (d *Detector) Detect(status int, header http.Header, body []byte) Verdict {
	return d.table().detect(status, header, body)
}

func (d *Detector) table() *compiled {
	d.once.Do(func() {
		if d.Rules == nil {
			d.c = std
		} else {
			d.c = compile(d.Rules)
		}
	})
	return d.c
}

// Sniff reads at most [MaxBytes] of resp.Body, runs [Detect] on them with
// resp.StatusCode and resp.Header, and puts the body back: afterwards
// resp.Body yields the whole body again from its first byte (the bytes
// read, then the unread rest), and closing it closes the original body. A
// read error is returned (wrapped) together with the verdict on the bytes
// that were read, and the restored body returns the same error after those
// bytes. The body must already be decoded (as http.Client does for gzip
// unless DisableCompression is set).
func Sniff(resp *http.Response) (Verdict, error) {
	return sniff(resp, std)
}

// Sniff is [Sniff] with d's rules.
func (d *Detector) Sniff(resp *http.Response) (Verdict, error) {
	return sniff(resp, d.table())
}

func sniff(resp *http.Response, c *compiled) (Verdict, error) {
	if resp == nil {
		return Verdict{}, errors.New("challenge: nil response")
	}
	if resp.Body == nil || resp.Body == http.NoBody {
		return c.detect(resp.StatusCode, resp.Header, nil), nil
	}
	// Size the buffer by Content-Length when it is known and small, but
	// never trust it: a full buffer grows to MaxBytes.
	size := MaxBytes
	if cl := resp.ContentLength; cl >= 0 && cl < MaxBytes {
		size = int(cl) + 1
	}
	buf := make([]byte, size)
	n, err := iox.ReadFull(resp.Body, buf)
	if err == nil && size < MaxBytes {
		buf = append(buf, make([]byte, MaxBytes-size)...)
		var m int
		m, err = iox.ReadFull(resp.Body, buf[size:])
		n += m
	}
	buf = buf[:n]
	if err == io.EOF {
		err = nil // the body ended; a body cut short (io.ErrUnexpectedEOF) did not
	}
	rest := io.Reader(resp.Body)
	if err != nil {
		rest = errReader{err}
	}
	resp.Body = &replayBody{Reader: io.MultiReader(bytes.NewReader(buf), rest), closer: resp.Body}
	v := c.detect(resp.StatusCode, resp.Header, buf)
	if err != nil {
		return v, fmt.Errorf("challenge: reading body: %w", err)
	}
	return v, nil
}

type replayBody struct {
	io.Reader
	closer io.Closer
}

func (b *replayBody) Close() error { return b.closer.Close() }

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

// ErrChallenged is the sentinel for responses that were a bot challenge,
// CAPTCHA, block or vendor rate-limit page. errors.Is(err, ErrChallenged)
// holds for every *ChallengeError, also through *url.Error.
var ErrChallenged = errors.New("challenge: response is a bot challenge or block page")

// ChallengeError reports that the response for URL was not content but a
// challenge; fetch returns it so that the page is recorded as blocked and
// never stored.
//
// It is plain data; its zero value (no URL, a zero Verdict) describes
// nothing, and still matches [ErrChallenged].
type ChallengeError struct {
	URL     string
	Verdict Verdict
}

func (e *ChallengeError) Error() string {
	return "challenge: " + e.URL + ": " + e.Verdict.String()
}

// Unwrap returns ErrChallenged.
func (e *ChallengeError) Unwrap() error { return ErrChallenged }

// statusLabel formats an evidence label for a status code.
func statusLabel(code int) string { return "status:" + strconv.Itoa(code) }
