package fetch

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sync"

	"github.com/goodbot-go/goodbot/internal/quote"
	"github.com/goodbot-go/goodbot/politeness"
	"github.com/goodbot-go/goodbot/signing"
)

// PayPolicy lets a bot pay for pages that a site sells (pay per crawl). The
// bot then sends, on every request, a crawler-max-price field with MaxPrice
// (covered by its Web Bot Auth signature: a site only charges a bot it can
// identify), adds up what the sites say they charged (crawler-charged), and
// sends no request that could take the run past Budget.
//
// It is plain data; Bot.Pay nil (the default) pays nothing.
type PayPolicy struct {
	// MaxPrice is the most the bot pays for one page, e.g. USD 0.01.
	MaxPrice Price
	// Budget is the most the bot pays over the Fetcher's life. A request
	// is sent only while the amount spent plus MaxPrice (plus MaxPrice per
	// request already on its way) stays within Budget; the others end as
	// PaymentRequired with ErrBudgetSpent, unsent.
	Budget Price
}

// maxPriceField is the request field of a paying bot.
const maxPriceField = "crawler-max-price"

// ErrBudgetSpent is the cause of a PaymentRequired [*Error] for a request
// not sent because the bot's budget (PayPolicy.Budget) could not cover its
// maximum price.
var ErrBudgetSpent = errors.New("fetch: payment budget spent")

// PaymentError is the cause of a PaymentRequired [*Error] for a 402 answer:
// what the site asks (scheme, price, crawler-error code). A 402 without any
// pay-per-crawl field has a zero Request. It is plain data.
type PaymentError struct {
	Request PaymentRequest
}

func (e *PaymentError) Error() string {
	r := e.Request
	msg := "fetch: payment required"
	if r.Scheme != "" {
		msg += " (" + r.Scheme
		if !r.Price.IsZero() {
			msg += " " + r.Price.String()
		}
		msg += ")"
	}
	if r.Error != "" {
		msg += ", crawler-error " + quote.Short(r.Error, 64)
	}
	return msg
}

// Is reports whether target is ErrPaymentRequired.
func (e *PaymentError) Is(target error) bool { return target == ErrPaymentRequired }

// Payment returns what the site asked for behind a PaymentRequired error
// (ok false for other errors and for a request stopped by the budget).
func (e *Error) Payment() (PaymentRequest, bool) {
	var pe *PaymentError
	if errors.As(e.Err, &pe) {
		return pe.Request, true
	}
	return PaymentRequest{}, false
}

// checkPayment turns a 402 answer into a PaymentRequired error: a 402 is
// never content, priced or not.
func checkPayment(resp *http.Response) error {
	if resp.StatusCode != http.StatusPaymentRequired {
		return nil
	}
	pr, _ := paymentRequest(resp.Header)
	return &Error{Outcome: PaymentRequired, URL: resp.Request.URL.Redacted(), Status: resp.StatusCode,
		Err: &PaymentError{Request: pr}}
}

// Spending is what a paying bot has been charged: in total and per site
// (keyed as [politeness.HostKey] spells a site, "https://example.com:443").
// It is plain data.
type Spending struct {
	Total Price
	Hosts map[string]Price
}

// payer is the chain's pay-per-crawl state. It is safe for concurrent use.
type payer struct {
	policy PayPolicy
	vals   []string // the crawler-max-price value, len == cap

	mu       sync.Mutex
	spent    int64            // micros charged
	reserved int64            // MaxPrice micros for each request on its way
	hosts    map[string]int64 // micros charged by site
}

// newPayer checks p against bot and returns the chain's payer (nil for no
// policy) and the signer to use: a paying bot's signer must cover
// crawler-max-price, so a copy of bot.Signer that covers it is made when it
// does not.
func newPayer(bot *Bot) (*payer, *signing.Signer, error) {
	p := bot.Pay
	if p == nil {
		return nil, bot.Signer, nil
	}
	if bot.Signer == nil {
		return nil, nil, errors.New("fetch: Pay needs a Signer (sites charge only bots they can identify)")
	}
	if p.MaxPrice.IsZero() || p.Budget.IsZero() || p.MaxPrice.Currency == "" || p.MaxPrice.Currency != p.Budget.Currency ||
		p.MaxPrice.Micros <= 0 || p.Budget.Micros < p.MaxPrice.Micros {
		return nil, nil, fmt.Errorf("fetch: invalid Pay: max price %q, budget %q (one currency, 0 < max price <= budget)",
			p.MaxPrice, p.Budget)
	}
	s := bot.Signer
	comps := s.Components
	if comps == nil {
		comps = signing.DefaultComponents()
	}
	if !slices.Contains(comps, maxPriceField) {
		s = &signing.Signer{Key: s.Key, Agent: s.Agent, Form: s.Form, Label: s.Label, Expires: s.Expires, Nonce: s.Nonce,
			Components: append(slices.Clip(comps), maxPriceField)}
	}
	return &payer{policy: *p, vals: []string{p.MaxPrice.String()}[:1:1], hosts: map[string]int64{}}, s, nil
}

// reserve sets the crawler-max-price field on out and holds MaxPrice of the
// budget for it, or refuses the request when the budget cannot cover it.
// The caller must call settle with the answer (nil if none).
func (p *payer) reserve(out *http.Request) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.refusal(out.URL); err != nil {
		return err
	}
	p.reserved += p.policy.MaxPrice.Micros
	out.Header[http.CanonicalHeaderKey(maxPriceField)] = p.vals
	return nil
}

// check refuses u, before anything is sent for it (robots.txt included),
// when the budget cannot cover one more request.
func (p *payer) check(u *url.URL) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.refusal(u)
}

// refusal is the PaymentRequired error for u when the budget cannot cover
// one more request, nil when it can. p.mu must be held.
func (p *payer) refusal(u *url.URL) error {
	if p.spent+p.reserved+p.policy.MaxPrice.Micros <= p.policy.Budget.Micros {
		return nil
	}
	return &Error{Outcome: PaymentRequired, URL: u.Redacted(),
		Err: fmt.Errorf("%w: spent %s of %s", ErrBudgetSpent,
			Price{Currency: p.policy.Budget.Currency, Micros: p.spent}, p.policy.Budget)}
}

// send sends out through the inner chain; a paying bot's request carries
// crawler-max-price and is counted against the budget.
func (c *chain) send(out *http.Request) (*http.Response, error) {
	if c.pay == nil {
		return c.inner.RoundTrip(out)
	}
	if err := c.pay.reserve(out); err != nil {
		closeBody(out)
		return nil, err
	}
	resp, err := c.inner.RoundTrip(out)
	c.pay.settle(out.URL, resp, c.log.Warn)
	return resp, err
}

// settle gives back the reservation of one request and adds what its answer
// says was charged. A charge that does not parse, or in another currency,
// is counted as the whole MaxPrice (the bot cannot tell it was less).
func (p *payer) settle(u *url.URL, resp *http.Response, log func(msg string, args ...any)) {
	var charged int64
	if resp != nil {
		if v := resp.Header.Get("Crawler-Charged"); v != "" {
			c, err := ParsePrice(v)
			if err != nil || c.Currency != p.policy.MaxPrice.Currency {
				log("fetch: crawler-charged not understood, counted as the max price", "url", u.Redacted(), "value", quote.Short(v, 48))
				c = p.policy.MaxPrice
			}
			charged = c.Micros
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.reserved -= p.policy.MaxPrice.Micros
	if charged > 0 {
		p.spent += charged
		p.hosts[politeness.HostKey(u)] += charged
	}
}

// spending returns a copy of what was charged.
func (p *payer) spending() Spending {
	p.mu.Lock()
	defer p.mu.Unlock()
	cur := p.policy.Budget.Currency
	s := Spending{Total: Price{Currency: cur, Micros: p.spent}, Hosts: make(map[string]Price, len(p.hosts))}
	for h, m := range p.hosts {
		s.Hosts[h] = Price{Currency: cur, Micros: m}
	}
	return s
}

// Spent returns what the sites charged the bot (Bot.Pay) so far, in total
// and per site; the zero Spending for a bot that does not pay. It is safe
// to call while Gets run.
func (f *Fetcher) Spent() Spending {
	if f == nil || f.chain == nil || f.chain.pay == nil {
		return Spending{}
	}
	return f.chain.pay.spending()
}
