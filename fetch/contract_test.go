package fetch_test

import (
	"errors"
	"net/http"
	"sync"
	"testing"

	"github.com/goodbot-go/goodbot/challenge"
	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/fetch/fetchtest"
)

// closeTracker is a base transport that records every response body it
// hands up and whether it was closed.
type closeTracker struct {
	base http.RoundTripper
	mu   sync.Mutex
	bods []*trackedBody
}

type trackedBody struct {
	http.Response // only Body is used
	path          string
	mu            sync.Mutex
	closed        bool
}

func (b *trackedBody) Read(p []byte) (int, error) { return b.Response.Body.Read(p) }
func (b *trackedBody) Close() error {
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
	return b.Response.Body.Close()
}

func (t *closeTracker) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	tb := &trackedBody{path: req.URL.Path}
	tb.Response.Body = resp.Body
	resp.Body = tb
	t.mu.Lock()
	t.bods = append(t.bods, tb)
	t.mu.Unlock()
	return resp, nil
}

// open returns the paths whose bodies were not closed.
func (t *closeTracker) open() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []string
	for _, b := range t.bods {
		b.mu.Lock()
		if !b.closed {
			out = append(out, b.path)
		}
		b.mu.Unlock()
	}
	return out
}

// The transport of Wrap (and New) answers a challenge page, a vendor's
// rate-limit page and, for an HTML-only bot, another content type with an
// error and no response, although the server answered: a client user never
// reads a challenge as content. The error is a typed *fetch.Error (with the
// *challenge.ChallengeError for challenges) that errors.As finds through the
// client's *url.Error, and the body of the answer is closed, never leaked.
func TestContract_WrapTurnsAnswersIntoTypedErrors(t *testing.T) {
	w, bot := loopback(t)
	site(w, "a.test", "").
		Handle("/c200", fetchtest.Challenge(http.StatusOK)).
		Handle("/c403", fetchtest.Challenge(http.StatusForbidden)).
		Handle("/pdf", fetchtest.Text("application/pdf", "%PDF-1.7")).
		Handle("/page", fetchtest.HTML("<p>ok</p>"))
	site(w, "l.test", "").Handle("/limit", fetchtest.RateLimitPage(http.StatusTooManyRequests)) // pauses l.test only
	w.Host("c.test").Handle("/robots.txt", fetchtest.Challenge(http.StatusOK)).Handle("/", fetchtest.HTML("c"))
	tr := &closeTracker{base: bot.Transport}
	bot.Transport = nil
	bot.HTMLOnly = true
	c, err := fetch.Wrap(bot, &http.Client{Transport: tr})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		url       string
		outcome   fetch.Outcome
		challenge bool
	}{
		{"http://a.test/c200", fetch.Blocked, true},
		{"http://a.test/c403", fetch.Blocked, true},
		{"http://l.test/limit", fetch.RateLimited, true},
		{"http://a.test/pdf", fetch.NotHTML, false},
		{"http://c.test/", fetch.Unreachable, true}, // robots.txt was a challenge: the site stays closed
	}
	for _, tt := range tests {
		resp, err := c.Get(tt.url)
		if resp != nil {
			resp.Body.Close()
			t.Errorf("%s: a response with the error", tt.url)
		}
		var fe *fetch.Error
		if !errors.As(err, &fe) || fe.Outcome != tt.outcome {
			t.Errorf("%s: err %v, want outcome %v", tt.url, err, tt.outcome)
			continue
		}
		var ce *challenge.ChallengeError
		if errors.As(err, &ce) != tt.challenge {
			t.Errorf("%s: *challenge.ChallengeError found %v, want %v", tt.url, !tt.challenge, tt.challenge)
		}
	}
	resp, err := c.Get("http://a.test/page") // the work happened, and a page still comes back
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if n := len(w.Requests()); n != 8 {
		t.Errorf("%d requests reached the web, want 8 (3 robots.txt, 5 pages)", n)
	}
	if len(tr.bods) != 8 {
		t.Errorf("%d bodies seen, want 8", len(tr.bods))
	}
	if open := tr.open(); len(open) != 0 {
		t.Errorf("bodies left open: %v", open)
	}
}
