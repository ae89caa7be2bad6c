package fetch

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/goodbot-go/goodbot/internal/quote"
)

// Price is an amount of money in one currency, as pay-per-crawl fields write
// it ("USD 0.01"). Amounts are kept as integer millionths of the currency
// unit, so sums are exact.
//
// The zero Price is no price.
type Price struct {
	Currency string // ISO 4217 code, upper case, e.g. "USD"
	Micros   int64  // amount in millionths: 10000 is 0.01
}

// IsZero reports whether p is the zero Price.
func (p Price) IsZero() bool { return p == Price{} }

// String formats p as the fields do: "USD 0.01".
func (p Price) String() string {
	if p.IsZero() {
		return ""
	}
	whole, frac := p.Micros/1e6, p.Micros%1e6
	s := strconv.FormatInt(whole, 10)
	if frac != 0 {
		s += "." + strings.TrimRight(fmt.Sprintf("%06d", frac), "0")
	}
	return p.Currency + " " + s
}

// ErrBadPrice is returned for a price field that does not parse.
var ErrBadPrice = errors.New("fetch: invalid price")

// ParsePrice parses a pay-per-crawl price: a three-letter currency code, one
// space, and a non-negative decimal amount with at most six fractional digits
// ("USD 0.01"). Anything else is an error wrapping [ErrBadPrice].
func ParsePrice(s string) (Price, error) {
	bad := func() (Price, error) { return Price{}, fmt.Errorf("%w: %s", ErrBadPrice, quote.Short(s, 48)) }
	cur, amount, ok := strings.Cut(strings.TrimSpace(s), " ")
	amount = strings.TrimSpace(amount)
	if !ok || len(cur) != 3 || amount == "" {
		return bad()
	}
	for i := 0; i < 3; i++ {
		if c := cur[i]; c < 'A' || c > 'Z' {
			return bad()
		}
	}
	whole, frac, dot := strings.Cut(amount, ".")
	if whole == "" || (dot && frac == "") || len(frac) > 6 || len(whole) > 12 || !allDigits(whole) || !allDigits(frac) {
		return bad()
	}
	w, _ := strconv.ParseInt(whole, 10, 64)
	f := int64(0)
	if frac != "" {
		f, _ = strconv.ParseInt(frac+strings.Repeat("0", 6-len(frac)), 10, 64)
	}
	// At most 12 whole digits: sums over a run cannot overflow int64.
	return Price{Currency: cur, Micros: w*1e6 + f}, nil
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// PaymentRequest is what a 402 Payment Required answer asks for.
//
// It is plain data.
type PaymentRequest struct {
	// Scheme is "crawler-price" (Cloudflare pay per crawl) or "x402".
	Scheme string
	// Price is the price asked (crawler-price), when it parses.
	Price Price
	// X402 holds the decoded requirements of an x402 PAYMENT-REQUIRED
	// field (accepted schemes, networks, assets, amounts in the asset's
	// smallest unit), when it decodes.
	X402 []X402Requirement
	// Error is the crawler-error code the answer carried, if any (for
	// example "InvalidCrawlerMaxPrice").
	Error string
}

// X402Requirement is one accepted way to pay, from an x402
// PAYMENT-REQUIRED field.
type X402Requirement struct {
	Scheme  string `json:"scheme"`
	Network string `json:"network"`
	Asset   string `json:"asset"`
	Amount  string `json:"amount"`
	// MaxAmountRequired is x402 version 1's name for the amount.
	MaxAmountRequired string `json:"maxAmountRequired"`
	PayTo             string `json:"payTo"`
}

// maxX402Field bounds the PAYMENT-REQUIRED bytes decoded.
const maxX402Field = 16 << 10

// paymentRequest reads what a response asks to be paid: ok is false when it
// carries no pay-per-crawl field.
func paymentRequest(h map[string][]string) (PaymentRequest, bool) {
	var pr PaymentRequest
	if v := h["Crawler-Error"]; len(v) > 0 {
		pr.Error = strings.TrimSpace(v[0])
	}
	if v := h["Crawler-Price"]; len(v) > 0 {
		pr.Scheme = "crawler-price"
		pr.Price, _ = ParsePrice(v[0])
		return pr, true
	}
	if v := h["Payment-Required"]; len(v) > 0 {
		pr.Scheme = "x402"
		pr.X402 = decodeX402(v[0])
		return pr, true
	}
	return pr, pr.Error != ""
}

// decodeX402 decodes a base64 JSON x402 payment-requirements object; nil
// when it does not decode.
func decodeX402(v string) []X402Requirement {
	if len(v) > maxX402Field {
		return nil
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(v))
	if err != nil {
		return nil
	}
	var doc struct {
		Accepts []X402Requirement `json:"accepts"`
	}
	if json.Unmarshal(raw, &doc) != nil {
		return nil
	}
	return doc.Accepts
}
