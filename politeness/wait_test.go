package politeness_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/goodbot-go/goodbot/politeness"
)

// waitCase sets a host up (through tr and c), then says how long Wait
// must take from there and how long the request after it then waits in
// RoundTrip.
type waitCase struct {
	name    string
	policy  politeness.Policy
	answer  func(host string, n int) reply
	setup   func(t *testing.T, c *http.Client)
	ctx     func() (context.Context, context.CancelFunc)
	wait    time.Duration // Wait's duration
	reason  string        // of the one EventWait Wait reports; "" for none
	err     error         // Wait's error
	refused error         // RoundTrip's error after Wait, if it refuses
	inRT    time.Duration // how long RoundTrip waits after Wait
}

func TestTransport_Wait(t *testing.T) {
	oneGet := func(t *testing.T, c *http.Client) { mustGet(t, c, hostA+"/first") }
	status := func(code int, h http.Header) func(string, int) reply {
		return func(_ string, n int) reply {
			if n == 0 {
				return reply{status: code, header: h}
			}
			return reply{status: 200}
		}
	}
	bg := func() (context.Context, context.CancelFunc) { return context.WithCancel(context.Background()) }
	tests := []waitCase{
		{name: "new host", policy: politeness.Policy{MinDelay: 10 * time.Second}, setup: func(*testing.T, *http.Client) {}},
		{name: "gap after an answer", policy: politeness.Policy{MinDelay: 10 * time.Second}, setup: oneGet,
			wait: 10 * time.Second, reason: "delay"},
		{name: "no delay", policy: politeness.Policy{MinDelay: -1}, setup: oneGet},
		{name: "retry-after pause", policy: politeness.Policy{MinDelay: time.Second},
			answer: status(429, http.Header{"Retry-After": {"30"}}), setup: oneGet,
			wait: 30 * time.Second, reason: "pause"},
		{name: "pause beyond the deadline", policy: politeness.Policy{MinDelay: time.Second},
			answer: status(429, http.Header{"Retry-After": {"600"}}), setup: oneGet,
			ctx: func() (context.Context, context.CancelFunc) {
				return context.WithTimeout(context.Background(), time.Minute)
			},
			refused: politeness.ErrRateLimited},
		{name: "given up", policy: politeness.Policy{MinDelay: time.Second, MaxRetryAfter: time.Minute, RetryAfterMode: politeness.GiveUp},
			answer: status(429, http.Header{"Retry-After": {"7200"}}), setup: oneGet, refused: politeness.ErrGaveUp},
		{name: "canceled while waiting", policy: politeness.Policy{MinDelay: time.Hour}, setup: oneGet,
			ctx: func() (context.Context, context.CancelFunc) {
				return context.WithTimeout(context.Background(), 5*time.Second)
			},
			wait: 5 * time.Second, reason: "delay", err: context.DeadlineExceeded},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := &fakeWeb{answer: tc.answer}
				var mu sync.Mutex
				var waits []politeness.Event
				tr := &politeness.Transport{Base: w, Policy: tc.policy, Observe: func(e politeness.Event) {
					if e.Kind == politeness.EventWait {
						mu.Lock()
						waits = append(waits, e)
						mu.Unlock()
					}
				}}
				c := &http.Client{Transport: tr}
				tc.setup(t, c)
				before := w.requests(hostA)
				mu.Lock()
				waits = nil
				mu.Unlock()
				if tc.ctx == nil {
					tc.ctx = bg
				}
				ctx, cancel := tc.ctx()
				defer cancel()
				u, _ := url.Parse(hostA + "/next")
				start := time.Now()
				err := tr.Wait(ctx, u)
				if got := time.Since(start); got != tc.wait {
					t.Errorf("Wait took %v, want %v", got, tc.wait)
				}
				if !errors.Is(err, tc.err) || (err == nil) != (tc.err == nil) {
					t.Fatalf("Wait = %v, want %v", err, tc.err)
				}
				mu.Lock()
				got := waits
				mu.Unlock()
				if tc.reason == "" && len(got) != 0 {
					t.Errorf("Wait reported %+v, want no wait", got)
				}
				if tc.reason != "" && (len(got) != 1 || got[0].Reason != tc.reason || got[0].Duration != tc.wait && tc.err == nil) {
					t.Errorf("Wait reported %+v, want one wait for %v (%s)", got, tc.wait, tc.reason)
				}
				if tc.err != nil {
					return
				}
				start = time.Now()
				_, err = get(ctx, c, hostA+"/next")
				if !errors.Is(err, tc.refused) || (err == nil) != (tc.refused == nil) {
					t.Fatalf("RoundTrip after Wait = %v, want %v", err, tc.refused)
				}
				if d := time.Since(start); d != tc.inRT {
					t.Errorf("RoundTrip after Wait waited %v more, want %v", d, tc.inRT)
				}
				want := before + 1
				if tc.refused != nil {
					want = before
				}
				if n := w.requests(hostA); n != want {
					t.Errorf("%d requests reached the host, want %d", n, want)
				}
				check(t, w, func(rec) time.Duration { return 0 })
			})
		})
	}
}

// A busy host (its answer not read yet): Wait returns at once, and the
// request then queues in RoundTrip for the turn and the gap.
func TestTransport_WaitOnBusyHost(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := &fakeWeb{}
		c, tr := newClient(w, politeness.Policy{MinDelay: 10 * time.Second})
		resp, err := c.Get(hostA + "/held")
		if err != nil {
			t.Fatal(err)
		}
		u, _ := url.Parse(hostA + "/next")
		start := time.Now()
		if err := tr.Wait(context.Background(), u); err != nil || time.Since(start) != 0 {
			t.Fatalf("Wait on a busy host = %v after %v, want nil at once", err, time.Since(start))
		}
		done := make(chan struct{})
		go func() { mustGet(t, c, hostA+"/next"); close(done) }()
		time.Sleep(3 * time.Second)
		resp.Body.Close()
		<-done
		if d := time.Since(start); d != 13*time.Second {
			t.Errorf("the next request ended after %v, want 13s (3 s held, then the 10 s gap)", d)
		}
		check(t, w, constGap(10*time.Second))
	})
}

// A host with a request queued for its gap is busy too: Wait returns at
// once (RoundTrip queues behind that request), though the gap is still
// to come.
func TestTransport_WaitOnHostWithQueuedRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := &fakeWeb{}
		c, tr := newClient(w, politeness.Policy{MinDelay: 10 * time.Second})
		mustGet(t, c, hostA+"/first")
		done := make(chan struct{})
		go func() { mustGet(t, c, hostA+"/queued"); close(done) }()
		synctest.Wait() // the second request waits in RoundTrip for the gap
		u, _ := url.Parse(hostA + "/next")
		start := time.Now()
		if err := tr.Wait(context.Background(), u); err != nil || time.Since(start) != 0 {
			t.Errorf("Wait on a host with a queued request = %v after %v, want nil at once", err, time.Since(start))
		}
		<-done
		if n := w.requests(hostA); n != 2 {
			t.Fatalf("%d requests reached the web, want 2", n)
		}
		check(t, w, constGap(10*time.Second))
	})
}

// Wait counts as queued for Hosts while it waits, and a Gate other than
// MemoryGate makes it return at once.
func TestTransport_WaitQueuedAndOtherGates(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := &fakeWeb{}
		c, tr := newClient(w, politeness.Policy{MinDelay: 10 * time.Second})
		mustGet(t, c, hostA+"/first")
		u, _ := url.Parse(hostA + "/next")
		done := make(chan error, 1)
		go func() { done <- tr.Wait(context.Background(), u) }()
		synctest.Wait()
		hs := tr.Hosts()
		if len(hs) != 1 || hs[0].Queued != 1 {
			t.Errorf("Hosts while Wait waits = %+v, want 1 queued", hs)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if hs := tr.Hosts(); len(hs) != 1 || hs[0].Queued != 0 {
			t.Errorf("Hosts after Wait = %+v, want none queued", hs)
		}

		other := &politeness.Transport{Base: w, Policy: politeness.Policy{MinDelay: 10 * time.Second},
			Gate: gateOnly{new(politeness.MemoryGate)}}
		oc := &http.Client{Transport: other}
		mustGet(t, oc, "https://b.example/first")
		ub, _ := url.Parse("https://b.example/next")
		start := time.Now()
		if err := other.Wait(context.Background(), ub); err != nil || time.Since(start) != 0 {
			t.Errorf("Wait with another Gate = %v after %v, want nil at once", err, time.Since(start))
		}
		mustGet(t, oc, "https://b.example/next") // RoundTrip still keeps the gap
		if d := time.Since(start); d != 10*time.Second {
			t.Errorf("request after Wait with another Gate sent after %v, want 10s", d)
		}
	})
}

// gateOnly hides every method of a Gate but Acquire.
type gateOnly struct{ g politeness.Gate }

func (g gateOnly) Acquire(ctx context.Context, host string, ready func(politeness.State) (time.Duration, error)) (politeness.Lease, error) {
	return g.g.Acquire(ctx, host, ready)
}
