package demo

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/goodbot-go/goodbot/examples/internal/demoweb"
	"github.com/goodbot-go/goodbot/fetch/fetchtest"
)

// configTag starts the evidence of a promise kept by configuration that a
// scaled run cannot show (a day's robots.txt cache, a source address): the
// demo prints it as "config", not "kept".
const configTag = "config: "

// configured is a claim check for a promise kept by configuration.
func configured(f func() (bool, string)) func(*record) (bool, string) {
	return func(*record) (bool, string) {
		ok, ev := f()
		return ok, configTag + ev
	}
}

// fetched fails unless path was requested on host.
func fetched(host, path string) fetchtest.Check {
	return func(reqs []fetchtest.Request) []string {
		for _, q := range reqs {
			if q.Host == host && q.Path == path {
				return nil
			}
		}
		return []string{fmt.Sprintf("%s%s was never requested", host, path)}
	}
}

// noQuery fails when a request to host had a query containing s.
func noQuery(host, s string) fetchtest.Check {
	return func(reqs []fetchtest.Request) []string {
		var out []string
		for _, q := range reqs {
			if q.Host == host && strings.Contains(q.RawQuery, s) {
				out = append(out, q.URL()+" was requested")
			}
		}
		return out
	}
}

// notFetchedAnywhere fails when any host was asked for one of paths.
func notFetchedAnywhere(paths ...string) fetchtest.Check {
	return func(reqs []fetchtest.Request) []string {
		var out []string
		for _, q := range reqs {
			if contains(paths, q.Path) {
				out = append(out, q.URL()+" was requested")
			}
		}
		return out
	}
}

// nextAfter returns the path of the request that followed the first answer
// with status, and how long after that answer it started.
func nextAfter(reqs []fetchtest.Request, status int) string {
	for i, q := range reqs {
		if q.Status == status && i+1 < len(reqs) {
			return fmt.Sprintf("%s, %s later", reqs[i+1].Path, reqs[i+1].Start.Sub(q.End).Round(time.Millisecond))
		}
	}
	return "none"
}

// rateLimited is B6 on the abbey: after the 429 with Retry-After: 1 no
// request for a second; after the 503 without one, none for the default
// backoff (one minute, scaled); and after the pauses every gap is at least
// twice the host's delay (base). Each bound holds however busy the machine
// is: a slow machine only widens gaps.
func rateLimited(r *record, base, backoff time.Duration) (bool, string) {
	reqs := r.to(demoweb.Abbey)
	i429, i503 := -1, -1
	for i, q := range reqs {
		switch {
		case q.Status == http.StatusTooManyRequests && i429 < 0:
			i429 = i
		case q.Status == http.StatusServiceUnavailable && i503 < 0:
			i503 = i
		}
	}
	if i429 < 0 || i503 < 0 || i429+1 >= len(reqs) || i503+1 >= len(reqs) {
		return false, fmt.Sprintf("the abbey's 429 and 503 were not both seen and followed (%s)", paths(reqs))
	}
	gap := func(i int) time.Duration { return reqs[i+1].Start.Sub(reqs[i].End) }
	minGap := func(from, to int) time.Duration {
		g := time.Duration(-1)
		for i := from; i < to; i++ {
			if g < 0 || gap(i) < g {
				g = gap(i)
			}
		}
		return g
	}
	last := max(i429, i503)
	before, after := minGap(0, min(i429, i503)), minGap(last+1, len(reqs)-1)
	ok := gap(i429) >= time.Second && gap(i503) >= backoff && after >= 2*base
	return ok, fmt.Sprintf("429 with Retry-After: 1: next request %s later; 503 without Retry-After: %s later (one minute, scaled to %s); "+
		"smallest gap before the pauses %s, after them %s (the %s delay at least doubled): crawled more slowly",
		gap(i429).Round(time.Millisecond), gap(i503).Round(time.Millisecond), backoff,
		before.Round(time.Millisecond), after.Round(time.Millisecond), base)
}

// exactURLs is D3: on every listing host, the requests other than
// robots.txt are the listing URL and then only the redirects it gave.
func exactURLs(r *record) (bool, string) {
	by := map[string][]fetchtest.Request{}
	for _, q := range r.reqs {
		if q.Path != "/robots.txt" {
			by[q.Host] = append(by[q.Host], q)
		}
	}
	for h, qs := range by {
		for i, q := range qs {
			want := "/partners"
			if i > 0 {
				want = qs[i-1].RespHeader.Get("Location")
			}
			if q.Path != want {
				return false, fmt.Sprintf("%s%s was requested, neither a listing URL nor a redirect it gave", h, q.Path)
			}
		}
	}
	return len(r.to(demoweb.Directory)) == 0, "only each listing's exact URL and the redirects it gave were requested: no links followed, no sitemap, not the directory itself"
}

// bounds is D11: a fourth redirect is not followed, reading stops at 5 MB,
// and a page that never answers is given up at the time limit.
func bounds(r *record, scale float64) (bool, string) {
	chain := len(r.to(demoweb.Chain)) - len(r.to(demoweb.Chain, "/robots.txt"))
	stall := r.result(demoweb.ListingURL(demoweb.Stall))
	huge := r.result(demoweb.ListingURL(demoweb.Huge))
	ok := chain == 4 && strings.Contains(huge.Reason, "too_large") && huge.Bytes <= 5<<20 &&
		strings.Contains(stall.Reason+stall.Outcome, "timeout")
	return ok, fmt.Sprintf("chain.test: %d requests (the listing URL and 3 redirects), then %s; huge.test: read %.1f MB of its 6 MB page, then stopped and closed the connection (%s); stall.test: given up as a timeout (15 s scaled by %g, at least 2 s)",
		chain, r.result(demoweb.ListingURL(demoweb.Chain)).Reason, float64(huge.Bytes)/1e6, huge.Reason, scale)
}

func firstHeader(reqs []fetchtest.Request, name string) string {
	for _, q := range reqs {
		if v := q.RespHeader.Get(name); v != "" {
			return name + ": " + v
		}
	}
	return "no " + name
}
