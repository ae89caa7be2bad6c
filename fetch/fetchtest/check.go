package fetchtest

import (
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A Check inspects recorded requests (in arrival order) and returns one
// message per broken promise; none means the promise was kept.
//
// Every check in this package also fails when there is nothing for it to
// judge, so that a bot that returned before doing its work cannot pass: on no
// requests at all; the gap checks ([NoOverlap], [MinGap], [MinGapOn]) when no
// host got two requests (no gap was measured); [HonoursRetryAfter] when no
// answer asked for a pause. A host that must get no request at all is
// checked with [None]; [AtLeast] asks for a number of requests to a host.
type Check func(reqs []Request) []string

// emptyRun is the violation every check reports on a run without requests.
const emptyRun = "no requests were recorded: the run did nothing to check"

// Check runs checks over the requests recorded so far and reports each
// violation with t.Errorf. It returns whether all checks passed.
func (w *Web) Check(t testing.TB, checks ...Check) bool {
	t.Helper()
	v := Violations(w.Requests(), checks...)
	for _, msg := range v {
		t.Errorf("fetchtest: %s", msg)
	}
	return len(v) == 0
}

// Violations runs checks over reqs and returns all their messages.
func Violations(reqs []Request, checks ...Check) []string {
	var out []string
	for _, c := range checks {
		out = append(out, c(reqs)...)
	}
	return out
}

// byHost groups reqs by host, each group sorted by start time.
func byHost(reqs []Request) map[string][]Request {
	m := map[string][]Request{}
	for _, r := range reqs {
		m[r.Host] = append(m[r.Host], r)
	}
	for _, g := range m {
		sort.SliceStable(g, func(i, j int) bool { return g[i].Start.Before(g[j].Start) })
	}
	return m
}

func sortedHosts(m map[string][]Request) []string {
	hosts := make([]string, 0, len(m))
	for h := range m {
		hosts = append(hosts, h)
	}
	sort.Strings(hosts)
	return hosts
}

// NoOverlap fails when two requests to one host were in flight at the same
// time: each request must start after the previous one ended.
func NoOverlap() Check {
	return func(reqs []Request) []string {
		m := byHost(reqs)
		out := needPairs(m, "", "NoOverlap")
		for _, h := range sortedHosts(m) {
			g := m[h]
			for i := 1; i < len(g); i++ {
				prev, cur := g[i-1], g[i]
				if prev.End.IsZero() || cur.Start.Before(prev.End) {
					out = append(out, fmt.Sprintf("overlap on %s: %s (#%d) started before %s (#%d) ended",
						h, cur.URL(), cur.Seq, prev.URL(), prev.Seq))
				}
			}
		}
		return out
	}
}

// RobotsFirst fails when a host's first request was not for /robots.txt
// (robots.txt is read before the first request to a host).
func RobotsFirst() Check {
	return func(reqs []Request) []string {
		if len(reqs) == 0 {
			return []string{emptyRun}
		}
		var out []string
		m := byHost(reqs)
		for _, h := range sortedHosts(m) {
			if first := m[h][0]; first.Path != "/robots.txt" {
				out = append(out, fmt.Sprintf("first request to %s was %s (#%d), not /robots.txt", h, first.URL(), first.Seq))
			}
		}
		return out
	}
}

// MinGap fails when, on any host, a request started less than d after the
// previous one ended, or when no host got two requests.
func MinGap(d time.Duration) Check { return minGap("", d) }

// MinGapOn is [MinGap] for one host only: it fails when host got fewer than
// two requests.
func MinGapOn(host string, d time.Duration) Check { return minGap(HostName(host), d) }

func minGap(only string, d time.Duration) Check {
	return func(reqs []Request) []string {
		m := byHost(reqs)
		out := needPairs(m, only, "MinGap")
		for _, h := range sortedHosts(m) {
			if only != "" && h != only {
				continue
			}
			g := m[h]
			for i := 1; i < len(g); i++ {
				prev, cur := g[i-1], g[i]
				if prev.End.IsZero() {
					continue // reported by NoOverlap
				}
				if gap := cur.Start.Sub(prev.End); gap < d {
					out = append(out, fmt.Sprintf("gap on %s before %s (#%d) was %v, want >= %v",
						h, cur.URL(), cur.Seq, gap, d))
				}
			}
		}
		return out
	}
}

// needPairs returns a violation when the gap checks have nothing to
// measure: no requests, or no host (only: that host) with two of them.
func needPairs(m map[string][]Request, only, check string) []string {
	if len(m) == 0 {
		return []string{emptyRun}
	}
	if only != "" {
		if n := len(m[only]); n < 2 {
			return []string{fmt.Sprintf("%s: %s got %d requests, need at least 2 to measure a gap", check, only, n)}
		}
		return nil
	}
	for _, g := range m {
		if len(g) >= 2 {
			return nil
		}
	}
	return []string{fmt.Sprintf("%s: no host got two requests, no gap was measured", check)}
}

// retryAfterUntil returns when the pause asked for by r's answer ends.
func retryAfterUntil(r Request) (time.Time, bool) {
	switch r.Status {
	case http.StatusTooManyRequests, http.StatusServiceUnavailable, 509:
	default:
		return time.Time{}, false
	}
	v := strings.TrimSpace(r.RespHeader.Get("Retry-After"))
	if v == "" {
		return time.Time{}, false
	}
	if s, err := strconv.ParseInt(v, 10, 64); err == nil && s >= 0 {
		return r.End.Add(time.Duration(s) * time.Second), true
	}
	if t, err := http.ParseTime(v); err == nil {
		return t, true
	}
	return time.Time{}, false
}

// HonoursRetryAfter fails when a request reached a host while a pause it
// asked for with a 429, 503 or 509 answer and a Retry-After header (seconds
// or HTTP-date) was still running. The pause covers the
// whole host, not just the URL. It also fails when no such answer was
// recorded: there was no pause to honour.
func HonoursRetryAfter() Check {
	return func(reqs []Request) []string {
		if len(reqs) == 0 {
			return []string{emptyRun}
		}
		var out []string
		paused := false
		m := byHost(reqs)
		for _, h := range sortedHosts(m) {
			g := m[h]
			for i, r := range g {
				until, ok := retryAfterUntil(r)
				if !ok {
					continue
				}
				paused = true
				for _, next := range g[i+1:] {
					if next.Start.Before(until) {
						out = append(out, fmt.Sprintf("%s (#%d) came %v before the end of the Retry-After pause asked by #%d (%d)",
							next.URL(), next.Seq, until.Sub(next.Start), r.Seq, r.Status))
					}
				}
			}
		}
		if !paused {
			out = append(out, "HonoursRetryAfter: no 429, 503 or 509 answer with Retry-After was recorded: no pause to honour")
		}
		return out
	}
}

// NoCookies fails when any request carried a Cookie header.
func NoCookies() Check {
	return each(func(r Request) string {
		if c := r.Header.Values("Cookie"); len(c) > 0 {
			return fmt.Sprintf("%s (#%d) sent cookies %q", r.URL(), r.Seq, c)
		}
		return ""
	})
}

// NoCredentials fails when any request carried Authorization or
// Proxy-Authorization.
func NoCredentials() Check {
	return each(func(r Request) string {
		if r.Header.Get("Authorization") != "" || r.Header.Get("Proxy-Authorization") != "" {
			return fmt.Sprintf("%s (#%d) sent credentials", r.URL(), r.Seq)
		}
		return ""
	})
}

// OnlyGetHead fails on any method other than GET and HEAD.
func OnlyGetHead() Check {
	return each(func(r Request) string {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			return fmt.Sprintf("%s (#%d) used method %s", r.URL(), r.Seq, r.Method)
		}
		return ""
	})
}

// UserAgent fails on any request whose User-Agent is not exactly ua.
func UserAgent(ua string) Check {
	return HeaderIs("User-Agent", ua)
}

// From fails on any request whose From header is not exactly from.
func From(from string) Check {
	return HeaderIs("From", from)
}

// HeaderIs fails on any request without exactly one name header equal to
// want.
func HeaderIs(name, want string) Check {
	return each(func(r Request) string {
		got := r.Header.Values(name)
		if len(got) != 1 || got[0] != want {
			return fmt.Sprintf("%s (#%d) sent %s %q, want %q", r.URL(), r.Seq, name, got, want)
		}
		return ""
	})
}

// NotFetched fails when host received a request for any of paths. Like
// every check it fails on a run without requests; host itself may have got
// none.
func NotFetched(host string, paths ...string) Check {
	host = HostName(host)
	return each(func(r Request) string {
		if r.Host == host && contains(paths, r.Path) {
			return fmt.Sprintf("%s (#%d) was fetched but must not be", r.URL(), r.Seq)
		}
		return ""
	})
}

// Allowed fails on any request (other than for /robots.txt) for which
// allowed(host, pathAndQuery) is false: plug in a robots.txt matcher to catch
// disallowed paths.
func Allowed(allowed func(host, pathQuery string) bool) Check {
	return each(func(r Request) string {
		if r.Path == "/robots.txt" {
			return ""
		}
		pq := r.Path
		if r.RawQuery != "" {
			pq += "?" + r.RawQuery
		}
		if !allowed(r.Host, pq) {
			return fmt.Sprintf("%s (#%d) is disallowed but was fetched", r.URL(), r.Seq)
		}
		return ""
	})
}

// Signed fails on any request for which verify returns an error.
// verify gets a copy of the server-side request (no body).
func Signed(verify func(*http.Request) error) Check {
	return each(func(r Request) string {
		req := r.HTTPRequest()
		if req == nil {
			return fmt.Sprintf("%s (#%d) has no recorded request", r.URL(), r.Seq)
		}
		if req.Header.Get("Signature") == "" || req.Header.Get("Signature-Input") == "" {
			return fmt.Sprintf("%s (#%d) is not signed", r.URL(), r.Seq)
		}
		if err := verify(req); err != nil {
			return fmt.Sprintf("%s (#%d) has a bad signature: %v", r.URL(), r.Seq, err)
		}
		return ""
	})
}

// each applies f to every request; it fails on a run without requests.
func each(f func(Request) string) Check {
	return func(reqs []Request) []string {
		if len(reqs) == 0 {
			return []string{emptyRun}
		}
		var out []string
		for _, r := range reqs {
			if msg := f(r); msg != "" {
				out = append(out, msg)
			}
		}
		return out
	}
}

// SignedOnArrival fails on any request that was not verified on arrival (see
// [Web.VerifyWith]) or whose verification failed.
func SignedOnArrival() Check {
	return each(func(r Request) string {
		switch {
		case !r.Verified:
			return fmt.Sprintf("%s (#%d) was not verified (Web.VerifyWith not set)", r.URL(), r.Seq)
		case r.VerifyErr != nil:
			return fmt.Sprintf("%s (#%d) failed verification on arrival: %v", r.URL(), r.Seq, r.VerifyErr)
		}
		return ""
	})
}

// AtLeast fails when host got fewer than n requests: paired with the other
// checks, it says how much work the run must have done for them to mean
// something.
func AtLeast(host string, n int) Check {
	host = strings.ToLower(host)
	return func(reqs []Request) []string {
		got := 0
		for _, r := range reqs {
			if r.Host == host {
				got++
			}
		}
		if got < n {
			return []string{fmt.Sprintf("%s got %d requests, want at least %d", host, got, n)}
		}
		return nil
	}
}

// None fails when host received any request at all (a blocked domain, a
// host that must never be reached), and, like every check, on a run without
// requests: the other hosts show that the run did its work.
func None(host string) Check {
	host = strings.ToLower(host)
	return func(reqs []Request) []string {
		if len(reqs) == 0 {
			return []string{emptyRun}
		}
		var out []string
		for _, r := range reqs {
			if r.Host == host {
				out = append(out, fmt.Sprintf("%s (#%d) was requested but %s must get no request", r.URL(), r.Seq, host))
			}
		}
		return out
	}
}
