package fetch_test

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/fetch/fetchtest"
	"github.com/goodbot-go/goodbot/signing"
)

// A 402 is never content: with crawler-price (Cloudflare pay per crawl),
// PAYMENT-REQUIRED (x402) or neither, the fetch ends as payment_required,
// typed, with what the site asked, no body, no validators kept, no retry,
// and (with Once) the URL's mark given back.
func TestPayment_402IsPaymentRequired(t *testing.T) {
	x402 := base64.StdEncoding.EncodeToString([]byte(`{"x402Version":2,"accepts":[{"scheme":"exact","network":"base","asset":"USDC","amount":"10000","payTo":"0xabc"}]}`))
	tests := []struct {
		name    string
		header  []string
		scheme  string
		price   string
		crawErr string
	}{
		{"crawler-price", []string{"crawler-price: USD 0.01"}, "crawler-price", "USD 0.01", ""},
		{"crawler-price with error", []string{"crawler-price: USD 1.50", "crawler-error: InvalidCrawlerMaxPrice"}, "crawler-price", "USD 1.5", "InvalidCrawlerMaxPrice"},
		{"x402", []string{"PAYMENT-REQUIRED: " + x402}, "x402", "", ""},
		{"bare 402", nil, "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := fetchtest.New()
				defer w.Close()
				h := http.Header{}
				for _, l := range tt.header {
					k, v, _ := strings.Cut(l, ": ")
					h.Add(k, v)
				}
				h.Set("ETag", `"v1"`)
				site(w, "a.test", "User-agent: *\nAllow: /\n").
					Handle("/sold", fetchtest.Page{Status: http.StatusPaymentRequired, Body: "<p>pay me</p>", Header: h})
				bot := memBot(w)
				bot.Once = true
				f := mustFetcher(t, bot)
				p := get(t, f, "http://a.test/sold", fetch.PaymentRequired)
				if n := len(w.RequestsTo("a.test", "/sold")); n != 1 {
					t.Fatalf("%d requests for /sold, want 1 (the fetch happened once, never retried)", n)
				}
				if p.Status != 402 || p.Body != nil || p.Outcome.String() != "payment_required" {
					t.Errorf("page status %d, body %q, outcome %q; want 402, nil, payment_required", p.Status, p.Body, p.Outcome)
				}
				if p.Payment.Scheme != tt.scheme || p.Payment.Price.String() != tt.price || p.Payment.Error != tt.crawErr {
					t.Errorf("payment %+v, want scheme %q price %q error %q", p.Payment, tt.scheme, tt.price, tt.crawErr)
				}
				if tt.scheme == "x402" && (len(p.Payment.X402) != 1 || p.Payment.X402[0].Amount != "10000") {
					t.Errorf("x402 requirements %+v", p.Payment.X402)
				}
				// Once: the page was not fetched, so it may be asked again.
				get(t, f, "http://a.test/sold", fetch.PaymentRequired)
				if n := len(w.RequestsTo("a.test", "/sold")); n != 2 {
					t.Errorf("%d requests for /sold after a second Get, want 2", n)
				}
				// No validators were kept from the 402.
				for _, r := range w.RequestsTo("a.test", "/sold") {
					if r.Header.Get("If-None-Match") != "" {
						t.Errorf("a 402's ETag was sent back")
					}
				}
			})
		})
	}
}

// Through http.Client the 402 is an error too: *url.Error wrapping the
// typed *fetch.Error with the price.
func TestPayment_ClientError(t *testing.T) {
	w, bot := loopback(t)
	site(w, "a.test", "").Handle("/sold", fetchtest.Status(402, "crawler-price: USD 0.25"))
	c := mustClient(t, bot)
	resp, err := c.Get("http://a.test/sold")
	if err == nil {
		resp.Body.Close()
		t.Fatalf("402 came back as a response (status %d)", resp.StatusCode)
	}
	if len(w.RequestsTo("a.test", "/sold")) != 1 {
		t.Fatal("the page was not requested")
	}
	var fe *fetch.Error
	if !errors.Is(err, fetch.ErrPaymentRequired) || !errors.As(err, &fe) || fetch.OutcomeOf(err) != fetch.PaymentRequired {
		t.Fatalf("err %v: not a payment_required *fetch.Error", err)
	}
	if pr, ok := fe.Payment(); !ok || pr.Price != (fetch.Price{Currency: "USD", Micros: 250000}) {
		t.Errorf("Payment() = %+v, %v", pr, ok)
	}
	if !strings.Contains(err.Error(), "USD 0.25") {
		t.Errorf("error %q does not say the price", err)
	}
}

// charging serves pages that charge what the request offered: the
// crawler-max-price it got, echoed as crawler-charged.
func charging(price string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("crawler-max-price") == "" {
			w.Header().Set("crawler-price", price)
			w.WriteHeader(http.StatusPaymentRequired)
			return
		}
		w.Header().Set("crawler-charged", price)
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte("<p>paid</p>"))
	})
}

// A paying bot sends crawler-max-price on every request, covered by its
// signature; it adds up crawler-charged per site and in total, and sends no
// request its budget cannot cover.
func TestPayment_PayingBot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := fetchtest.New()
		defer w.Close()
		site(w, "a.test", "User-agent: *\nAllow: /\n").Fallback(charging("USD 0.01"))
		site(w, "b.test", "User-agent: *\nAllow: /\n").Fallback(charging("USD 0.01"))
		w.VerifyWith(verifier(t))
		bot := memBot(w)
		bot.UserAgent = bothyUA
		bot.Signer = bothySigner(0)
		bot.Pay = &fetch.PayPolicy{MaxPrice: fetch.Price{Currency: "USD", Micros: 20000}, Budget: fetch.Price{Currency: "USD", Micros: 50000}}
		f := mustFetcher(t, bot)
		ctx := context.Background()
		for _, u := range []string{"http://a.test/1", "http://a.test/2", "http://b.test/1"} {
			getCtx(t, ctx, f, u, fetch.OK)
		}
		// Spent 0.03; 0.03 + 0.02 <= 0.05: one more may go.
		getCtx(t, ctx, f, "http://b.test/2", fetch.OK)
		// Spent 0.04; 0.04 + 0.02 > 0.05: stopped, unsent.
		p, err := f.Get(ctx, "http://a.test/3")
		if p == nil || p.Outcome != fetch.PaymentRequired || !errors.Is(err, fetch.ErrBudgetSpent) || !errors.Is(err, fetch.ErrPaymentRequired) {
			t.Fatalf("over budget: page %+v, err %v; want payment_required with ErrBudgetSpent", p, err)
		}
		if len(w.RequestsTo("a.test", "/3")) != 0 {
			t.Error("the request over budget was sent")
		}
		var fe *fetch.Error
		if !errors.As(err, &fe) {
			t.Fatalf("over budget: err %v is no *fetch.Error", err)
		}
		if pr, ok := fe.Payment(); ok {
			t.Errorf("over budget: Payment() = %+v, true; want false (no site asked)", pr)
		}
		pages := 0
		for _, r := range w.Requests() {
			if r.Path != "/robots.txt" {
				pages++
			}
			if got := r.Header.Get("crawler-max-price"); got != "USD 0.02" {
				t.Errorf("%s: crawler-max-price %q, want %q", r.URL(), got, "USD 0.02")
			}
			if !coversComponent(r.Header.Get("Signature-Input"), "crawler-max-price") {
				t.Errorf("%s: Signature-Input %q does not cover crawler-max-price", r.URL(), r.Header.Get("Signature-Input"))
			}
		}
		if pages != 4 {
			t.Errorf("%d page requests, want 4", pages)
		}
		w.Check(t, fetchtest.SignedOnArrival())
		s := f.Spent()
		if s.Total.String() != "USD 0.04" || s.Hosts["http://a.test:80"].String() != "USD 0.02" || s.Hosts["http://b.test:80"].String() != "USD 0.02" {
			t.Errorf("Spent() = %+v, want USD 0.04 in total, 0.02 on each host", s)
		}
	})
}

// coversComponent parses a Signature-Input value and reports whether its
// component list names comp.
func coversComponent(sigInput, comp string) bool {
	_, rest, ok := strings.Cut(sigInput, "=(")
	if !ok {
		return false
	}
	list, _, ok := strings.Cut(rest, ")")
	if !ok {
		return false
	}
	for _, c := range strings.Fields(list) {
		if c == `"`+comp+`"` {
			return true
		}
	}
	return false
}

// A bot that does not pay sends no crawler-max-price; Spent is zero.
func TestPayment_NoPayByDefault(t *testing.T) {
	w, bot := loopback(t)
	site(w, "a.test", "").Fallback(charging("USD 0.01"))
	f := mustFetcher(t, bot)
	get(t, f, "http://a.test/x", fetch.PaymentRequired)
	for _, r := range w.Requests() {
		if r.Header.Get("crawler-max-price") != "" {
			t.Errorf("%s carries crawler-max-price", r.URL())
		}
	}
	if s := f.Spent(); !s.Total.IsZero() || len(s.Hosts) != 0 {
		t.Errorf("Spent() = %+v for a bot that does not pay", s)
	}
}

func TestPayment_Config(t *testing.T) {
	usd := func(m int64) fetch.Price { return fetch.Price{Currency: "USD", Micros: m} }
	signer := bothySigner(0)
	tests := []struct {
		name   string
		signer *signing.Signer
		pay    fetch.PayPolicy
		ok     bool
	}{
		{"ok", signer, fetch.PayPolicy{MaxPrice: usd(10000), Budget: usd(1000000)}, true},
		{"no signer", nil, fetch.PayPolicy{MaxPrice: usd(10000), Budget: usd(1000000)}, false},
		{"zero max", signer, fetch.PayPolicy{Budget: usd(1000000)}, false},
		{"zero budget", signer, fetch.PayPolicy{MaxPrice: usd(10000)}, false},
		{"budget below max", signer, fetch.PayPolicy{MaxPrice: usd(10000), Budget: usd(9999)}, false},
		{"two currencies", signer, fetch.PayPolicy{MaxPrice: usd(10000), Budget: fetch.Price{Currency: "EUR", Micros: 1000000}}, false},
		{"no currency", signer, fetch.PayPolicy{MaxPrice: fetch.Price{Micros: 10000}, Budget: fetch.Price{Micros: 1000000}}, false},
		{"currency only", signer, fetch.PayPolicy{MaxPrice: fetch.Price{Currency: "USD"}, Budget: usd(1000000)}, false},
		{"negative max", signer, fetch.PayPolicy{MaxPrice: usd(-1), Budget: usd(1000000)}, false},
		{"max equals budget", signer, fetch.PayPolicy{MaxPrice: usd(10000), Budget: usd(10000)}, true},
	}
	for _, tt := range tests {
		pay := tt.pay
		_, err := fetch.NewFetcher(fetch.Bot{UserAgent: testUA, Signer: tt.signer, Pay: &pay})
		if (err == nil) != tt.ok {
			t.Errorf("%s: err %v, want ok %v", tt.name, err, tt.ok)
		}
	}
	if signer.Components != nil {
		t.Errorf("the bot's Signer was changed: %v", signer.Components)
	}
}

// What a PaymentError says: the scheme and price asked, and the site's
// crawler-error code quoted, cut to 64 bytes.
func TestPayment_ErrorText(t *testing.T) {
	code62 := strings.Repeat("E", 62)
	code63 := strings.Repeat("E", 63)
	tests := []struct {
		req  fetch.PaymentRequest
		want string
	}{
		{fetch.PaymentRequest{}, "fetch: payment required"},
		{fetch.PaymentRequest{Scheme: "x402"}, "fetch: payment required (x402)"},
		{fetch.PaymentRequest{Scheme: "crawler-price", Price: fetch.Price{Currency: "USD", Micros: 10000}},
			"fetch: payment required (crawler-price USD 0.01)"},
		{fetch.PaymentRequest{Scheme: "crawler-price", Error: "InvalidCrawlerMaxPrice"},
			`fetch: payment required (crawler-price), crawler-error "InvalidCrawlerMaxPrice"`},
		{fetch.PaymentRequest{Error: code62}, `fetch: payment required, crawler-error "` + code62 + `"`},
		{fetch.PaymentRequest{Error: code63}, `fetch: payment required, crawler-error "` + code63[:59] + `"...`},
	}
	for _, tt := range tests {
		err := &fetch.PaymentError{Request: tt.req}
		if got := err.Error(); got != tt.want {
			t.Errorf("Error() = %s\nwant      %s", got, tt.want)
		}
		if !errors.Is(err, fetch.ErrPaymentRequired) || errors.Is(err, fetch.ErrBudgetSpent) {
			t.Errorf("%s: errors.Is ErrPaymentRequired %v, ErrBudgetSpent %v; want true, false", tt.want,
				errors.Is(err, fetch.ErrPaymentRequired), errors.Is(err, fetch.ErrBudgetSpent))
		}
	}
}
