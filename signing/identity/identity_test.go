package identity_test

import (
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/politeness"
	"github.com/goodbot-go/goodbot/signing"
	"github.com/goodbot-go/goodbot/signing/identity"
	"github.com/goodbot-go/goodbot/signing/signingtest"
)

func profile() fetch.Bot {
	return fetch.Bot{
		UserAgent:  "BothyBot/1.0 (+https://bothy.tools/bot)",
		Politeness: politeness.Policy{MinDelay: 2 * time.Second},
		Signer:     &signing.Signer{Key: signingtest.BothyKey(), Agent: "https://bothy.tools"},
	}
}

func operator() identity.Operator {
	return identity.Operator{
		CardURL: "https://bothy.tools/bot/card.json", AboutURL: "https://bothy.tools/bot",
		Contacts: []string{"mailto:bot@bothy.tools"}, Trigger: "crawler", Purpose: "link checking",
		IPRanges: []netip.Prefix{netip.MustParsePrefix("192.0.2.7/24"), netip.MustParsePrefix("2001:db8::/48")},
		IPsURL:   "https://bothy.tools/bot/ips.json",
	}
}

// TestKit_FromProfile: the card and the IP range file say what the profile
// does, in the drafts' field names.
func TestKit_FromProfile(t *testing.T) {
	now := time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC)
	k, err := identity.New(profile(), operator(), now)
	if err != nil {
		t.Fatal(err)
	}
	var card map[string]any
	if err := json.Unmarshal(k.CardJSON(), &card); err != nil {
		t.Fatal(err)
	}
	wba, _ := card["web_bot_auth"].(map[string]any)
	for field, want := range map[string]any{
		"client_id": "https://bothy.tools/bot/card.json", "client_name": "BothyBot", "client_uri": "https://bothy.tools/bot",
		"jwks_uri": "https://bothy.tools/.well-known/http-message-signatures-directory",
	} {
		if card[field] != want {
			t.Errorf("%s = %v, want %v", field, card[field], want)
		}
	}
	for field, want := range map[string]any{
		"expected-user-agent": "BothyBot/1.0 (+https://bothy.tools/bot)", "rfc9309-product-token": "BothyBot",
		"rfc9309-compliance": true, "trigger": "crawler", "purpose": "link checking",
		"rate-expectation": "max=0.5rps per host; one request at a time per host",
		"ips_uri":          "https://bothy.tools/bot/ips.json",
	} {
		if wba[field] != want {
			t.Errorf("web_bot_auth.%s = %v, want %v", field, wba[field], want)
		}
	}
	if rc, _ := wba["rate-control"].(string); !strings.Contains(rc, "429") || !strings.Contains(rc, "Crawl-delay") {
		t.Errorf("rate-control %q", rc)
	}
	want := `{
  "creationTime": "2026-12-01T06:00:00Z",
  "prefixes": [
    {
      "ipv4Prefix": "192.0.2.0/24",
      "services": [
        "BothyBot"
      ]
    },
    {
      "ipv6Prefix": "2001:db8::/48",
      "services": [
        "BothyBot"
      ]
    }
  ]
}`
	if got := string(k.IPRangesJSON()); got != want {
		t.Errorf("IP ranges\n%s\nwant\n%s", got, want)
	}

	// Without ranges there is no file and no ips_uri; a placeholder in
	// the User-Agent becomes the card's wildcard; the token comes from
	// Token when set.
	op := operator()
	op.IPRanges = nil
	p := profile()
	p.UserAgent = "Mozilla/5.0 (compatible; DirectoriesBot/1.0; verification for {directory})"
	p.Token = "DirectoriesBot"
	p.Politeness.MinDelay = 0
	k, err = identity.New(p, op, now)
	if err != nil {
		t.Fatal(err)
	}
	if k.IPRanges != nil || k.IPRangesJSON() != nil || k.Card.WebBotAuth.IPsURI != "" {
		t.Error("IP range file without ranges")
	}
	if k.Card.WebBotAuth.ExpectedUserAgent != "Mozilla/5.0 (compatible; DirectoriesBot/1.0; verification for *)" ||
		k.Card.WebBotAuth.ProductToken != "DirectoriesBot" || k.Card.WebBotAuth.RateExpectation != "max=1rps per host; one request at a time per host" {
		t.Errorf("card %+v", k.Card.WebBotAuth)
	}
}

// TestKit_Refuses: what cannot be published is refused with ErrProfile.
func TestKit_Refuses(t *testing.T) {
	for name, edit := range map[string]func(p *fetch.Bot, op *identity.Operator){
		"no signer":          func(p *fetch.Bot, op *identity.Operator) { p.Signer = nil },
		"no key":             func(p *fetch.Bot, op *identity.Operator) { p.Signer = &signing.Signer{Agent: "https://bothy.tools"} },
		"http agent":         func(p *fetch.Bot, op *identity.Operator) { p.Signer.Agent = "http://bothy.tools" },
		"http card":          func(p *fetch.Bot, op *identity.Operator) { op.CardURL = "http://bothy.tools/card" },
		"ftp card":           func(p *fetch.Bot, op *identity.Operator) { op.CardURL = "ftp://bothy.tools/card" },
		"card without host":  func(p *fetch.Bot, op *identity.Operator) { op.CardURL = "https:///bot/card.json" },
		"opaque card":        func(p *fetch.Bot, op *identity.Operator) { op.CardURL = "https:bothy.tools/card" },
		"http ips":           func(p *fetch.Bot, op *identity.Operator) { op.IPsURL = "http://bothy.tools/bot/ips.json" },
		"no card":            func(p *fetch.Bot, op *identity.Operator) { op.CardURL = "" },
		"ranges without url": func(p *fetch.Bot, op *identity.Operator) { op.IPsURL = "" },
		"browser UA":         func(p *fetch.Bot, op *identity.Operator) { p.UserAgent = "Mozilla/5.0 x" },
		"bad range":          func(p *fetch.Bot, op *identity.Operator) { op.IPRanges = []netip.Prefix{{}} },
		// Handler could not serve these (ServeMux refuses the pattern).
		"card without path":     func(p *fetch.Bot, op *identity.Operator) { op.CardURL = "https://bothy.tools" },
		"ips without path":      func(p *fetch.Bot, op *identity.Operator) { op.IPsURL = "https://bothy.tools" },
		"card at the directory": func(p *fetch.Bot, op *identity.Operator) { op.CardURL = "https://bothy.tools" + signing.DirectoryPath },
		"ips at the directory":  func(p *fetch.Bot, op *identity.Operator) { op.IPsURL = "https://bothy.tools" + signing.DirectoryPath },
		"ips at the card":       func(p *fetch.Bot, op *identity.Operator) { op.IPsURL = op.CardURL },
	} {
		p, op := profile(), operator()
		edit(&p, &op)
		if _, err := identity.New(p, op, time.Now()); !errors.Is(err, identity.ErrProfile) || !strings.HasPrefix(err.Error(), "identity: ") {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestKit_Handler serves the three documents; the directory lists the
// profile's key and proves it.
func TestKit_Handler(t *testing.T) {
	k, err := identity.New(profile(), operator(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	h := k.Handler()
	get := func(path string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "https://bothy.tools"+path, nil))
		return rec
	}
	for path, mediaType := range map[string]string{
		"/bot/card.json": "application/json", "/bot/ips.json": "application/jafar+json;version=1.0",
		signing.DirectoryPath: signing.DirectoryMediaType,
	} {
		rec := get(path)
		if rec.Code != 200 || rec.Header().Get("Content-Type") != mediaType || rec.Body.Len() == 0 {
			t.Errorf("%s: %d %q", path, rec.Code, rec.Header().Get("Content-Type"))
		}
	}
	if got := get("/bot/card.json").Body.String(); got != string(k.CardJSON()) {
		t.Error("served card differs")
	}
	ks, err := signing.ParseJWKS(get(signing.DirectoryPath).Body.Bytes())
	kid, _ := signing.Thumbprint(signingtest.BothyKey().Public().(ed25519.PublicKey))
	if err != nil || len(ks) != 1 || ks[kid] == nil {
		t.Fatalf("directory keys %v %v", ks, err)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "https://bothy.tools/bot/card.json", nil))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST card: %d", rec.Code)
	}
}

// TestKit_CardJSON: the whole card, every field the operator can state set,
// byte for byte as New publishes it (indented, in the draft's member
// names), with the rate-control of a profile that lists its own statuses.
func TestKit_CardJSON(t *testing.T) {
	p := profile()
	p.Politeness.RateLimitStatuses = []int{429, 503, 509}
	op := operator()
	op.Name = "Bothy link checker"
	op.LogoURL = "https://bothy.tools/logo.png"
	op.TargetedContent = "links"
	op.KnownURLs = []string{"/sitemap.xml"}
	k, err := identity.New(p, op, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	want := `{
  "client_id": "https://bothy.tools/bot/card.json",
  "client_name": "Bothy link checker",
  "client_uri": "https://bothy.tools/bot",
  "logo_uri": "https://bothy.tools/logo.png",
  "contacts": [
    "mailto:bot@bothy.tools"
  ],
  "jwks_uri": "https://bothy.tools/.well-known/http-message-signatures-directory",
  "web_bot_auth": {
    "expected-user-agent": "BothyBot/1.0 (+https://bothy.tools/bot)",
    "rfc9309-product-token": "BothyBot",
    "rfc9309-compliance": true,
    "trigger": "crawler",
    "purpose": "link checking",
    "targeted-content": "links",
    "rate-control": "robots.txt Crawl-delay; 429, 503, 509 with Retry-After (pauses the whole host)",
    "rate-expectation": "max=0.5rps per host; one request at a time per host",
    "known-urls": [
      "/robots.txt",
      "/sitemap.xml"
    ],
    "ips_uri": "https://bothy.tools/bot/ips.json"
  }
}`
	if got := string(k.CardJSON()); got != want {
		t.Errorf("card\n%s\nwant\n%s", got, want)
	}
}

// TestKit_CreationTime: the IP range file is dated in UTC to the second,
// whatever the zone and precision of now.
func TestKit_CreationTime(t *testing.T) {
	now := time.Date(2026, 12, 1, 8, 0, 0, 123456789, time.FixedZone("EET", 2*3600))
	k, err := identity.New(profile(), operator(), now)
	if err != nil {
		t.Fatal(err)
	}
	if got := k.IPRanges.CreationTime; got != "2026-12-01T06:00:00Z" {
		t.Errorf("creationTime %q, want 2026-12-01T06:00:00Z", got)
	}
}

// TestKit_HandlerWithoutRanges: without ranges the kit serves the card and
// the directory, and nothing at the path the IP range file would have had.
func TestKit_HandlerWithoutRanges(t *testing.T) {
	op := operator()
	op.IPRanges = nil
	k, err := identity.New(profile(), op, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	h := k.Handler()
	for path, code := range map[string]int{"/bot/card.json": 200, signing.DirectoryPath: 200, "/bot/ips.json": 404} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "https://bothy.tools"+path, nil))
		if rec.Code != code {
			t.Errorf("%s: %d, want %d", path, rec.Code, code)
		}
	}
}
