package fetch_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/fetch/fetchtest"
	"github.com/goodbot-go/goodbot/politeness"
)

// plainClient is what another library builds around the bot's transport: an
// http.Client with neither CheckRedirect nor Timeout (net/http's own limit is
// 10 redirects).
func plainClient(t *testing.T, bot fetch.Bot) *http.Client {
	t.Helper()
	rt, err := fetch.NewTransport(bot)
	if err != nil {
		t.Fatalf("NewTransport: %v", err)
	}
	return &http.Client{Transport: rt}
}

// D4 through a client that does not limit redirects: the transport counts
// the hops itself. A chain one longer than the bot's limit ends as
// TooManyRedirects without its last target ever being asked for; a chain at
// the limit is followed to its end.
func TestTransport_D4_RedirectLimitWithoutCheckRedirect(t *testing.T) {
	for _, tt := range []struct {
		max    int // Limits.MaxRedirects
		follow int // redirects the bot follows
	}{{3, 3}, {0, 5}, {1, 1}, {-1, 0}, {8, 8}} {
		t.Run(fmt.Sprint(tt.max), func(t *testing.T) {
			w, bot := loopback(t)
			n := tt.follow
			site(w, "a.test", "").HandleChain("/over", n+1, fetchtest.HTML("end")).
				HandleChain("/at", n, fetchtest.HTML("end"))
			bot.Limits.MaxRedirects = tt.max
			c := plainClient(t, bot)

			resp, err := c.Get("http://a.test/over/0")
			if resp != nil {
				resp.Body.Close()
			}
			var fe *fetch.Error
			if !errors.As(err, &fe) || fe.Outcome != fetch.TooManyRedirects || !errors.Is(err, fetch.ErrTooManyRedirects) {
				t.Fatalf("%d redirects: err %v, want TooManyRedirects", n+1, err)
			}
			if fe.Outcome.String() != "too_many_redirects" {
				t.Errorf("outcome %q", fe.Outcome)
			}
			for i := 0; i <= n; i++ {
				if got := w.Count("a.test", fmt.Sprintf("/over/%d", i)); got != 1 {
					t.Errorf("hop %d asked %d times, want 1", i, got)
				}
			}
			w.Check(t, fetchtest.NotFetched("a.test", fmt.Sprintf("/over/%d", n+1)))

			resp, err = c.Get("http://a.test/at/0")
			if err != nil {
				t.Fatalf("%d redirects: %v", n, err)
			}
			resp.Body.Close()
			if got := resp.Request.URL.Path; got != fmt.Sprintf("/at/%d", n) {
				t.Errorf("%d redirects ended at %s", n, got)
			}
		})
	}
}

// The transport refuses an https-to-http redirect of a RefuseDowngrade bot
// by itself too; without RefuseDowngrade it follows it.
func TestTransport_RefuseDowngradeWithoutCheckRedirect(t *testing.T) {
	for _, refuse := range []bool{false, true} {
		w := fetchtest.New()
		site(w, "a.test", "").Handle("/p", fetchtest.Redirect("http://a.test/plain", 0)).
			Handle("/plain", fetchtest.HTML("plain"))
		bot := memBot(w)
		bot.Politeness = politeness.Policy{MinDelay: -1}
		bot.RefuseDowngrade = refuse
		resp, err := plainClient(t, bot).Get("https://a.test/p")
		if resp != nil {
			resp.Body.Close()
		}
		if w.Count("a.test", "/p") != 1 {
			t.Fatalf("refuse=%v: /p asked %d times", refuse, w.Count("a.test", "/p"))
		}
		if refuse != errors.Is(err, fetch.ErrInsecureRedirect) {
			t.Errorf("refuse=%v: err %v", refuse, err)
		}
		if n := w.Count("a.test", "/plain"); (n == 0) != refuse {
			t.Errorf("refuse=%v: /plain asked %d times", refuse, n)
		}
	}
}

// D11 through a client without Timeout: the transport's budget stops a
// trickling body, a slow redirect hop followed by a trickle, and a server
// that never answers at exactly the bot's 15 s (fake time).
func TestTransport_D11_DeadlineWithoutClientTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := fetchtest.New()
		defer w.Close()
		site(w, "a.test", "").
			Handle("/slow", fetchtest.Trickle(time.Second, strings.Repeat("x", 60))).
			Handle("/hop", fetchtest.Slow(5*time.Second, fetchtest.Redirect("/slow", 0))).
			Handle("/hang", fetchtest.Hang())
		bot := memBot(w)
		bot.Politeness.MinDelay = -1
		bot.Limits.Timeout = 15 * time.Second
		c := plainClient(t, bot)
		for _, tt := range []struct {
			path  string
			bytes int
		}{{"/slow", 15}, {"/hop", 10}, {"/hang", 0}} {
			start := time.Now()
			n, err := readAll(c, "http://a.test"+tt.path)
			if d := time.Since(start); d != 15*time.Second {
				t.Errorf("%s: stopped after %v, want 15s", tt.path, d)
			}
			var fe *fetch.Error
			if !errors.As(err, &fe) || fe.Outcome != fetch.Timeout {
				t.Errorf("%s: err %v, want Timeout", tt.path, err)
			}
			if n < tt.bytes-1 || n > tt.bytes {
				t.Errorf("%s: read %d bytes, want about %d", tt.path, n, tt.bytes)
			}
		}
		if w.Count("a.test", "/slow") != 2 || w.Count("a.test", "/hang") != 1 {
			t.Errorf("requests: /slow %d, /hang %d", w.Count("a.test", "/slow"), w.Count("a.test", "/hang"))
		}
		synctest.Wait()
	})
}

// readAll gets u with c and reads the body, returning the bytes read and the
// first error.
func readAll(c *http.Client, u string) (int, error) {
	resp, err := c.Get(u)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return len(b), err
}
