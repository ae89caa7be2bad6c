// Package identity generates what a Web Bot Auth bot publishes about itself
// from the same fetch.Bot profile that drives its behaviour, so that the
// published description cannot drift from what the bot does: the key
// directory (a signed JWKS), the Signature Agent Card of
// draft-meunier-webbotauth-registry (name, expected User-Agent, robots.txt
// product token and compliance, rate expectation, key directory URL...)
// and, when the operator lists the bot's address ranges, the IP range file
// of draft-illyes-webbotauth-jafar.
//
// The profile gives the User-Agent, the product token, the pacing policy
// and the key; the operator gives what no profile holds ([Operator]: where
// the card is served, the purpose, contacts...). [Kit.Handler] serves the
// three documents.
package identity

import (
	"crypto"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/signing"
)

// Media types of the documents Kit serves.
const (
	CardMediaType     = "application/json"
	IPRangesMediaType = "application/jafar+json;version=1.0"
)

// ErrProfile reports a profile or operator description that cannot produce
// the documents (no signer, no product token, a non-https URL...).
var ErrProfile = errors.New("identity: unusable profile")

func profileError(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrProfile}, args...)...)
}

// Operator is what the operator states about the bot that its profile does
// not hold. Plain data; only CardURL is required.
type Operator struct {
	// CardURL is the https URL the card is served at: its client_id.
	CardURL string
	// Name is a friendly name (client_name); empty means the product token.
	Name string
	// AboutURL is the page describing the bot (client_uri).
	AboutURL string
	// LogoURL is its logo (logo_uri).
	LogoURL string
	// Contacts are communication channels, e.g. "mailto:bot@example.com".
	Contacts []string
	// Trigger is "crawler" (autonomous) or "fetcher" (user-initiated).
	Trigger string
	// Purpose is the intended use of the data, e.g. "search".
	Purpose string
	// TargetedContent is the kind of data sought, free text.
	TargetedContent string
	// KnownURLs are predictable endpoints the bot requests ("/robots.txt").
	KnownURLs []string
	// IPRanges are the address ranges the bot crawls from; none means no
	// IP range file.
	IPRanges []netip.Prefix
	// IPsURL is the https URL the IP range file is served at (ips_uri);
	// required when IPRanges is set.
	IPsURL string
}

// Card is a Signature Agent Card (draft-meunier-webbotauth-registry):
// OAuth client metadata plus the web_bot_auth object. Plain data.
type Card struct {
	ClientID   string     `json:"client_id"`
	ClientName string     `json:"client_name,omitempty"`
	ClientURI  string     `json:"client_uri,omitempty"`
	LogoURI    string     `json:"logo_uri,omitempty"`
	Contacts   []string   `json:"contacts,omitempty"`
	JWKSURI    string     `json:"jwks_uri,omitempty"`
	WebBotAuth WebBotAuth `json:"web_bot_auth"`
}

// WebBotAuth is the card's web_bot_auth object. Plain data.
type WebBotAuth struct {
	ExpectedUserAgent string   `json:"expected-user-agent,omitempty"`
	ProductToken      string   `json:"rfc9309-product-token,omitempty"`
	RobotsCompliance  bool     `json:"rfc9309-compliance"`
	Trigger           string   `json:"trigger,omitempty"`
	Purpose           string   `json:"purpose,omitempty"`
	TargetedContent   string   `json:"targeted-content,omitempty"`
	RateControl       string   `json:"rate-control,omitempty"`
	RateExpectation   string   `json:"rate-expectation,omitempty"`
	KnownURLs         []string `json:"known-urls,omitempty"`
	IPsURI            string   `json:"ips_uri,omitempty"`
}

// IPRanges is an IP range file (draft-illyes-webbotauth-jafar). Plain data.
type IPRanges struct {
	CreationTime string   `json:"creationTime"`
	Prefixes     []Prefix `json:"prefixes"`
}

// Prefix is one range of an IP range file: exactly one of IPv4Prefix and
// IPv6Prefix is set.
type Prefix struct {
	IPv4Prefix string   `json:"ipv4Prefix,omitempty"`
	IPv6Prefix string   `json:"ipv6Prefix,omitempty"`
	Services   []string `json:"services,omitempty"`
}

// Kit holds the documents of one bot. Build it with [New]; it is read-only
// afterwards and safe for concurrent use.
type Kit struct {
	Directory *signing.Directory
	Card      Card
	// IPRanges is nil when the operator listed no ranges.
	IPRanges *IPRanges

	cardPath, ipsPath string
	cardJSON, ipsJSON []byte
}

// New builds the documents of the bot that profile describes; now dates the
// IP range file. The profile must have a Signer with a key and an https
// Agent; the card and the IP range file each need a path of their own for
// Handler to serve them at.
func New(profile fetch.Bot, op Operator, now time.Time) (*Kit, error) {
	if profile.Signer == nil || profile.Signer.Key == nil {
		return nil, profileError("the profile has no Signer key: nothing to publish")
	}
	token, err := profile.ProductToken()
	if err != nil {
		return nil, profileError("%v", err)
	}
	card, err := httpsURL("Operator.CardURL", op.CardURL)
	if err != nil {
		return nil, err
	}
	jwks, err := keyDirectoryURL(profile.Signer.Agent)
	if err != nil {
		return nil, err
	}
	k := &Kit{
		Directory: &signing.Directory{Keys: []crypto.Signer{profile.Signer.Key}},
		cardPath:  card.EscapedPath(),
	}
	if err := servable("Operator.CardURL", op.CardURL, k.cardPath, signing.DirectoryPath); err != nil {
		return nil, err
	}
	name := op.Name
	if name == "" {
		name = token
	}
	k.Card = Card{
		ClientID: op.CardURL, ClientName: name, ClientURI: op.AboutURL, LogoURI: op.LogoURL,
		Contacts: op.Contacts, JWKSURI: jwks,
		WebBotAuth: WebBotAuth{
			ExpectedUserAgent: expectedUserAgent(profile.UserAgent),
			ProductToken:      token,
			RobotsCompliance:  true, // a fetch.Bot cannot skip robots.txt
			Trigger:           op.Trigger,
			Purpose:           op.Purpose,
			TargetedContent:   op.TargetedContent,
			RateControl:       rateControl(profile.Politeness.RateLimitStatuses),
			RateExpectation:   rateExpectation(profile.Politeness.MinDelay),
			KnownURLs:         append([]string{"/robots.txt"}, op.KnownURLs...),
		},
	}
	if len(op.IPRanges) > 0 {
		ips, err := httpsURL("Operator.IPsURL", op.IPsURL)
		if err != nil {
			return nil, err
		}
		k.ipsPath = ips.EscapedPath()
		if err := servable("Operator.IPsURL", op.IPsURL, k.ipsPath, signing.DirectoryPath, k.cardPath); err != nil {
			return nil, err
		}
		k.Card.WebBotAuth.IPsURI = op.IPsURL
		k.IPRanges = &IPRanges{CreationTime: now.UTC().Format(time.RFC3339)}
		for _, p := range op.IPRanges {
			if !p.IsValid() {
				return nil, profileError("invalid IP range %v", p)
			}
			p = p.Masked()
			e := Prefix{Services: []string{token}}
			if p.Addr().Is4() {
				e.IPv4Prefix = p.String()
			} else {
				e.IPv6Prefix = p.String()
			}
			k.IPRanges.Prefixes = append(k.IPRanges.Prefixes, e)
		}
		if k.ipsJSON, err = json.MarshalIndent(k.IPRanges, "", "  "); err != nil {
			return nil, err
		}
	}
	if k.cardJSON, err = json.MarshalIndent(k.Card, "", "  "); err != nil {
		return nil, err
	}
	return k, nil
}

func httpsURL(field, s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil {
		return nil, profileError("%s %q is not an https URL", field, s)
	}
	return u, nil
}

// servable refuses a document path Handler cannot serve: none, or one that
// another document of the kit is served at.
func servable(field, s, path string, taken ...string) error {
	if path == "" {
		return profileError("%s %q has no path to serve the document at", field, s)
	}
	for _, t := range taken {
		if path == t {
			return profileError("%s %q: another document is served at %s", field, s, path)
		}
	}
	return nil
}

// keyDirectoryURL is the URL of the key set the agent names: an origin
// means its well-known directory.
func keyDirectoryURL(agent string) (string, error) {
	u, err := httpsURL("Signer.Agent", agent)
	if err != nil {
		return "", err
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = signing.DirectoryPath
	}
	return u.String(), nil
}

// expectedUserAgent is the profile's User-Agent with each "{name}"
// placeholder turned into the "*" wildcard the card allows.
func expectedUserAgent(ua string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(ua, '{')
		j := strings.IndexByte(ua[max(i, 0):], '}')
		if i < 0 || j < 0 {
			b.WriteString(ua)
			return b.String()
		}
		b.WriteString(ua[:i])
		b.WriteByte('*')
		ua = ua[i+j+1:]
	}
}

// rateControl says how a site slows the bot down: the statuses are
// politeness.Policy.RateLimitStatuses, nil meaning its default (429 and
// 503), empty meaning none.
func rateControl(statuses []int) string {
	s := "429, 503"
	if statuses != nil {
		var codes []string
		for _, c := range statuses {
			codes = append(codes, strconv.Itoa(c))
		}
		s = strings.Join(codes, ", ")
	}
	if s == "" {
		return "robots.txt Crawl-delay"
	}
	return "robots.txt Crawl-delay; " + s + " with Retry-After (pauses the whole host)"
}

// rateExpectation is the per-host pace the politeness policy enforces.
func rateExpectation(minDelay time.Duration) string {
	switch {
	case minDelay == 0:
		minDelay = time.Second // politeness.Policy's default
	case minDelay < 0:
		return "one request at a time per host"
	}
	rps := strconv.FormatFloat(float64(time.Second)/float64(minDelay), 'g', 3, 64)
	return "max=" + rps + "rps per host; one request at a time per host"
}

// Handler serves the key directory at its well-known path, the card at
// the path of Operator.CardURL and, when there are ranges, the IP range
// file at the path of Operator.IPsURL, as they were when New built them.
func (k *Kit) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle(signing.DirectoryPath, k.Directory)
	mux.Handle(k.cardPath, jsonDoc(CardMediaType, k.cardJSON))
	if k.IPRanges != nil {
		mux.Handle(k.ipsPath, jsonDoc(IPRangesMediaType, k.ipsJSON))
	}
	return mux
}

// CardJSON returns the card as New built it, indented.
func (k *Kit) CardJSON() []byte { return k.cardJSON }

// IPRangesJSON returns the IP range file as New built it, indented; nil
// without ranges.
func (k *Kit) IPRangesJSON() []byte { return k.ipsJSON }

func jsonDoc(mediaType string, body []byte) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "identity: method not allowed", http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Content-Type", mediaType)
		w.Header().Set("Cache-Control", "public, max-age=3600")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		if r.Method == http.MethodGet {
			_, _ = w.Write(body)
		}
	})
}
