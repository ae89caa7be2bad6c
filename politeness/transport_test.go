package politeness_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"
	"golang.org/x/time/rate"

	"github.com/goodbot-go/goodbot/politeness"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const hostA = "https://a.example"

func newClient(w *fakeWeb, p politeness.Policy) (*http.Client, *politeness.Transport) {
	tr := &politeness.Transport{Base: w, Policy: p}
	return &http.Client{Transport: tr}, tr
}

// inParallel runs n requests to url from n goroutines and waits for them.
func inParallel(t *testing.T, c *http.Client, n int, url string) {
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { mustGet(t, c, fmt.Sprintf("%s/p%d", url, i)) })
	}
	wg.Wait()
}

func TestTransport_C3_B5_H3_MinDelayFloor(t *testing.T) {
	for _, d := range []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second} {
		t.Run(d.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := &fakeWeb{answer: func(string, int) reply { return reply{status: 200, latency: 30 * time.Millisecond} }}
				c, _ := newClient(w, politeness.Policy{MinDelay: d})
				start := time.Now()
				inParallel(t, c, 6, hostA)
				check(t, w, constGap(d))
				// Paced, not slower than needed: 6 requests = 5 gaps + 6 latencies.
				if got, want := time.Since(start), 5*d+6*30*time.Millisecond; got != want {
					t.Errorf("6 requests took %v, want exactly %v", got, want)
				}
			})
		})
	}
}

func TestTransport_ZeroValueIsPolite(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := &fakeWeb{}
		tr := &politeness.Transport{Base: w}
		c := &http.Client{Transport: tr}
		inParallel(t, c, 3, hostA)
		check(t, w, constGap(time.Second)) // default MinDelay
	})
}

// CrawlDelayFor, when set, is asked instead of CrawlDelay, with the request
// whose turn ends (its context included), after each answer and failure.
func TestTransport_CrawlDelayFor(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := &fakeWeb{}
		type key struct{}
		var asked []string
		tr := &politeness.Transport{
			Base:   w,
			Policy: politeness.Policy{MinDelay: time.Second},
			CrawlDelay: func(*url.URL) (time.Duration, bool) {
				t.Error("CrawlDelay asked while CrawlDelayFor is set")
				return 0, false
			},
			CrawlDelayFor: func(req *http.Request) (time.Duration, bool) {
				v, _ := req.Context().Value(key{}).(string)
				asked = append(asked, req.URL.Path+" "+v)
				return 5 * time.Second, true
			},
		}
		c := &http.Client{Transport: tr}
		for i := range 3 {
			ctx := context.WithValue(context.Background(), key{}, fmt.Sprint("ctx", i))
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("%s/p%d", hostA, i), nil)
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
		if got, want := strings.Join(asked, ", "), "/p0 ctx0, /p1 ctx1, /p2 ctx2"; got != want {
			t.Errorf("asked for %s, want %s", got, want)
		}
		gs := gaps(w, hostA)
		if len(gs) != 2 {
			t.Fatalf("gaps %v, want 2", gs)
		}
		for _, g := range gs {
			if g != 5*time.Second {
				t.Errorf("gap %v, want the 5 s CrawlDelayFor gave", g)
			}
		}
	})
}

func TestTransport_B4_H3_S4_CrawlDelay(t *testing.T) {
	tests := []struct {
		name     string
		min      time.Duration
		crawl    time.Duration
		maxCrawl time.Duration
		want     time.Duration
	}{
		{"above floor", 2 * time.Second, 10 * time.Second, 0, 10 * time.Second},
		{"below floor", 500 * time.Millisecond, 200 * time.Millisecond, 0, 500 * time.Millisecond},
		{"capped at 60s", time.Second, 120 * time.Second, 0, 60 * time.Second},
		{"exactly 60s", time.Second, 60 * time.Second, 0, 60 * time.Second},
		{"custom cap", time.Second, 120 * time.Second, 30 * time.Second, 30 * time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := &fakeWeb{}
				var asked []string
				tr := &politeness.Transport{
					Base:   w,
					Policy: politeness.Policy{MinDelay: tc.min, MaxCrawlDelay: tc.maxCrawl},
					CrawlDelay: func(u *url.URL) (time.Duration, bool) {
						asked = append(asked, u.Host)
						return tc.crawl, u.Host == "a.example"
					},
				}
				c := &http.Client{Transport: tr}
				inParallel(t, c, 4, hostA)
				inParallel(t, c, 4, "https://b.example")
				check(t, w, func(r rec) time.Duration {
					if r.host == hostA {
						return tc.want
					}
					return tc.min
				})
				for _, g := range gaps(w, hostA) {
					if g != tc.want {
						t.Errorf("gap %v on a.example, want exactly %v", g, tc.want)
					}
				}
				if len(asked) == 0 {
					t.Error("CrawlDelay never called")
				}
			})
		})
	}
}

func TestTransport_S5_JitterBounds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := &fakeWeb{}
		const d, j = time.Second, 500 * time.Millisecond
		c, _ := newClient(w, politeness.Policy{MinDelay: d, Jitter: j})
		inParallel(t, c, 40, hostA)
		check(t, w, constGap(d))
		seen := map[time.Duration]bool{}
		for _, g := range gaps(w, hostA) {
			if g < d || g >= d+j {
				t.Errorf("gap %v outside [%v, %v)", g, d, d+j)
			}
			seen[g] = true
		}
		if len(seen) < 10 {
			t.Errorf("only %d distinct gaps among 39: no jitter?", len(seen))
		}
	})
}

// pausedWeb answers status with header h to the first `paused` requests on
// a host and 200 afterwards.
func pausedWeb(status int, h http.Header, paused int) *fakeWeb {
	return &fakeWeb{answer: func(_ string, n int) reply {
		if n < paused {
			return reply{status: status, header: h}
		}
		return reply{status: 200}
	}}
}

// minGapAfter is the checker's rule: delay after a normal answer, pause after
// a rate-limit answer.
func minGapAfter(delay, pause time.Duration) func(rec) time.Duration {
	return func(r rec) time.Duration {
		if r.status == 429 || r.status == 503 || r.status == 509 {
			return pause
		}
		return delay
	}
}

func TestTransport_B6_C4_RetryAfter(t *testing.T) {
	// Bubbles start at 2000-01-01 00:00:00 UTC, so HTTP-dates are exact.
	tests := []struct {
		name   string
		header func(now time.Time) http.Header
		want   time.Duration
	}{
		{"seconds", func(time.Time) http.Header { return http.Header{"Retry-After": {"120"}} }, 120 * time.Second},
		{"zero seconds", func(time.Time) http.Header { return http.Header{"Retry-After": {"0"}} }, 2 * time.Second}, // B6 slow-down: 1s * 2
		{"http-date vs Date header", func(now time.Time) http.Header {
			server := now.Add(1000 * time.Hour) // server clock far ahead
			return http.Header{
				"Retry-After": {server.Add(5 * time.Minute).UTC().Format(http.TimeFormat)},
				"Date":        {server.UTC().Format(http.TimeFormat)},
			}
		}, 5 * time.Minute},
		{"http-date without Date", func(now time.Time) http.Header {
			return http.Header{"Retry-After": {now.Add(10 * time.Minute).UTC().Format(http.TimeFormat)}}
		}, 10 * time.Minute},
		{"http-date in the past", func(now time.Time) http.Header {
			return http.Header{"Retry-After": {now.Add(-time.Hour).UTC().Format(http.TimeFormat)}}
		}, time.Minute},
		{"garbage", func(time.Time) http.Header { return http.Header{"Retry-After": {"soon"}} }, time.Minute},
		{"negative", func(time.Time) http.Header { return http.Header{"Retry-After": {"-30"}} }, time.Minute},
		{"missing", func(time.Time) http.Header { return nil }, time.Minute},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := pausedWeb(429, tc.header(time.Now()), 1)
				c, _ := newClient(w, politeness.Policy{})
				mustGet(t, c, hostA+"/x")
				start := time.Now()
				// C4: a different URL on the same host waits too.
				mustGet(t, c, hostA+"/other")
				check(t, w, minGapAfter(time.Second, tc.want))
				if got := time.Since(start); got != tc.want {
					t.Errorf("second request waited %v, want %v", got, tc.want)
				}
			})
		})
	}
}

func TestTransport_B6_DefaultBackoffDoubles(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := pausedWeb(503, nil, 3) // 503 without Retry-After, three times
		c, _ := newClient(w, politeness.Policy{})
		for range 5 {
			mustGet(t, c, hostA)
		}
		g := gaps(w, hostA)
		want := []time.Duration{time.Minute, 2 * time.Minute, 4 * time.Minute, 8 * time.Second}
		for i, d := range want {
			if i >= len(g) || g[i] != d {
				t.Fatalf("gaps = %v, want 1, 2, 4 min then the slowed delay %v", g, want)
			}
		}
		// The backoff count resets after a success: a new 503 pauses 1 min again.
		w.answer = func(string, int) reply { return reply{status: 503} }
		mustGet(t, c, hostA)
		start := time.Now()
		mustGet(t, c, hostA)
		if got := time.Since(start); got != time.Minute {
			t.Errorf("after a success, the backoff restarted at %v, want 1m", got)
		}
	})
}

// The default backoff doubles exactly while the result fits in a Duration
// and saturates beyond: half the largest Duration, doubled, is one below it.
func TestTransport_DefaultBackoffSaturates(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const largest = time.Duration(1<<63 - 1)
		var pauses []time.Duration
		tr := &politeness.Transport{
			Base:   rtFunc(func(*http.Request) (*http.Response, error) { return answer(503, nil) }),
			Policy: politeness.Policy{DefaultBackoff: largest / 2, MaxRetryAfter: largest},
			Observe: func(e politeness.Event) {
				if e.Kind == politeness.EventPause {
					pauses = append(pauses, e.Duration)
				}
			},
		}
		c := &http.Client{Transport: tr}
		for range 3 {
			resp, err := c.Get("http://a.test/")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
		want := []time.Duration{largest / 2, largest - 1, largest}
		if len(pauses) != len(want) || pauses[0] != want[0] || pauses[1] != want[1] || pauses[2] != want[2] {
			t.Errorf("pauses = %v, want %v", pauses, want)
		}
	})
}

func TestTransport_B6_ClampAtMaxRetryAfter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := pausedWeb(429, http.Header{"Retry-After": {"7200"}}, 1)
		var events []politeness.Event
		tr := &politeness.Transport{Base: w, Observe: func(e politeness.Event) { events = append(events, e) }}
		c := &http.Client{Transport: tr}
		mustGet(t, c, hostA)
		start := time.Now()
		mustGet(t, c, hostA)
		if got := time.Since(start); got != time.Hour {
			t.Errorf("Retry-After 2h with the Clamp policy waited %v, want the 1h maximum", got)
		}
		check(t, w, minGapAfter(time.Second, time.Hour))
		var paused bool
		for _, e := range events {
			if e.Kind == politeness.EventPause && e.Duration == time.Hour && e.Status == 429 && e.Host == "https://a.example:443" {
				paused = true
			}
		}
		if !paused {
			t.Errorf("no pause event among %+v", events)
		}
	})
}

func TestTransport_H4_GiveUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := pausedWeb(429, http.Header{"Retry-After": {"7200"}}, 1)
		c, _ := newClient(w, politeness.Policy{RetryAfterMode: politeness.GiveUp, MaxRetryAfter: time.Hour})
		if status := mustGet(t, c, hostA); status != 429 {
			t.Fatalf("rate-limit answer not returned unchanged: status %d", status)
		}
		for _, after := range []time.Duration{0, time.Hour, 3 * time.Hour, 300 * 24 * time.Hour} {
			time.Sleep(after)
			_, err := get(context.Background(), c, hostA+"/later")
			var he *politeness.HostError
			var ue *url.Error
			if !errors.Is(err, politeness.ErrGaveUp) || !errors.As(err, &he) || !errors.As(err, &ue) {
				t.Fatalf("after %v: err = %v, want *url.Error wrapping *HostError ErrGaveUp", after, err)
			}
			if he.Host != "https://a.example:443" || he.Until.Before(time.Now()) {
				t.Errorf("HostError = %+v", he)
			}
		}
		if n := w.requests(hostA); n != 1 {
			t.Errorf("%d requests reached a host we gave up on, want 1", n)
		}
	})
}

func TestTransport_H4_GiveUpFor(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := pausedWeb(429, http.Header{"Retry-After": {"7200"}}, 1)
		c, _ := newClient(w, politeness.Policy{RetryAfterMode: politeness.GiveUp, GiveUpFor: time.Hour})
		mustGet(t, c, hostA)
		time.Sleep(2*time.Hour - time.Second) // GiveUpFor is 1h, but never earlier than asked (2h)
		if _, err := get(context.Background(), c, hostA); !errors.Is(err, politeness.ErrGaveUp) {
			t.Fatalf("err = %v, want ErrGaveUp before the asked 2h", err)
		}
		time.Sleep(time.Second)
		mustGet(t, c, hostA)
		check(t, w, minGapAfter(time.Second, 2*time.Hour))
	})
}

func TestTransport_H4_ShortRetryAfterObeyedExactly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := pausedWeb(503, http.Header{"Retry-After": {"45"}}, 1)
		c, _ := newClient(w, politeness.Policy{RetryAfterMode: politeness.GiveUp, MinDelay: 500 * time.Millisecond})
		mustGet(t, c, hostA)
		start := time.Now()
		mustGet(t, c, hostA)
		if got := time.Since(start); got != 45*time.Second {
			t.Errorf("waited %v, want exactly 45s", got)
		}
		check(t, w, minGapAfter(500*time.Millisecond, 45*time.Second))
	})
}

func TestTransport_B6_SlowdownAndRecovery(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := pausedWeb(429, http.Header{"Retry-After": {"10"}}, 1)
		c, _ := newClient(w, politeness.Policy{MinDelay: time.Second, EaseAfter: 3})
		for range 12 {
			mustGet(t, c, hostA)
		}
		// Pause, then slow level 1 (2s) until the 3rd answer without a rate
		// limit, then back to 1s.
		want := []time.Duration{10 * time.Second, 2 * time.Second, 2 * time.Second,
			time.Second, time.Second, time.Second, time.Second, time.Second, time.Second, time.Second, time.Second}
		if g := gaps(w, hostA); fmt.Sprint(g) != fmt.Sprint(want) {
			t.Errorf("gaps = %v\nwant   %v", g, want)
		}
		// Two pauses in a row: level 2 (4s), capped by MaxSlowdown.
		w2 := pausedWeb(429, http.Header{"Retry-After": {"1"}}, 3)
		c2, _ := newClient(w2, politeness.Policy{MinDelay: time.Second, MaxSlowdown: 2})
		for range 5 {
			mustGet(t, c2, hostA)
		}
		want = []time.Duration{2 * time.Second, 4 * time.Second, 4 * time.Second, 4 * time.Second}
		if g := gaps(w2, hostA); fmt.Sprint(g) != fmt.Sprint(want) {
			t.Errorf("gaps with MaxSlowdown 2 = %v, want %v", g, want)
		}
		// Answers without a rate limit at level 0 bank nothing: a pause
		// after many of them slows the host down as the first one did.
		w3 := &fakeWeb{answer: func(_ string, n int) reply {
			if n == 8 {
				return reply{status: 429, header: http.Header{"Retry-After": {"1"}}}
			}
			return reply{status: 200}
		}}
		c3, _ := newClient(w3, politeness.Policy{MinDelay: time.Second, EaseAfter: 3})
		for range 13 {
			mustGet(t, c3, hostA)
		}
		s := time.Second
		want = []time.Duration{s, s, s, s, s, s, s, s, 2 * s, 2 * s, 2 * s, s}
		if g := gaps(w3, hostA); fmt.Sprint(g) != fmt.Sprint(want) {
			t.Errorf("gaps with a pause after 8 answers = %v\nwant   %v", g, want)
		}
	})
}

func TestTransport_S6_503vs509(t *testing.T) {
	tests := []struct {
		name     string
		statuses []int
		status   int
		paused   bool
	}{
		{"default 429", nil, 429, true},
		{"default 503", nil, 503, true},
		{"default 509 not a rate limit", nil, 509, false},
		{"509 configured", []int{429, 503, 509}, 509, true},
		{"503 left out", []int{429}, 503, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := pausedWeb(tc.status, http.Header{"Retry-After": {"30"}}, 1)
				c, _ := newClient(w, politeness.Policy{RateLimitStatuses: tc.statuses})
				mustGet(t, c, hostA)
				start := time.Now()
				mustGet(t, c, hostA)
				want := time.Second
				if tc.paused {
					want = 30 * time.Second
				}
				if got := time.Since(start); got != want {
					t.Errorf("waited %v after %d, want %v", got, tc.status, want)
				}
			})
		})
	}
}

func TestTransport_B6_FailFastWhenDeadlineBeforeReopen(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := pausedWeb(429, http.Header{"Retry-After": {"600"}}, 1)
		c, _ := newClient(w, politeness.Policy{})
		mustGet(t, c, hostA)
		reopen := time.Now().Add(600 * time.Second)

		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		start := time.Now()
		body := &readCloseCounter{}
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, hostA, body)
		_, err := c.Do(req)
		var he *politeness.HostError
		if !errors.Is(err, politeness.ErrRateLimited) || !errors.As(err, &he) || !he.Until.Equal(reopen) {
			t.Fatalf("err = %v, want ErrRateLimited until %v", err, reopen)
		}
		if time.Since(start) != 0 {
			t.Errorf("failing fast took %v", time.Since(start))
		}
		if body.count() != 1 {
			t.Errorf("request body closed %d times, want 1", body.count())
		}
		ctx2, cancel2 := context.WithTimeout(context.Background(), 20*time.Minute)
		defer cancel2()
		if _, err := get(ctx2, c, hostA); err != nil {
			t.Fatalf("with a long enough deadline: %v", err)
		}
		if !time.Now().Equal(reopen) {
			t.Errorf("request started at %v, want %v", time.Now(), reopen)
		}
		check(t, w, minGapAfter(time.Second, 600*time.Second))
	})
}

func TestTransport_H6_BreakerTripAndCoolOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		down := true
		w := &fakeWeb{answer: func(host string, _ int) reply {
			mu.Lock()
			defer mu.Unlock()
			if down && host == hostA {
				return reply{err: errConnRefused, latency: 5 * time.Second}
			}
			return reply{status: 200}
		}}
		var trips int
		tr := &politeness.Transport{Base: w, Policy: politeness.Policy{BreakerCoolOff: 5 * time.Minute},
			Observe: func(e politeness.Event) {
				if e.Kind == politeness.EventBreakerTrip {
					trips++
				}
			}}
		c := &http.Client{Transport: tr}
		for i := range 3 {
			if _, err := get(context.Background(), c, hostA); !errors.Is(err, errConnRefused) {
				t.Fatalf("request %d: err = %v, want the connection error", i, err)
			}
		}
		for range 5 {
			_, err := get(context.Background(), c, hostA)
			if !errors.Is(err, politeness.ErrHostDown) {
				t.Fatalf("err = %v, want ErrHostDown", err)
			}
		}
		if n := w.requests(hostA); n != 3 {
			t.Errorf("%d requests reached a down host, want 3", n)
		}
		// Other hosts are unaffected.
		mustGet(t, c, "https://b.example")
		// After the cool-off one probe goes through; it fails: down again at once.
		time.Sleep(5 * time.Minute)
		if _, err := get(context.Background(), c, hostA); !errors.Is(err, errConnRefused) {
			t.Fatalf("probe after cool-off: %v", err)
		}
		if _, err := get(context.Background(), c, hostA); !errors.Is(err, politeness.ErrHostDown) {
			t.Fatalf("after a failed probe: %v, want ErrHostDown", err)
		}
		if trips != 2 {
			t.Errorf("%d breaker trips, want 2", trips)
		}
		// Host back: the probe succeeds and the breaker resets.
		mu.Lock()
		down = false
		mu.Unlock()
		time.Sleep(5 * time.Minute)
		for range 4 {
			mustGet(t, c, hostA)
		}
		check(t, w, constGap(time.Second))
	})
}

func TestTransport_H6_CallerCancelIsNotAHostFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := &fakeWeb{answer: func(string, int) reply { return reply{err: context.Canceled} }}
		c, _ := newClient(w, politeness.Policy{BreakerThreshold: 1})
		for range 3 {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			// The request is refused before it starts: ctx is done.
			if _, err := get(ctx, c, hostA); !errors.Is(err, context.Canceled) {
				t.Fatalf("err = %v", err)
			}
		}
		if n := w.requests(hostA); n != 0 {
			t.Errorf("%d requests sent with a canceled context", n)
		}
	})
}

// holdHost makes a client with a 1s MinDelay and sends a first request
// whose body stays open, so the host stays busy until resp.Body is closed.
func holdHost(t *testing.T, w *fakeWeb, url string) (*http.Client, *http.Response) {
	t.Helper()
	c, _ := newClient(w, politeness.Policy{MinDelay: time.Second})
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	return c, resp
}

func TestTransport_C3_D10_CancelWhileQueued(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := &fakeWeb{}
		c, resp := holdHost(t, w, hostA+"/held")
		ctx, cancel := context.WithCancel(context.Background())
		body := &readCloseCounter{}
		errc := make(chan error, 1)
		go func() {
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, hostA+"/queued", body)
			_, err := c.Do(req)
			errc <- err
		}()
		synctest.Wait() // queued
		start := time.Now()
		cancel()
		err := <-errc
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
		if time.Since(start) != 0 {
			t.Errorf("leaving the queue took %v", time.Since(start))
		}
		if body.count() != 1 {
			t.Errorf("request body closed %d times, want 1", body.count())
		}
		resp.Body.Close()
		mustGet(t, c, hostA+"/after") // the queue is not stuck
		if n := w.requests(hostA); n != 2 {
			t.Errorf("%d requests reached the host, want 2", n)
		}
		check(t, w, constGap(time.Second))
	})
}

func TestTransport_C3_CancelWhileWaitingForGap(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := &fakeWeb{}
		c, _ := newClient(w, politeness.Policy{MinDelay: time.Minute})
		mustGet(t, c, hostA)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := get(ctx, c, hostA); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("err = %v, want context.DeadlineExceeded", err)
		}
		mustGet(t, c, hostA)
		check(t, w, constGap(time.Minute))
	})
}

func TestTransport_D10_ManyHostsNoCrossBlocking(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := &fakeWeb{answer: func(host string, n int) reply {
			if host == "https://slow.example" {
				return reply{status: 429, header: http.Header{"Retry-After": {"3600"}}}
			}
			return reply{status: 200, latency: 100 * time.Millisecond}
		}}
		c, _ := newClient(w, politeness.Policy{MinDelay: 2 * time.Second})
		mustGet(t, c, "https://slow.example") // one host paused for an hour
		start := time.Now()
		var wg sync.WaitGroup
		for h := range 100 {
			for i := range 3 {
				wg.Go(func() { mustGet(t, c, fmt.Sprintf("https://h%d.example/%d", h, i)) })
			}
		}
		wg.Wait()
		// Every host in parallel: 3 requests = 2 gaps + 3 latencies.
		if got, want := time.Since(start), 2*2*time.Second+3*100*time.Millisecond; got != want {
			t.Errorf("100 hosts x 3 requests took %v, want %v", got, want)
		}
		check(t, w, minGapAfter(2*time.Second, time.Hour))
	})
}

func TestTransport_D10_FIFO(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := &fakeWeb{}
		c, resp := holdHost(t, w, hostA+"/first")
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Go(func() { mustGet(t, c, fmt.Sprintf("%s/%d", hostA, i)) })
			synctest.Wait() // arrival order
		}
		resp.Body.Close()
		wg.Wait()
		var order []string
		for _, r := range w.records() {
			order = append(order, r.path)
		}
		if got, want := strings.Join(order, " "), "/first /0 /1 /2 /3 /4 /5 /6 /7"; got != want {
			t.Errorf("order = %s, want %s", got, want)
		}
		check(t, w, constGap(time.Second))
	})
}

func TestTransport_C3_BodyCloseWithoutReadEndsTurn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := &fakeWeb{}
		c, _ := newClient(w, politeness.Policy{MinDelay: time.Second})
		for range 3 {
			resp, err := c.Get(hostA)
			if err != nil {
				t.Fatal(err)
			}
			time.Sleep(3 * time.Second) // the caller holds the body for a while
			resp.Body.Close()
			resp.Body.Close() // twice is harmless
		}
		check(t, w, constGap(time.Second))
		for _, g := range gaps(w, hostA) {
			if g != time.Second {
				t.Errorf("gap %v, want 1s after the close", g)
			}
		}
	})
}

func TestTransport_ObserveAndLogger(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := pausedWeb(429, http.Header{"Retry-After": {"5"}}, 1)
		var buf bytes.Buffer
		var kinds []string
		tr := &politeness.Transport{Base: w,
			Logger:  slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})),
			Observe: func(e politeness.Event) { kinds = append(kinds, e.Kind.String()+":"+e.Reason) },
		}
		c := &http.Client{Transport: tr}
		mustGet(t, c, hostA)
		mustGet(t, c, hostA)
		if got, want := strings.Join(kinds, " "), "pause:retry-after wait:pause"; got != want {
			t.Errorf("events = %s, want %s", got, want)
		}
		// One line an event, at its level, with what the event says.
		lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
		want := []string{
			`level=INFO msg="politeness: pause" host=https://a.example:443 reason=retry-after duration=5s until=`,
			`level=DEBUG msg="politeness: wait" host=https://a.example:443 reason=pause duration=5s until=`,
		}
		if len(lines) != len(want) {
			t.Fatalf("log = %s, want %d lines", buf.String(), len(want))
		}
		for i, w := range want {
			if !strings.Contains(lines[i], w) {
				t.Errorf("log line %d = %s, want it to hold %s", i, lines[i], w)
			}
		}
		if !strings.Contains(lines[0], "status=429") || strings.Contains(lines[1], "status=") {
			t.Errorf("the pause's line has no status=429, or the wait's has a status: %s", buf.String())
		}
		if strings.Contains(buf.String(), "err=") {
			t.Errorf("an err attribute for events without an error: %s", buf.String())
		}
	})
}

type idleCloser struct {
	fakeWeb
	closed int
}

func (c *idleCloser) CloseIdleConnections() { c.closed++ }

func TestTransport_CloseIdleConnectionsForwarded(t *testing.T) {
	base := &idleCloser{}
	c := &http.Client{Transport: &politeness.Transport{Base: base}}
	c.CloseIdleConnections()
	if base.closed != 1 {
		t.Errorf("CloseIdleConnections reached Base %d times, want 1", base.closed)
	}
	(&politeness.Transport{Base: &fakeWeb{}}).CloseIdleConnections() // no method: no panic
}

func TestTransport_DoesNotModifyRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var got *http.Request
		tr := &politeness.Transport{Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			got = r
			return &http.Response{StatusCode: 204, Body: http.NoBody, Header: http.Header{}}, nil
		})}
		req, _ := http.NewRequest(http.MethodGet, "HTTPS://Example.COM/a?b=c", nil)
		req.Header.Set("X-Test", "1")
		before := fmt.Sprintf("%v %v %v", req.URL, req.Header, req.Host)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		if after := fmt.Sprintf("%v %v %v", req.URL, req.Header, req.Host); after != before {
			t.Errorf("request changed: %s -> %s", before, after)
		}
		if got != req || resp.StatusCode != 204 {
			t.Errorf("Base saw another request or the response changed")
		}
		// A NoBody response ends the turn at once.
		start := time.Now()
		if _, err := tr.RoundTrip(req); err != nil {
			t.Fatal(err)
		}
		if time.Since(start) != time.Second {
			t.Errorf("second request after %v, want 1s", time.Since(start))
		}
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestTransport_H6_TimeoutsTripBreaker(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// A host that accepts and never answers: each request runs into its
		// deadline.
		hang := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			<-r.Context().Done()
			return nil, r.Context().Err()
		})
		c := &http.Client{Transport: &politeness.Transport{Base: hang}}
		for range 3 {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			if _, err := get(ctx, c, hostA); !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("err = %v, want context.DeadlineExceeded", err)
			}
			cancel()
		}
		if _, err := get(context.Background(), c, hostA); !errors.Is(err, politeness.ErrHostDown) {
			t.Fatalf("after 3 timeouts: %v, want ErrHostDown", err)
		}
	})
}

// sharedGate hides the MemoryGate's type so the Transport takes the generic
// Gate path, as with a Redis gate.
type sharedGate struct{ politeness.Gate }

func TestTransport_C3_D10_FleetSharesOneGate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := &fakeWeb{answer: func(_ string, n int) reply {
			if n == 3 {
				return reply{status: 429, header: http.Header{"Retry-After": {"30"}}}
			}
			return reply{status: 200, latency: 50 * time.Millisecond}
		}}
		gate := sharedGate{politeness.NewMemoryGate()}
		var wg sync.WaitGroup
		for range 3 { // three "processes"
			c := &http.Client{Transport: &politeness.Transport{Base: w, Gate: gate,
				Policy: politeness.Policy{MinDelay: 2 * time.Second, MaxSlowdown: -1}}}
			for i := range 4 {
				wg.Go(func() { mustGet(t, c, fmt.Sprintf("%s/%d", hostA, i)) })
			}
		}
		wg.Wait()
		check(t, w, minGapAfter(2*time.Second, 30*time.Second))
		if n := w.requests(hostA); n != 12 {
			t.Errorf("%d requests, want 12", n)
		}
	})
}

type failingGate struct{}

var errGateDown = errors.New("gate backend unreachable")

func (failingGate) Acquire(context.Context, string, func(politeness.State) (time.Duration, error)) (politeness.Lease, error) {
	return nil, errGateDown
}

func TestTransport_GateErrorClosesRequestBody(t *testing.T) {
	body := &readCloseCounter{}
	tr := &politeness.Transport{Base: &fakeWeb{}, Gate: failingGate{}}
	req, _ := http.NewRequest(http.MethodPost, hostA, body)
	if _, err := tr.RoundTrip(req); !errors.Is(err, errGateDown) {
		t.Errorf("err = %v, want the gate's error", err)
	}
	if body.count() != 1 {
		t.Errorf("request body closed %d times, want 1", body.count())
	}
}

func TestTransport_IdleHostsForgotten(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := pausedWeb(429, http.Header{"Retry-After": {"60"}}, 1)
		gate := politeness.NewMemoryGate()
		c := &http.Client{Transport: &politeness.Transport{Base: w, Gate: gate,
			Policy: politeness.Policy{IdleTime: 10 * time.Minute}}}
		mustGet(t, c, hostA) // paused for 60s
		mustGet(t, c, hostA) // after the pause, a 200
		if n := gate.Len(); n != 1 {
			t.Fatalf("Len = %d, want 1", n)
		}
		// Slowed delay 2s after the last answer, then the idle time.
		time.Sleep(2*time.Second + 10*time.Minute - time.Millisecond)
		gate.Sweep()
		if n := gate.Len(); n != 1 {
			t.Errorf("Len = %d: the host must be kept until its gap plus the idle time", n)
		}
		time.Sleep(2 * time.Millisecond)
		gate.Sweep()
		if n := gate.Len(); n != 0 {
			t.Errorf("Len = %d after the idle time, want 0", n)
		}
	})
}

// Two Transports sharing a MemoryGate pace one host together also after the
// gate forgot it: the one that asked about the host before the gate forgot
// it sees the state the other stored since.
func TestTransport_SharedGateAfterHostForgotten(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := &fakeWeb{}
		gate := &politeness.MemoryGate{SweepEvery: -1}
		p := politeness.Policy{MinDelay: 10 * time.Second, IdleTime: time.Second}
		c1 := &http.Client{Transport: &politeness.Transport{Base: w, Gate: gate, Policy: p}}
		c2 := &http.Client{Transport: &politeness.Transport{Base: w, Gate: gate, Policy: p}}
		mustGet(t, c1, hostA)
		time.Sleep(12 * time.Second) // past the gap and the idle time
		gate.Sweep()
		if n := gate.Len(); n != 0 {
			t.Fatalf("Len = %d after the idle time, want 0", n)
		}
		mustGet(t, c2, hostA)
		start := time.Now()
		mustGet(t, c1, hostA)
		if d := time.Since(start); d != 10*time.Second {
			t.Errorf("the first Transport's next request waited %v, want the 10 s gap the second one's request set", d)
		}
		check(t, w, constGap(10*time.Second))
	})
}

type refusingLimiter struct{}

func (refusingLimiter) Wait(context.Context) error { return errors.New("budget exhausted") }

func TestTransport_LimiterErrorReleasesHost(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := &fakeWeb{}
		body := &readCloseCounter{}
		tr := &politeness.Transport{Base: w, Policy: politeness.Policy{Limiter: refusingLimiter{}}}
		for range 2 { // the second call would block forever if the host stayed held
			req, _ := http.NewRequest(http.MethodPost, hostA, body)
			if _, err := tr.RoundTrip(req); err == nil {
				t.Fatal("no error from a refusing limiter")
			}
		}
		if body.count() != 2 || w.requests(hostA) != 0 {
			t.Errorf("body closed %d times (want 2), %d requests sent (want 0)", body.count(), w.requests(hostA))
		}
	})
}

// onceRefusingLimiter refuses its first Wait and allows every later one.
type onceRefusingLimiter struct{ calls atomic.Int32 }

func (l *onceRefusingLimiter) Wait(context.Context) error {
	if l.calls.Add(1) == 1 {
		return errors.New("budget exhausted")
	}
	return nil
}

// TestTransport_C3_SpellingsAfterHostForgotten: a new host whose only
// request was refused by the global budget is forgotten by the gate (it
// has nothing to remember); a request under another spelling of the host
// then takes a fresh turn, and one under the first spelling must queue
// behind it, not reuse the turn it found for the refused request.
func TestTransport_C3_SpellingsAfterHostForgotten(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := &fakeWeb{server: hostA, answer: func(string, int) reply { return reply{status: http.StatusOK, latency: time.Second} }}
		tr := &politeness.Transport{Base: w, Policy: politeness.Policy{MinDelay: time.Second, Limiter: &onceRefusingLimiter{}}}
		c := &http.Client{Transport: tr}
		if _, err := get(context.Background(), c, hostA+"/refused"); err == nil {
			t.Fatal("no error from the refusing budget")
		}
		done := make(chan struct{})
		for _, u := range []string{"https://A.EXAMPLE/b", hostA + "/c"} {
			go func() { mustGet(t, c, u); done <- struct{}{} }()
			synctest.Wait() // /b is in flight before /c is sent
		}
		<-done
		<-done
		if n := w.requests(hostA); n != 2 {
			t.Fatalf("%d requests reached the host, want 2 (/b and /c)", n)
		}
		check(t, w, constGap(time.Second))
	})
}

func TestTransport_B6_QueuedRequestFailsFastDuringPause(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := pausedWeb(429, http.Header{"Retry-After": {"600"}}, 1)
		c, _ := newClient(w, politeness.Policy{})
		mustGet(t, c, hostA)
		// A patient caller waits through the pause, holding the host's turn.
		done := make(chan struct{})
		go func() {
			defer close(done)
			mustGet(t, c, hostA+"/patient")
		}()
		synctest.Wait()
		// A caller with a short deadline learns at once, without queueing.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		start := time.Now()
		if _, err := get(ctx, c, hostA+"/hurried"); !errors.Is(err, politeness.ErrRateLimited) {
			t.Errorf("err = %v, want ErrRateLimited", err)
		}
		if time.Since(start) != 0 {
			t.Errorf("failing fast took %v", time.Since(start))
		}
		<-done
		check(t, w, minGapAfter(time.Second, 600*time.Second))
	})
}

func TestTransport_NilURL(t *testing.T) {
	body := &readCloseCounter{}
	req := &http.Request{Method: http.MethodGet, Body: body}
	if _, err := (&politeness.Transport{Base: &fakeWeb{}}).RoundTrip(req); err == nil || body.count() != 1 {
		t.Errorf("err = %v, body closed %d times", err, body.count())
	}
}

// TestTransport_C3_C4_B6_RandomisedWeb runs many callers against many hosts
// that answer at random (200, 500, 429 with and without Retry-After, 503,
// connection errors, random latencies and Crawl-delays) and lets the checker
// judge every pair of consecutive requests on each host.
func TestTransport_C3_C4_B6_RandomisedWeb(t *testing.T) {
	for seed := range uint64(3) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				answer := func(host string, n int) reply {
					r := rand.New(rand.NewPCG(seed, uint64(len(host))*1000+uint64(n)))
					rp := reply{status: 200, latency: time.Duration(r.IntN(500)) * time.Millisecond}
					switch x := r.IntN(100); {
					case x < 8:
						rp.status = 429
						rp.header = http.Header{"Retry-After": {fmt.Sprint(1 + r.IntN(120))}}
					case x < 12:
						rp.status = 503
					case x < 16:
						rp.err = errConnRefused
					case x < 25:
						rp.status = 500
					}
					return rp
				}
				w := &fakeWeb{answer: answer}
				crawl := func(u *url.URL) (time.Duration, bool) {
					return time.Duration(len(u.Host)%4) * time.Second, true // 0..3 s
				}
				const minDelay = 500 * time.Millisecond
				tr := &politeness.Transport{Base: w, CrawlDelay: crawl,
					Policy: politeness.Policy{MinDelay: minDelay, Jitter: 300 * time.Millisecond}}
				c := &http.Client{Transport: tr}
				var wg sync.WaitGroup
				for g := range 40 {
					wg.Go(func() {
						for i := range 15 {
							host := fmt.Sprintf("https://%s.example", strings.Repeat("h", 1+(g*7+i)%12))
							get(context.Background(), c, host+"/"+fmt.Sprint(i))
						}
					})
				}
				wg.Wait()
				if len(w.records()) < 300 {
					t.Fatalf("only %d requests sent", len(w.records()))
				}
				check(t, w, func(prev rec) time.Duration {
					u, _ := url.Parse(prev.host)
					cd, _ := crawl(u)
					base := max(minDelay, cd)
					rp := answer(prev.host, prev.n)
					switch {
					case rp.status == 429:
						ra, _ := strconv.Atoi(rp.header.Get("Retry-After"))
						return max(base, time.Duration(ra)*time.Second)
					case rp.status == 503:
						return time.Minute // default backoff, at least
					}
					return base
				})
			})
		})
	}
}

func TestTransport_GlobalRateLimiter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := &fakeWeb{}
		// 5 requests/s across all hosts, no burst beyond one.
		c, _ := newClient(w, politeness.Policy{Limiter: rate.NewLimiter(5, 1), MinDelay: -1})
		start := time.Now()
		var wg sync.WaitGroup
		for h := range 10 {
			wg.Go(func() { mustGet(t, c, fmt.Sprintf("https://h%d.example", h)) })
		}
		wg.Wait()
		if got := time.Since(start); got != 1800*time.Millisecond {
			t.Errorf("10 requests on 10 hosts at 5/s took %v, want 1.8s", got)
		}
	})
}

// TestTransport_C3_TurnHeldUntilBodyRead: a response holds the host's turn
// until its body is read to EOF (or closed), not from its first byte; and
// closing a body already read to EOF does not release the turn a second
// time, which would let a third request overlap the second.
func TestTransport_C3_TurnHeldUntilBodyRead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := &fakeWeb{}
		c, tr := newClient(w, politeness.Policy{MinDelay: time.Second})
		a, err := c.Get(hostA + "/a")
		if err != nil {
			t.Fatal(err)
		}
		if n, err := a.Body.Read(make([]byte, 2)); n != 2 || err != nil {
			t.Fatalf("first read of /a: %d, %v", n, err)
		}
		bDone := make(chan *http.Response)
		go func() {
			r, err := c.Get(hostA + "/b")
			if err != nil {
				t.Error(err)
			}
			bDone <- r
		}()
		time.Sleep(10 * time.Second)
		if n := w.requests(hostA); n != 1 {
			t.Fatalf("%d requests while /a's body was read only in part, want 1", n)
		}
		if _, err := io.ReadAll(a.Body); err != nil { // to EOF, not closed
			t.Fatal(err)
		}
		b := <-bDone // after the 1 s gap
		cDone := make(chan struct{})
		go func() { mustGet(t, c, hostA+"/c"); close(cDone) }()
		synctest.Wait()
		a.Body.Close() // /a finished already: nothing more to release
		if hs := tr.Hosts(); len(hs) != 1 || !strings.HasSuffix(hs[0].InFlight, "/b") {
			t.Errorf("after /a's body is closed again, hosts = %+v, want /b in flight", hs)
		}
		time.Sleep(10 * time.Second)
		if n := w.requests(hostA); n != 2 {
			t.Fatalf("%d requests while /b's body is unread, want 2", n)
		}
		b.Body.Close()
		<-cDone
		check(t, w, constGap(time.Second))
	})
}

// TestTransport_ReleaseFailureLogged: a gate that cannot store a host's
// state (a shared gate that lost its server) costs no request: it is
// logged as a warning with the host, and without a Logger it is ignored.
func TestTransport_ReleaseFailureLogged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		for _, logged := range []bool{true, false} {
			var buf bytes.Buffer
			tr := &politeness.Transport{Base: &fakeWeb{},
				Gate: &recordingGate{Gate: politeness.NewMemoryGate(), fail: errors.New("server gone")}}
			if logged {
				tr.Logger = slog.New(slog.NewTextHandler(&buf, nil))
			}
			c := &http.Client{Transport: tr}
			mustGet(t, c, hostA)
			mustGet(t, c, hostA)
			if !logged {
				continue
			}
			if n := strings.Count(buf.String(), `level=WARN msg="politeness: storing host state failed" host=https://a.example:443 err="server gone"`); n != 2 {
				t.Errorf("log = %s, want two warnings naming the host and the error", buf.String())
			}
		}
	})
}
