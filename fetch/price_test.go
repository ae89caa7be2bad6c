package fetch

import (
	"encoding/base64"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

func TestParsePrice(t *testing.T) {
	good := []struct {
		in   string
		want Price
		str  string
	}{
		{"USD 0.01", Price{"USD", 10000}, "USD 0.01"}, // Cloudflare's example
		{"USD 1", Price{"USD", 1000000}, "USD 1"},
		{" EUR 12.5 ", Price{"EUR", 12500000}, "EUR 12.5"},
		{"USD 0.000001", Price{"USD", 1}, "USD 0.000001"},
		{"USD 0", Price{"USD", 0}, "USD 0"},
		{"ZAR 90.09", Price{"ZAR", 90090000}, "ZAR 90.09"},                                       // A, Z, 0 and 9 are in range
		{"USD 999999999999.999999", Price{"USD", 999999999999999999}, "USD 999999999999.999999"}, // 12 whole and 6 fractional digits
		{"USD 0.100000", Price{"USD", 100000}, "USD 0.1"},
	}
	for _, tc := range good {
		got, err := ParsePrice(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParsePrice(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
		if got.String() != tc.str {
			t.Errorf("String(%q) = %q, want %q", tc.in, got.String(), tc.str)
		}
	}
	for _, in := range []string{"", "0.01", "usd 0.01", "US 0.01", "USD", "USD -1", "USD 0.0000001", "USD 1e3",
		"USD .5", "USD 1.", "USD 9999999999999", "USD 0,01", "USD 1 2",
		"US@ 1", "US[ 1", "USDD 1", "USD 1/", "USD 1:", "USD 0./", "USD 0.:", "USD ", "USD 1234567890123.5"} {
		if _, err := ParsePrice(in); !errors.Is(err, ErrBadPrice) {
			t.Errorf("ParsePrice(%q) err = %v, want ErrBadPrice", in, err)
		}
	}
}

// x402Sized is a base64 x402 field of exactly n bytes (n a multiple of 4)
// accepting one payment of amount 10000.
func x402Sized(n int) string {
	doc := `{"accepts":[{"scheme":"exact","amount":"10000"}]}`
	raw := doc + strings.Repeat(" ", n/4*3-len(doc))
	return base64.StdEncoding.EncodeToString([]byte(raw))
}

func TestPaymentRequest(t *testing.T) {
	x402v1 := base64.StdEncoding.EncodeToString([]byte(`{"x402Version":1,"accepts":[{"scheme":"exact","asset":"0xUSDC","maxAmountRequired":"500","payTo":"0xdef"}]}`))
	x402 := base64.StdEncoding.EncodeToString([]byte(`{"x402Version":2,"accepts":[{"scheme":"exact","network":"base","asset":"0xUSDC","amount":"10000","payTo":"0xabc"}]}`))
	tests := []struct {
		name string
		h    map[string][]string
		ok   bool
		want func(PaymentRequest) bool
	}{
		{"none", map[string][]string{"Content-Type": {"text/html"}}, false, nil},
		{"crawler-price", map[string][]string{"Crawler-Price": {"USD 0.01"}}, true,
			func(p PaymentRequest) bool { return p.Scheme == "crawler-price" && p.Price == Price{"USD", 10000} }},
		{"bad crawler-price still a request", map[string][]string{"Crawler-Price": {"a lot"}}, true,
			func(p PaymentRequest) bool { return p.Scheme == "crawler-price" && p.Price.IsZero() }},
		{"crawler-error", map[string][]string{"Crawler-Price": {"USD 0.02"}, "Crawler-Error": {"InvalidCrawlerMaxPrice"}}, true,
			func(p PaymentRequest) bool { return p.Error == "InvalidCrawlerMaxPrice" }},
		{"x402", map[string][]string{"Payment-Required": {x402}}, true,
			func(p PaymentRequest) bool {
				return p.Scheme == "x402" && len(p.X402) == 1 && p.X402[0].Amount == "10000" && p.X402[0].Network == "base"
			}},
		{"x402 garbage", map[string][]string{"Payment-Required": {"%%%"}}, true,
			func(p PaymentRequest) bool { return p.Scheme == "x402" && p.X402 == nil }},
		{"crawler-error alone", map[string][]string{"Crawler-Error": {" InvalidCrawlerMaxPrice "}}, true,
			func(p PaymentRequest) bool { return p.Scheme == "" && p.Error == "InvalidCrawlerMaxPrice" }},
		{"crawler-price before x402", map[string][]string{"Crawler-Price": {"USD 0.01"}, "Payment-Required": {x402}}, true,
			func(p PaymentRequest) bool { return p.Scheme == "crawler-price" && p.X402 == nil }},
		{"x402 version 1", map[string][]string{"Payment-Required": {x402v1}}, true,
			func(p PaymentRequest) bool {
				return len(p.X402) == 1 && p.X402[0].MaxAmountRequired == "500" && p.X402[0].PayTo == "0xdef" && p.X402[0].Asset == "0xUSDC"
			}},
		{"x402 with surrounding space", map[string][]string{"Payment-Required": {" " + x402 + " "}}, true,
			func(p PaymentRequest) bool { return len(p.X402) == 1 && p.X402[0].Amount == "10000" }},
		{"x402 of exactly 16 KiB", map[string][]string{"Payment-Required": {x402Sized(16 << 10)}}, true,
			func(p PaymentRequest) bool { return len(p.X402) == 1 && p.X402[0].Amount == "10000" }},
		{"x402 one byte over 16 KiB", map[string][]string{"Payment-Required": {x402Sized(16<<10) + " "}}, true,
			func(p PaymentRequest) bool { return p.Scheme == "x402" && p.X402 == nil }},
	}
	for _, tc := range tests {
		got, ok := paymentRequest(tc.h)
		if ok != tc.ok || (tc.want != nil && !tc.want(got)) {
			t.Errorf("%s: paymentRequest = %+v, %v", tc.name, got, ok)
		}
	}
}

func FuzzParsePrice(f *testing.F) {
	f.Add("USD 0.01")
	f.Add("EUR 12.5")
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParsePrice(s)
		if err != nil {
			if !errors.Is(err, ErrBadPrice) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		again, err := ParsePrice(p.String())
		if err != nil || again != p {
			t.Errorf("%q -> %+v -> %q -> %+v, %v", s, p, p.String(), again, err)
		}
	})
}

// FuzzPaymentRequest: any crawler-price, PAYMENT-REQUIRED or crawler-error
// value is read without panic, and a 402 carrying it is a PaymentRequired
// error whose message stays bounded.
func FuzzPaymentRequest(f *testing.F) {
	f.Add("USD 0.01", "", "")
	f.Add("", "eyJhY2NlcHRzIjpbeyJzY2hlbWUiOiJleGFjdCJ9XX0=", "")
	f.Add("", "", "InvalidCrawlerMaxPrice")
	f.Add("12", "not base64", "x")
	f.Fuzz(func(t *testing.T, price, x402, crawlErr string) {
		h := http.Header{}
		for k, v := range map[string]string{"Crawler-Price": price, "Payment-Required": x402, "Crawler-Error": crawlErr} {
			if v != "" {
				h[k] = []string{v}
			}
		}
		pr, ok := paymentRequest(h)
		if ok != (price != "" || x402 != "" || crawlErr != "") {
			t.Fatalf("ok %v for %q %q %q", ok, price, x402, crawlErr)
		}
		if !pr.Price.IsZero() && pr.Price.Micros < 0 {
			t.Fatalf("negative price %+v", pr.Price)
		}
		u, _ := url.Parse("http://a.test/x")
		err := checkPayment(&http.Response{StatusCode: http.StatusPaymentRequired, Header: h, Request: &http.Request{URL: u}})
		if !errors.Is(err, ErrPaymentRequired) || OutcomeOf(err) != PaymentRequired {
			t.Fatalf("402: %v", err)
		}
		if len(err.Error()) > 300 {
			t.Fatalf("message of %d bytes", len(err.Error()))
		}
	})
}
