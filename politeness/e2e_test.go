package politeness_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/goodbot-go/goodbot/politeness"
)

// site is a loopback test host that records each request's start and end
// (handler entry and return; the client's end is later, so the gaps the
// checker sees are never larger than the real ones) and notes overlaps.
type site struct {
	*httptest.Server
	answer func(n int) (status int, h http.Header)

	mu       sync.Mutex // guards the fields below
	recs     []rec
	busy     bool
	overlaps int
}

func newSite(t *testing.T, answer func(n int) (int, http.Header)) *site {
	s := &site{answer: answer}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *site) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	if s.busy {
		s.overlaps++
	}
	s.busy = true
	n := len(s.recs)
	s.recs = append(s.recs, rec{host: s.URL, path: r.URL.Path, start: time.Now()})
	s.mu.Unlock()

	status, h := http.StatusOK, http.Header(nil)
	if s.answer != nil {
		status, h = s.answer(n)
	}
	for k, v := range h {
		w.Header()[k] = v
	}
	time.Sleep(2 * time.Millisecond) // server latency; not a wait being proven
	w.WriteHeader(status)
	fmt.Fprintf(w, "page %d", n)

	s.mu.Lock()
	s.busy = false
	s.recs[n].end, s.recs[n].status = time.Now(), status
	s.mu.Unlock()
}

func (s *site) records() []rec {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]rec(nil), s.recs...)
}

// TestTransport_E2E_C3_C4_B4_Loopback runs several real loopback hosts,
// including one with a Crawl-delay and one that rate-limits, and checks the
// same invariants as the fake-time tests: no overlap, gaps at least the
// delay, no request during a pause.
func TestTransport_E2E_C3_C4_B4_Loopback(t *testing.T) {
	const (
		minDelay   = 20 * time.Millisecond
		crawlDelay = 40 * time.Millisecond
		backoff    = 60 * time.Millisecond
	)
	plain1 := newSite(t, nil)
	plain2 := newSite(t, nil)
	crawly := newSite(t, nil)
	limited := newSite(t, func(n int) (int, http.Header) {
		if n == 2 {
			return http.StatusTooManyRequests, nil // no Retry-After: default backoff
		}
		return http.StatusOK, nil
	})
	sites := []*site{plain1, plain2, crawly, limited}

	base := &http.Transport{}
	defer base.CloseIdleConnections()
	tr := &politeness.Transport{
		Base:   base,
		Policy: politeness.Policy{MinDelay: minDelay, DefaultBackoff: backoff, MaxSlowdown: -1},
		CrawlDelay: func(u *url.URL) (time.Duration, bool) {
			return crawlDelay, "http://"+u.Host == crawly.URL
		},
	}
	c := &http.Client{Transport: tr}
	var wg sync.WaitGroup
	for _, s := range sites {
		for i := range 6 {
			wg.Go(func() { mustGet(t, c, fmt.Sprintf("%s/%d", s.URL, i)) })
		}
	}
	wg.Wait()
	for _, s := range sites {
		s.mu.Lock()
		if s.overlaps != 0 {
			t.Errorf("C3 violated: %d overlapping requests on %s", s.overlaps, s.URL)
		}
		s.mu.Unlock()
		check(t, s, func(prev rec) time.Duration {
			switch {
			case prev.status == http.StatusTooManyRequests:
				return backoff
			case s == crawly:
				return crawlDelay
			}
			return minDelay
		})
		if n := len(s.records()); n != 6 {
			t.Errorf("%s saw %d requests, want 6", s.URL, n)
		}
	}
}
