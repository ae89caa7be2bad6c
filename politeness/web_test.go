package politeness_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// reply is what the fake web answers to one request.
type reply struct {
	status  int
	header  http.Header
	err     error         // a connection error instead of a response
	latency time.Duration // time to first byte (fake time in a bubble)
}

// rec is one request seen by the fake web: host key, start, and end (body
// read to EOF or closed, or the failure).
type rec struct {
	host       string
	n          int // index of the request on its host
	path       string
	start, end time.Time
	status     int
	failed     bool
}

// fakeWeb is an in-memory RoundTripper that records each request's start and
// end per host and notes any overlap on a host. answer decides the reply for
// the n-th request (0-based) to a host; nil answers 200.
type fakeWeb struct {
	answer func(host string, n int) reply
	// server, when set, names the one real host every request reaches,
	// whatever the URL's spelling of it (the test sends only spellings of
	// that host); otherwise each scheme://host spelling is its own host.
	server string

	mu       sync.Mutex // guards the fields below
	recs     []rec
	count    map[string]int
	busy     map[string]bool
	overlaps []string
}

func (w *fakeWeb) RoundTrip(req *http.Request) (*http.Response, error) {
	host := req.URL.Scheme + "://" + req.URL.Host
	if w.server != "" {
		host = w.server
	}
	w.mu.Lock()
	if w.count == nil {
		w.count, w.busy = map[string]int{}, map[string]bool{}
	}
	n := w.count[host]
	w.count[host]++
	if w.busy[host] {
		w.overlaps = append(w.overlaps, fmt.Sprintf("%s at %v", host, time.Now()))
	}
	w.busy[host] = true
	i := len(w.recs)
	w.recs = append(w.recs, rec{host: host, n: n, path: req.URL.Path, start: time.Now()})
	w.mu.Unlock()

	rp := reply{status: http.StatusOK}
	if w.answer != nil {
		rp = w.answer(host, n)
	}
	if rp.latency > 0 {
		time.Sleep(rp.latency)
	}
	if rp.err != nil {
		w.finish(i, 0, true)
		return nil, rp.err
	}
	h := rp.header
	if h == nil {
		h = http.Header{}
	}
	return &http.Response{
		StatusCode: rp.status,
		Header:     h,
		Body:       &recBody{w: w, i: i, status: rp.status, r: strings.NewReader("hello")},
		Request:    req,
	}, nil
}

func (w *fakeWeb) finish(i, status int, failed bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	r := &w.recs[i]
	if !r.end.IsZero() {
		return
	}
	r.end, r.status, r.failed = time.Now(), status, failed
	w.busy[r.host] = false
}

func (w *fakeWeb) records() []rec {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]rec(nil), w.recs...)
}

func (w *fakeWeb) requests(host string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.count[host]
}

type recBody struct {
	w      *fakeWeb
	i      int
	status int
	r      *strings.Reader
}

func (b *recBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err == io.EOF {
		b.w.finish(b.i, b.status, false)
	}
	return n, err
}

func (b *recBody) Close() error {
	b.w.finish(b.i, b.status, false)
	return nil
}

// check is the site owner's checker: per host, requests never overlap and
// the gap from one request's end to the next one's start is at least
// minGap(previous request). A rate-limit pause is expressed through minGap.
// It also fails on overlaps the fake web saw while they happened.
func check(t *testing.T, w interface{ records() []rec }, minGap func(prev rec) time.Duration) {
	t.Helper()
	if fw, ok := w.(*fakeWeb); ok {
		fw.mu.Lock()
		for _, o := range fw.overlaps {
			t.Errorf("C3 violated: overlapping requests on %s", o)
		}
		fw.mu.Unlock()
	}
	for _, v := range violations(w.records(), minGap) {
		t.Error(v)
	}
}

func violations(recs []rec, minGap func(prev rec) time.Duration) []string {
	byHost := map[string][]rec{}
	for _, r := range recs {
		byHost[r.host] = append(byHost[r.host], r)
	}
	var out []string
	for host, rs := range byHost {
		sort.Slice(rs, func(i, j int) bool { return rs[i].start.Before(rs[j].start) })
		for i := 1; i < len(rs); i++ {
			prev, cur := rs[i-1], rs[i]
			if prev.end.IsZero() || cur.start.Before(prev.end) {
				out = append(out, fmt.Sprintf("C3 violated on %s: request %d started at %v before request %d ended at %v",
					host, i, cur.start, i-1, prev.end))
				continue
			}
			if gap, want := cur.start.Sub(prev.end), minGap(prev); gap < want {
				out = append(out, fmt.Sprintf("gap violated on %s: %v between requests %d and %d (status %d), want >= %v",
					host, gap, i-1, i, prev.status, want))
			}
		}
	}
	return out
}

// gaps returns the start-to-previous-end gaps on host, in order.
func gaps(w *fakeWeb, host string) []time.Duration {
	var rs []rec
	for _, r := range w.records() {
		if r.host == host {
			rs = append(rs, r)
		}
	}
	sort.Slice(rs, func(i, j int) bool { return rs[i].start.Before(rs[j].start) })
	var out []time.Duration
	for i := 1; i < len(rs); i++ {
		out = append(out, rs[i].start.Sub(rs[i-1].end))
	}
	return out
}

func constGap(d time.Duration) func(rec) time.Duration { return func(rec) time.Duration { return d } }

// get fetches url through c, reads the body to EOF and closes it.
func get(ctx context.Context, c *http.Client, url string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, err
}

// mustGet is get that reports errors.
func mustGet(t *testing.T, c *http.Client, url string) int {
	t.Helper()
	status, err := get(context.Background(), c, url)
	if err != nil {
		t.Errorf("GET %s: %v", url, err)
	}
	return status
}

// readCloseCounter is a request body that counts Close calls.
type readCloseCounter struct {
	mu     sync.Mutex
	closes int
}

func (r *readCloseCounter) Read([]byte) (int, error) { return 0, io.EOF }
func (r *readCloseCounter) Close() error {
	r.mu.Lock()
	r.closes++
	r.mu.Unlock()
	return nil
}
func (r *readCloseCounter) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.closes
}

var errConnRefused = errors.New("fake: connection refused")
