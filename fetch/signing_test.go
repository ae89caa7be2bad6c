package fetch_test

import (
	"crypto"
	"crypto/ed25519"
	"net/http"
	"net/netip"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/fetch/fetchtest"
	"github.com/goodbot-go/goodbot/signing"
	"github.com/goodbot-go/goodbot/signing/signingtest"
)

const bothyUA = "BothyBot/1.0 (+https://bothy.tools/bot)"

func bothySigner(expires time.Duration) *signing.Signer {
	return &signing.Signer{Key: signingtest.BothyKey(), Agent: "https://bothy.tools", Form: signing.BareURL, Expires: expires}
}

// verifier checks signatures against the Bothy test key with a tight skew,
// so a signature made before a wait shows up as expired.
func verifier(t *testing.T) func(*http.Request) error {
	ks, err := signing.NewKeySet(signingtest.BothyKey().Public().(ed25519.PublicKey))
	if err != nil {
		t.Fatal(err)
	}
	v := &signing.Verifier{Keys: ks, Skew: time.Millisecond}
	return func(r *http.Request) error {
		_, err := v.Verify(r)
		return err
	}
}

// B2, B12: every request, robots.txt included, is signed with
// Signature-Agent bothy.tools, and matches the site owner's WAF rule
// `user_agent contains "BothyBot" and signature-agent contains
// "bothy.tools"`; redirect hops to other hosts are signed for their own
// authority.
func TestSigning_B2_B12_EveryRequestSigned(t *testing.T) {
	w, bot := loopback(t)
	site(w, "a.test", "User-agent: *\nAllow: /\n").Handle("/move", fetchtest.Redirect("http://b.test/landing", 0))
	site(w, "b.test", "").Handle("/landing", fetchtest.HTML("l"))
	w.VerifyWith(verifier(t))
	bot.UserAgent = bothyUA
	bot.Signer = bothySigner(0)
	f := mustFetcher(t, bot)
	get(t, f, "http://a.test/", fetch.OK)
	get(t, f, "http://a.test/move", fetch.OK)
	w.Check(t, fetchtest.SignedOnArrival(), fetchtest.UserAgent(bothyUA))
	reqs := w.Requests()
	if len(reqs) != 5 {
		t.Errorf("%d requests, want 5 (2 robots.txt, 3 pages)", len(reqs))
	}
	for _, r := range reqs {
		if !(strings.Contains(r.Header.Get("User-Agent"), "BothyBot") && strings.Contains(r.Header.Get("Signature-Agent"), "bothy.tools")) {
			t.Errorf("%s does not match the WAF rule: UA %q, Signature-Agent %q", r.URL(), r.Header.Get("User-Agent"), r.Header.Get("Signature-Agent"))
		}
	}
}

var createdRE = regexp.MustCompile(`;created=(\d+)`)

// B4, chain order: after a 60 s Crawl-delay wait the request is signed when
// it leaves, so its signature (valid 10 s here) is still valid on arrival
// and its created time is the arrival time (fake time).
func TestSigning_60sCrawlDelayThenValidSignature(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := fetchtest.New()
		defer w.Close()
		site(w, "a.test", "User-agent: *\nCrawl-delay: 60\n").Fallback(fetchtest.HTML("p"))
		w.VerifyWith(verifier(t))
		bot := memBot(w)
		bot.UserAgent = bothyUA
		bot.Signer = bothySigner(10 * time.Second)
		f := mustFetcher(t, bot)
		start := time.Now()
		get(t, f, "http://a.test/one", fetch.OK)
		get(t, f, "http://a.test/two", fetch.OK)
		if d := time.Since(start); d != 120*time.Second {
			t.Errorf("took %v, want 120s (robots.txt, 60 s, page, 60 s, page)", d)
		}
		w.Check(t, fetchtest.SignedOnArrival(), fetchtest.MinGap(60*time.Second))
		for _, r := range w.Requests() {
			m := createdRE.FindStringSubmatch(r.Header.Get("Signature-Input"))
			if m == nil {
				t.Fatalf("%s: no created in %q", r.URL(), r.Header.Get("Signature-Input"))
			}
			created, _ := strconv.ParseInt(m[1], 10, 64)
			if created != r.Start.Unix() {
				t.Errorf("%s: created %d, arrived %d", r.URL(), created, r.Start.Unix())
			}
		}
	})
}

// B2: a site owner verifies the bot's requests against the JWKS it
// publishes at https://bothy.tools/.well-known/http-message-signatures-directory
// (fetched by the verifier, through the test web's TLS server).
func TestSigning_B2_VerifiedAgainstPublishedDirectory(t *testing.T) {
	w, bot := loopback(t)
	site(w, "a.test", "")
	w.Host("bothy.tools").Handle(signing.DirectoryPath, &signing.Directory{Keys: []crypto.Signer{signingtest.BothyKey()}})
	vtr := w.Transport()
	defer vtr.CloseIdleConnections()
	w.VerifyWith(fetchtest.Verify(&signing.Verifier{Client: &http.Client{Transport: vtr}, Agents: []string{"https://bothy.tools"}, AllowInternal: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}))
	bot.UserAgent = bothyUA
	bot.Signer = bothySigner(0)
	get(t, mustFetcher(t, bot), "http://a.test/", fetch.OK)
	if v := fetchtest.Violations(w.RequestsTo("a.test"), fetchtest.SignedOnArrival()); len(v) > 0 {
		t.Errorf("%q", v)
	}
	if w.Count("bothy.tools", signing.DirectoryPath) == 0 {
		t.Error("the verifier never fetched the key directory")
	}

	// An impostor with another key fails.
	w.Reset()
	bot.Signer = &signing.Signer{Key: signingtest.OtherKey(), Agent: "https://bothy.tools", Form: signing.BareURL}
	get(t, mustFetcher(t, bot), "http://a.test/", fetch.OK)
	if v := fetchtest.Violations(w.RequestsTo("a.test"), fetchtest.SignedOnArrival()); len(v) != 2 {
		t.Errorf("impostor: %d violations, want 2 (robots.txt and page)", len(v))
	}
}
