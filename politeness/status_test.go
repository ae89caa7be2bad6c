package politeness_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/goodbot-go/goodbot/politeness"
)

type rtFunc func(*http.Request) (*http.Response, error)

func (f rtFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func answer(status int, h http.Header) (*http.Response, error) {
	if h == nil {
		h = http.Header{}
	}
	return &http.Response{StatusCode: status, Header: h, Body: io.NopCloser(strings.NewReader("x"))}, nil
}

// Each way a host stops: Hosts reports the reason and the exact end.
func TestHosts_PauseReasonAndEnd(t *testing.T) {
	cases := []struct {
		name       string
		policy     politeness.Policy
		status     int
		header     http.Header
		err        error
		reason     string
		until      time.Duration
		lastStatus int
		slow       int
		breaker    string
	}{
		{name: "retry-after", status: 429, header: http.Header{"Retry-After": {"90"}},
			reason: "retry-after", until: 90 * time.Second, lastStatus: 429, slow: 1, breaker: "closed"},
		{name: "backoff", policy: politeness.Policy{DefaultBackoff: 7 * time.Second}, status: 503,
			reason: "backoff", until: 7 * time.Second, lastStatus: 503, slow: 1, breaker: "closed"},
		{name: "give-up", policy: politeness.Policy{MaxRetryAfter: time.Minute, RetryAfterMode: politeness.GiveUp, GiveUpFor: 5 * time.Hour},
			status: 429, header: http.Header{"Retry-After": {"3600"}},
			reason: "give-up", until: 5 * time.Hour, lastStatus: 429, slow: 1, breaker: "closed"},
		{name: "breaker", policy: politeness.Policy{BreakerThreshold: 1, BreakerCoolOff: 10 * time.Minute}, err: errors.New("connection refused"),
			reason: "connection errors", until: 10 * time.Minute, lastStatus: 0, breaker: "open"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				sent := 0
				tr := &politeness.Transport{Policy: tc.policy, Base: rtFunc(func(r *http.Request) (*http.Response, error) {
					sent++
					if tc.err != nil {
						return nil, tc.err
					}
					return answer(tc.status, tc.header)
				})}
				resp, err := (&http.Client{Transport: tr}).Get("http://user:secret@Example.TEST/a")
				if err == nil {
					resp.Body.Close()
				}
				if sent != 1 {
					t.Fatalf("sent %d requests, want 1", sent)
				}
				start := time.Now()
				hosts := tr.Hosts()
				if len(hosts) != 1 {
					t.Fatalf("Hosts() = %+v, want one host", hosts)
				}
				h := hosts[0]
				if h.Host != "http://example.test:80" || h.LastStatus != tc.lastStatus || h.Queued != 0 || h.InFlight != "" {
					t.Errorf("host %q last status %d queued %d in flight %q", h.Host, h.LastStatus, h.Queued, h.InFlight)
				}
				reason, until, paused := h.Paused(start)
				if !paused || reason != tc.reason || !until.Equal(start.Add(tc.until)) {
					t.Errorf("Paused = %v %q until +%v, want %q until +%v", paused, reason, until.Sub(start), tc.reason, tc.until)
				}
				if h.State.Slow != tc.slow || h.Breaker(start) != tc.breaker {
					t.Errorf("slow %d breaker %s, want %d %s", h.State.Slow, h.Breaker(start), tc.slow, tc.breaker)
				}
				// After the end, the host is no longer paused.
				if _, _, paused := h.Paused(start.Add(tc.until)); paused {
					t.Errorf("still paused at the end")
				}
			})
		})
	}
}

// Requests queued behind a slow one are counted; the one on the wire is
// shown by URL, without its password, since it was sent.
func TestHosts_QueuedAndInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		tr := &politeness.Transport{Policy: politeness.Policy{MinDelay: time.Second}, Base: rtFunc(func(r *http.Request) (*http.Response, error) {
			<-release
			return answer(200, nil)
		})}
		c := &http.Client{Transport: tr}
		var wg sync.WaitGroup
		start := time.Now()
		for _, p := range []string{"/one", "/two", "/three"} {
			wg.Go(func() {
				resp, err := c.Get("http://user:pw@a.test" + p)
				if err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			})
			synctest.Wait()
		}
		hs := tr.Hosts()
		if len(hs) != 1 {
			t.Fatalf("Hosts() = %+v", hs)
		}
		h := hs[0]
		if h.InFlight != "http://user:xxxxx@a.test/one" || !h.InFlightSince.Equal(start) || h.Queued != 2 {
			t.Errorf("in flight %q since %v, queued %d; want /one (redacted) since start, 2 queued", h.InFlight, h.InFlightSince.Sub(start), h.Queued)
		}
		close(release)
		wg.Wait()
		h = tr.Hosts()[0]
		if h.Queued != 0 || h.InFlight != "" || h.LastStatus != 200 {
			t.Errorf("after the crawl: %+v", h)
		}
		if _, _, paused := h.Paused(time.Now()); paused {
			t.Errorf("paused after 200s")
		}
	})
}

// Hosts is safe alongside RoundTrip (run with -race).
func TestHosts_Concurrent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := &politeness.Transport{Policy: politeness.Policy{MinDelay: -1}, Base: rtFunc(func(r *http.Request) (*http.Response, error) {
			return answer(200, nil)
		})}
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		wg.Go(func() {
			for ctx.Err() == nil {
				_ = tr.Hosts()
				time.Sleep(time.Millisecond)
			}
		})
		c := &http.Client{Transport: tr}
		for i := range 20 {
			resp, err := c.Get("http://h" + string(rune('a'+i%5)) + ".test/")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
		cancel()
		wg.Wait()
		if n := len(tr.Hosts()); n != 5 {
			t.Errorf("%d hosts, want 5", n)
		}
	})
}

// With a gate other than a MemoryGate (a shared one), Hosts reports the
// State this Transport last stored: the pause it set is there.
func TestHosts_OtherGateShowsWhatThisProcessSaw(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gate := struct{ politeness.Gate }{politeness.NewMemoryGate()} // not a *MemoryGate
		tr := &politeness.Transport{Gate: gate, Base: rtFunc(func(r *http.Request) (*http.Response, error) {
			return answer(http.StatusServiceUnavailable, http.Header{"Retry-After": {"40"}})
		})}
		resp, err := (&http.Client{Transport: tr}).Get("http://a.test/")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		hs := tr.Hosts()
		if len(hs) != 1 {
			t.Fatalf("Hosts() = %+v", hs)
		}
		reason, until, ok := hs[0].Paused(time.Now())
		if !ok || reason != "retry-after" || !until.Equal(time.Now().Add(40*time.Second)) || hs[0].LastStatus != 503 {
			t.Errorf("paused %v %q until +%v, last status %d", ok, reason, time.Until(until), hs[0].LastStatus)
		}
	})
}

// Memory stays bounded: a host idle for longer than the Policy's idle time
// is forgotten by Hosts' bookkeeping (and the MemoryGate) while the bot
// works on other hosts.
func TestHosts_ForgetsIdleHosts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := &politeness.Transport{
			Gate:   &politeness.MemoryGate{SweepEvery: time.Millisecond},
			Policy: politeness.Policy{MinDelay: -1, IdleTime: time.Second},
			Base:   rtFunc(func(r *http.Request) (*http.Response, error) { return answer(200, nil) }),
		}
		c := &http.Client{Transport: tr}
		getOK := func(u string) {
			resp, err := c.Get(u)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
		getOK("http://old.test/")
		if hs := tr.Hosts(); len(hs) != 1 || hs[0].Host != "http://old.test:80" {
			t.Fatalf("Hosts() = %+v", hs)
		}
		time.Sleep(2 * time.Second)
		for range 1100 {
			getOK("http://new.test/")
		}
		hs := tr.Hosts()
		if len(hs) != 1 || hs[0].Host != "http://new.test:80" || hs[0].LastStatus != 200 {
			t.Errorf("after 2 s idle and 1100 requests elsewhere: %+v, want only new.test", hs)
		}
		// Asked again, a forgotten host is tracked again.
		getOK("http://old.test/")
		hs = tr.Hosts()
		if len(hs) != 2 || hs[0].Host != "http://new.test:80" || hs[1].Host != "http://old.test:80" || hs[1].LastStatus != 200 {
			t.Errorf("old.test asked again: %+v, want it tracked again", hs)
		}
	})
}

// NextTurn is the instant the host's next request may start: the delay
// (or Crawl-delay when larger) after the last answer, or the end of a
// pause; zero for a host never asked. Every spelling of the host is one.
func TestTransport_NextTurn(t *testing.T) {
	for _, tt := range []struct {
		name   string
		crawl  time.Duration
		status int
		header http.Header
		want   time.Duration
	}{
		{"delay", 0, 200, nil, time.Second},
		{"crawl-delay", 3 * time.Second, 200, nil, 3 * time.Second},
		{"retry-after", 0, 429, http.Header{"Retry-After": {"60"}}, 60 * time.Second},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tr := &politeness.Transport{Policy: politeness.Policy{MinDelay: time.Second},
					Base: rtFunc(func(*http.Request) (*http.Response, error) { return answer(tt.status, tt.header) })}
				if tt.crawl > 0 {
					tr.CrawlDelay = func(*url.URL) (time.Duration, bool) { return tt.crawl, true }
				}
				u, _ := url.Parse("http://a.test/x")
				if got := tr.NextTurn(u); !got.IsZero() {
					t.Fatalf("NextTurn of a host never asked = %v; want zero", got)
				}
				resp, err := (&http.Client{Transport: tr}).Get(u.String())
				if err != nil {
					t.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				other, _ := url.Parse("http://A.TEST:80/y")
				if got := tr.NextTurn(other); !got.Equal(time.Now().Add(tt.want)) {
					t.Errorf("NextTurn = now+%v; want now+%v", time.Until(got), tt.want)
				}
			})
		})
	}
}

// Paused and Breaker read a HostStatus as plain data: a give-up comes
// first, then the breaker, then a pause, and each ends at its instant. A
// pause's reason is the Transport's own only when its pause event set that
// very pause; one set elsewhere (another process sharing the gate) reads
// "pause".
func TestHostStatus_PausedAndBreaker(t *testing.T) {
	now := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	later, muchLater := now.Add(time.Minute), now.Add(time.Hour)
	tests := []struct {
		name    string
		h       politeness.HostStatus
		reason  string
		until   time.Time
		ok      bool
		breaker string
	}{
		{"zero", politeness.HostStatus{}, "", time.Time{}, false, "closed"},
		{"own pause", politeness.HostStatus{PauseKind: politeness.EventPause, PauseReason: "ratelimit", PauseUntil: later,
			State: politeness.State{PauseUntil: later}}, "ratelimit", later, true, "closed"},
		{"pause set elsewhere after our own", politeness.HostStatus{PauseKind: politeness.EventPause, PauseReason: "retry-after", PauseUntil: now.Add(30 * time.Second),
			State: politeness.State{PauseUntil: later}}, "pause", later, true, "closed"},
		{"pause ends at its instant", politeness.HostStatus{State: politeness.State{PauseUntil: now}}, "", time.Time{}, false, "closed"},
		{"breaker before a pause", politeness.HostStatus{State: politeness.State{DownUntil: later, PauseUntil: muchLater}}, "connection errors", later, true, "open"},
		{"breaker closes at its instant", politeness.HostStatus{State: politeness.State{DownUntil: now}}, "", time.Time{}, false, "closed"},
		{"give-up before the breaker", politeness.HostStatus{State: politeness.State{GaveUpUntil: muchLater, DownUntil: later}}, "give-up", muchLater, true, "open"},
		{"give-up ends at its instant", politeness.HostStatus{State: politeness.State{GaveUpUntil: now, PauseUntil: later}}, "pause", later, true, "closed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			reason, until, ok := tc.h.Paused(now)
			if reason != tc.reason || !until.Equal(tc.until) || ok != tc.ok {
				t.Errorf("Paused = %q, %v, %v; want %q, %v, %v", reason, until, ok, tc.reason, tc.until, tc.ok)
			}
			if b := tc.h.Breaker(now); b != tc.breaker {
				t.Errorf("Breaker = %q, want %q", b, tc.breaker)
			}
		})
	}
}

// Hosts' bookkeeping forgets a host only when nothing of it is queued or in
// flight and it has been idle for longer than the idle time (its State
// expired: a State is kept up to its Expires instant). Over a gate other than
// a MemoryGate, Hosts shows that bookkeeping alone.
func TestHosts_SweepKeepsBusyAndRecentHosts(t *testing.T) {
	const idle = time.Second
	for _, tt := range []struct {
		name     string
		wait     time.Duration // from the end of a.test's first request to the requests elsewhere
		inFlight bool          // a second request to a.test is on the wire meanwhile
		kept     bool
	}{
		{"idle for exactly the idle time", idle, false, true},
		{"idle for longer", idle + time.Nanosecond, false, false},
		{"in flight after a long idle", 2 * idle, true, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				release := make(chan struct{})
				tr := &politeness.Transport{
					Gate:   struct{ politeness.Gate }{politeness.NewMemoryGate()}, // not a *MemoryGate
					Policy: politeness.Policy{MinDelay: -1, IdleTime: idle},
					Base: rtFunc(func(r *http.Request) (*http.Response, error) {
						if r.URL.Path == "/slow" {
							<-release
						}
						return answer(200, nil)
					}),
				}
				c := &http.Client{Transport: tr}
				get := func(u string) {
					resp, err := c.Get(u)
					if err != nil {
						t.Error(err)
						return
					}
					resp.Body.Close()
				}
				get("http://a.test/")
				time.Sleep(tt.wait)
				var wg sync.WaitGroup
				if tt.inFlight {
					wg.Go(func() { get("http://a.test/slow") })
					synctest.Wait()
				}
				for range 1100 { // more request ends than between two sweeps
					get("http://b.test/")
				}
				var a *politeness.HostStatus
				hs := tr.Hosts()
				for i := range hs {
					if hs[i].Host == "http://a.test:80" {
						a = &hs[i]
					}
				}
				switch {
				case tt.kept && a == nil:
					t.Errorf("a.test forgotten: %+v", hs)
				case !tt.kept && a != nil:
					t.Errorf("a.test kept: %+v", *a)
				case tt.inFlight && a.InFlight != "http://a.test/slow":
					t.Errorf("a.test in flight %q, want http://a.test/slow", a.InFlight)
				}
				close(release)
				wg.Wait()
			})
		})
	}
}
