package fetch_test

import (
	"crypto/ed25519"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/fetch/fetchtest"
	"github.com/goodbot-go/goodbot/signing"
	"github.com/goodbot-go/goodbot/signing/signingtest"
)

// challenger answers status with Accept-Signature ask until a request
// carries a signature with nonce "n-42" that verifies, then 200; with
// always set it never stops asking.
func challenger(t *testing.T, status int, ask string, always bool) http.Handler {
	ks, err := signing.NewKeySet(signingtest.BothyKey().Public().(ed25519.PublicKey))
	if err != nil {
		t.Fatal(err)
	}
	v := &signing.Verifier{Keys: ks}
	var mu sync.Mutex
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		res, err := v.Verify(r)
		if !always && err == nil && res.Nonce == "n-42" {
			w.Write([]byte("<p>welcome</p>"))
			return
		}
		w.Header().Set("Accept-Signature", ask)
		if status == http.StatusTooManyRequests {
			w.Header().Set("Retry-After", "3") // the host pauses: the retry waits for it
		}
		w.WriteHeader(status)
	})
}

const askWBA = `sig1=("@method" "@authority" "@path" "signature-agent";key="sig1");nonce="n-42";tag="web-bot-auth"`

// TestAcceptSignature_OneSignedRetry: a 401, 403 or 429 with
// Accept-Signature for a web-bot-auth signature gets exactly one retry,
// signed with the requested nonce and components, queued like any request
// (no overlap, the 2 s gap kept); a second challenge, a component the bot
// cannot sign, another tag or a bot without a Signer end as auth_required
// after the one request, saying why.
func TestAcceptSignature_OneSignedRetry(t *testing.T) {
	for _, tc := range []struct {
		name     string
		status   int
		ask      string
		always   bool
		signer   bool
		want     fetch.Outcome
		requests int    // to the page
		reason   string // in the error
	}{
		{"401 answered", 401, askWBA, false, true, fetch.OK, 2, ""},
		{"403 answered", 403, askWBA, false, true, fetch.OK, 2, ""},
		{"429 answered", 429, askWBA, false, true, fetch.OK, 2, ""},
		{"asked twice", 401, askWBA, true, true, fetch.AuthRequired, 2, "asked again after the signed retry"},
		{"header cannot be signed", 401, `sig1=("@authority" "x-payment");nonce="n-42";tag="web-bot-auth"`, false, true, fetch.AuthRequired, 1, `"x-payment" cannot be signed: header absent`},
		{"another key", 403, `sig1=("@authority");keyid="not-ours";tag="web-bot-auth"`, false, true, fetch.AuthRequired, 1, "another key requested"},
		{"another tag", 401, `sig1=("@authority");nonce="n-42";tag="other"`, false, true, fetch.AuthRequired, 1, ""},
		{"no signer", 401, askWBA, false, false, fetch.AuthRequired, 1, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := fetchtest.New()
				defer w.Close()
				site(w, "a.test", "User-agent: *\nAllow: /\n").Handle("/page", challenger(t, tc.status, tc.ask, tc.always))
				bot := memBot(w)
				bot.Politeness.MinDelay = 2 * time.Second
				if tc.signer {
					bot.Signer = &signing.Signer{Key: signingtest.BothyKey(), Agent: "https://bothy.tools"}
				}
				f := mustFetcher(t, bot)
				start := time.Now()
				p, err := f.Get(t.Context(), "http://a.test/page")
				if p == nil || p.Outcome != tc.want {
					t.Fatalf("outcome %v, err %v, want %v", p.Outcome, err, tc.want)
				}
				if tc.reason != "" && (err == nil || !strings.Contains(err.Error(), tc.reason)) {
					t.Errorf("err %v, want it to say %q", err, tc.reason)
				}
				reqs := w.RequestsTo("a.test", "/page")
				if len(reqs) != tc.requests {
					t.Fatalf("%d requests to the page, want %d", len(reqs), tc.requests)
				}
				if tc.requests == 2 {
					in := reqs[1].Header.Get("Signature-Input")
					if !strings.Contains(in, `nonce="n-42"`) || !strings.HasPrefix(in, `sig1=("@method" "@authority" "@path" "signature-agent";key="sig1")`) {
						t.Errorf("retry Signature-Input %s", in)
					}
					want := 2 * time.Second
					if tc.status == http.StatusTooManyRequests {
						want = 3 * time.Second // Retry-After
					}
					if gap := reqs[1].Start.Sub(reqs[0].End); gap < want {
						t.Errorf("retry %v after the challenge, want at least %v", gap, want)
					}
					if d := time.Since(start); d < 4*time.Second {
						t.Errorf("took %v: robots, page and retry need two 2 s gaps", d)
					}
				}
				w.Check(t, fetchtest.NoOverlap(), fetchtest.MinGapOn("a.test", 2*time.Second))
			})
		})
	}
}

// The signed retry is part of the fetch: the time limit, counted from the
// first request, stops a retry the site never answers (fake time).
func TestAcceptSignature_RetryWithinTheTimeLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := fetchtest.New()
		defer w.Close()
		site(w, "a.test", "User-agent: *\nAllow: /\n").
			Handle("/page", fetchtest.Sequence(challenger(t, 401, askWBA, true), fetchtest.Hang()))
		bot := memBot(w)
		bot.Politeness.MinDelay = 2 * time.Second
		bot.Limits.Timeout = 15 * time.Second
		bot.Signer = &signing.Signer{Key: signingtest.BothyKey(), Agent: "https://bothy.tools"}
		f := mustFetcher(t, bot)
		get(t, f, "http://a.test/page", fetch.Timeout)
		reqs := w.RequestsTo("a.test", "/page")
		if len(reqs) != 2 || reqs[1].Header.Get("Signature-Input") == "" {
			t.Fatalf("%d requests to the page, want 2, the second signed", len(reqs))
		}
		if d := time.Since(reqs[0].Start); d != 15*time.Second {
			t.Errorf("Get ended %v after the first request, want 15s", d)
		}
		synctest.Wait()
	})
}
