package politeness_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/goodbot-go/goodbot/politeness"
)

func TestParseQuota(t *testing.T) {
	s := time.Second
	tests := []struct {
		name   string
		limit  []string
		policy []string
		want   politeness.Quota
	}{
		{"none", nil, nil, politeness.Quota{}},
		// draft-ietf-httpapi-ratelimit-headers-11 §4 example: 50 units left, reset in 30 s.
		{"draft example", []string{`"default";r=50;t=30`}, nil, politeness.Quota{Gap: 600 * time.Millisecond, GapFor: 30 * s}},
		{"exhausted", []string{`"default";r=0;t=30`}, nil, politeness.Quota{Pause: 30 * s}},
		{"low", []string{`"default";r=5;t=10`}, nil, politeness.Quota{Gap: 2 * s, GapFor: 10 * s}},
		{"token name", []string{`burst;r=5;t=10`}, nil, politeness.Quota{Gap: 2 * s, GapFor: 10 * s}},
		{"reset now", []string{`"default";r=0;t=0`}, nil, politeness.Quota{}},
		// draft §3 example: a policy of 100 requests per 10 s window.
		{"policy only", nil, []string{`"default";q=100;w=10`}, politeness.Quota{Gap: 100 * time.Millisecond, GapFor: 10 * s}},
		{"policy window for a missing t", []string{`"daily";r=0`}, []string{`"daily";q=1000;w=86400`},
			politeness.Quota{Pause: 86400 * s, Gap: 86400 * s / 1000, GapFor: 86400 * s}},
		{"no t and no policy", []string{`"daily";r=0`}, nil, politeness.Quota{}},
		{"most restrictive of two", []string{`"burst";r=10;t=1, "day";r=100;t=3600`}, nil, politeness.Quota{Gap: 36 * s, GapFor: 3600 * s}},
		{"two field lines combine", []string{`"burst";r=10;t=1`, `"day";r=0;t=60`}, nil, politeness.Quota{Pause: 60 * s, Gap: 100 * time.Millisecond, GapFor: s}},
		{"bytes quota ignored", nil, []string{`"bw";q=1000000;w=1;qu="content-bytes"`}, politeness.Quota{}},
		{"requests unit", nil, []string{`"x";q=2;w=10;qu="requests"`}, politeness.Quota{Gap: 5 * s, GapFor: 10 * s}},
		{"malformed ignored", []string{`"default";r=0;t=30;;`}, nil, politeness.Quota{}},
		{"negative ignored", []string{`"default";r=-1;t=30`}, nil, politeness.Quota{}},
		{"decimal ignored", []string{`"default";r=0;t=1.5`}, nil, politeness.Quota{}},
		{"string r ignored", []string{`"default";r="0";t=30`}, nil, politeness.Quota{}},
		{"inner list ignored", []string{`("a" "b");r=0;t=30`}, nil, politeness.Quota{}},
		{"missing r ignored", []string{`"default";t=30`}, nil, politeness.Quota{}},
		{"huge t saturates", []string{`"default";r=0;t=999999999999999`}, nil, politeness.Quota{Pause: 1<<63 - 1}},
		// 9223372036 s is the longest whole number of seconds a Duration holds: no saturation.
		{"largest t that fits", []string{`"default";r=0;t=9223372036`}, nil, politeness.Quota{Pause: 9223372036 * s}},
		{"one more second saturates", []string{`"default";r=0;t=9223372037`}, nil, politeness.Quota{Pause: 1<<63 - 1}},
		// Boundaries and ties: each case fails under a one-step change of the rule.
		{"one left is a gap, not a pause", []string{`"default";r=1;t=10`}, nil, politeness.Quota{Gap: 10 * s, GapFor: 10 * s}},
		{"longest pause of two, longer first", []string{`"a";r=0;t=30, "b";r=0;t=10`}, nil, politeness.Quota{Pause: 30 * s}},
		{"longest pause of two, shorter first", []string{`"a";r=0;t=10, "b";r=0;t=30`}, nil, politeness.Quota{Pause: 30 * s}},
		{"equal gaps keep the longer period, shorter first", nil, []string{`"a";q=10;w=10, "b";q=60;w=60`}, politeness.Quota{Gap: s, GapFor: 60 * s}},
		{"equal gaps keep the longer period, longer first", nil, []string{`"b";q=60;w=60, "a";q=10;w=10`}, politeness.Quota{Gap: s, GapFor: 60 * s}},
		{"zero quota policy ignored", nil, []string{`"z";q=0;w=60`}, politeness.Quota{}},
		{"zero window policy ignored", nil, []string{`"z";q=10;w=0`}, politeness.Quota{}},
		{"two negatives ignored", []string{`"default";r=-2;t=-10`}, nil, politeness.Quota{}},
		{"negative policy window ignored", []string{`"p";r=0`}, []string{`"p";q=10;w=-60`}, politeness.Quota{}},
		// An item that says nothing does not hide the ones after it.
		{"after one without r", []string{`"a";t=30, "b";r=0;t=10`}, nil, politeness.Quota{Pause: 10 * s}},
		{"after one without t or policy", []string{`"a";r=0, "b";r=0;t=10`}, nil, politeness.Quota{Pause: 10 * s}},
		{"after one resetting now", []string{`"a";r=0;t=0, "b";r=0;t=10`}, nil, politeness.Quota{Pause: 10 * s}},
		{"after a policy of bytes", nil, []string{`"bw";q=1;w=1;qu="content-bytes", "x";q=2;w=10`}, politeness.Quota{Gap: 5 * s, GapFor: 10 * s}},
		{"bare item ignored", []string{`"default"`}, []string{`"default"`}, politeness.Quota{}},
		{"policy without w ignored", []string{`"p";r=0`}, []string{`"p";q=10`}, politeness.Quota{}},
		{"policy without q ignored", []string{`"p";r=0`}, []string{`"p";w=60`}, politeness.Quota{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{}
			if tc.limit != nil {
				h["Ratelimit"] = tc.limit
			}
			if tc.policy != nil {
				h["Ratelimit-Policy"] = tc.policy
			}
			if got := politeness.ParseQuota(h); got != tc.want {
				t.Errorf("ParseQuota(%q, %q) = %+v, want %+v", tc.limit, tc.policy, got, tc.want)
			}
		})
	}
}

func TestParseQuota_BoundedField(t *testing.T) {
	long := `"default";r=0;t=30`
	for len(long) < 5000 {
		long += `, "x";r=1;t=1`
	}
	if got := politeness.ParseQuota(http.Header{"Ratelimit": {long}}); !got.IsZero() {
		t.Errorf("a %d-byte field was read: %+v", len(long), got)
	}
	many := `"default";r=0;t=30`
	for range 16 {
		many += `, "x";r=1;t=1`
	}
	if got := politeness.ParseQuota(http.Header{"Ratelimit": {many}}); !got.IsZero() {
		t.Errorf("a field of 17 items was read: %+v", got)
	}
}

// TestParseQuota_FieldLimits: a field of exactly 4096 bytes or 16 items is
// read; one byte or one item more and it is ignored whole.
func TestParseQuota_FieldLimits(t *testing.T) {
	head := `"default";r=0;t=30, "`
	tail := `";r=1;t=1`
	sized := func(n int) string { return head + strings.Repeat("x", n-len(head)-len(tail)) + tail }
	items := func(n int) string { return `"default";r=0;t=30` + strings.Repeat(`, "x";r=1;t=1`, n-1) }
	tests := []struct {
		name  string
		field []string
		read  bool
	}{
		{"4096 bytes", []string{sized(4096)}, true},
		{"4097 bytes", []string{sized(4097)}, false},
		{"16 items", []string{items(16)}, true},
		{"17 items", []string{items(17)}, false},
		// Field lines of one field are one field (RFC 9110 section 5.3): the
		// 4 KiB bound is on all of them together.
		{"two lines of 2000 bytes", []string{sized(2000), sized(2000)}, true},
		{"two lines of 2049 bytes", []string{sized(2049), sized(2049)}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := politeness.ParseQuota(http.Header{"Ratelimit": tc.field})
			if tc.read && got.Pause != 30*time.Second {
				t.Errorf("field not read: %+v, want a 30s pause", got)
			}
			if !tc.read && !got.IsZero() {
				t.Errorf("over-long field read: %+v", got)
			}
		})
	}
}

func TestParseQuota_NoAllocationWithoutFields(t *testing.T) {
	h := http.Header{"Content-Type": {"text/html"}, "Date": {"Mon, 01 Jan 2026 00:00:00 GMT"}}
	if n := testing.AllocsPerRun(100, func() { politeness.ParseQuota(h) }); n != 0 {
		t.Errorf("ParseQuota allocates %v times on a response without the fields", n)
	}
}

func FuzzParseQuota(f *testing.F) {
	f.Add(`"default";r=50;t=30`, `"default";q=100;w=10`)
	f.Add(`"a";r=0`, `"a";q=1;w=1;qu="requests"`)
	f.Add(`x;r=1;t=1, y;r=0;t=9`, ``)
	f.Fuzz(func(t *testing.T, limit, policy string) {
		q := politeness.ParseQuota(http.Header{"Ratelimit": {limit}, "Ratelimit-Policy": {policy}})
		if q.Pause < 0 || q.Gap < 0 || q.GapFor < 0 || q.Gap > q.GapFor {
			t.Errorf("ParseQuota(%q, %q) = %+v", limit, policy, q)
		}
	})
}

// quotaWeb answers the first request on a host with header h and 200s
// without it afterwards.
func quotaWeb(status int, h http.Header) *fakeWeb { return pausedWeb(status, h, 1) }

func TestTransport_RateLimitExhaustedPausesBeforeThe429(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := quotaWeb(200, http.Header{"Ratelimit": {`"default";r=0;t=30`}})
		var events []politeness.Event
		tr := &politeness.Transport{Base: w, Policy: politeness.Policy{MinDelay: time.Second},
			Observe: func(e politeness.Event) { events = append(events, e) }}
		c := &http.Client{Transport: tr}
		for range 3 {
			mustGet(t, c, hostA+"/p")
		}
		g := gaps(w, hostA)
		want := []time.Duration{30 * time.Second, time.Second} // a pause, not a strike: no slow-down after it
		if len(g) != len(want) || g[0] != want[0] || g[1] != want[1] {
			t.Fatalf("gaps = %v, want exactly %v", g, want)
		}
		var paused bool
		for _, e := range events {
			if e.Kind == politeness.EventPause && e.Reason == "ratelimit" && e.Duration == 30*time.Second && e.Status == 200 {
				paused = true
			}
		}
		if !paused {
			t.Errorf("no ratelimit pause event among %+v", events)
		}
	})
}

func TestTransport_RateLimitLowSpacesUntilReset(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// 5 requests left for 10 s: gaps of at least 2 s until the reset,
		// then the 500 ms floor again.
		w := quotaWeb(200, http.Header{"Ratelimit": {`"default";r=5;t=10`}})
		c, _ := newClient(w, politeness.Policy{MinDelay: 500 * time.Millisecond})
		for range 8 {
			mustGet(t, c, hostA+"/p")
		}
		check(t, w, constGap(500*time.Millisecond))
		g := gaps(w, hostA)
		if len(g) != 7 {
			t.Fatalf("%d gaps, want 7", len(g))
		}
		// Responses end at 0, 2, 4, 6, 8 s (latency 0): the gap after the
		// one ending at 8 s is still inside the 10 s window.
		for i, d := range g {
			want := 2 * time.Second
			if i >= 5 {
				want = 500 * time.Millisecond
			}
			if d != want {
				t.Errorf("gap %d = %v, want exactly %v (all gaps %v)", i, d, want, g)
			}
		}
	})
}

func TestTransport_RateLimitNeverBelowFloorOrCrawlDelay(t *testing.T) {
	tests := []struct {
		name  string
		quota string
		crawl time.Duration
		want  time.Duration
	}{
		{"quota below floor", `"d";r=100;t=10`, 0, time.Second},                       // 100 ms asked, 1 s floor
		{"quota below crawl-delay", `"d";r=5;t=10`, 3 * time.Second, 3 * time.Second}, // 2 s asked
		{"quota above both", `"d";r=2;t=10`, 3 * time.Second, 5 * time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := quotaWeb(200, http.Header{"Ratelimit": {tc.quota}})
				tr := &politeness.Transport{Base: w, Policy: politeness.Policy{MinDelay: time.Second},
					CrawlDelay: func(*url.URL) (time.Duration, bool) { return tc.crawl, tc.crawl > 0 }}
				c := &http.Client{Transport: tr}
				mustGet(t, c, hostA+"/a")
				mustGet(t, c, hostA+"/b")
				g := gaps(w, hostA)
				if len(g) != 1 || g[0] != tc.want {
					t.Errorf("gaps = %v, want exactly [%v]", g, tc.want)
				}
			})
		})
	}
}

func TestTransport_RetryAfterTakesPrecedenceOverRateLimit(t *testing.T) {
	tests := []struct {
		name string
		h    http.Header
		want time.Duration
	}{
		{"retry-after wins", http.Header{"Retry-After": {"120"}, "Ratelimit": {`"d";r=0;t=30`}}, 120 * time.Second},
		{"ratelimit instead of backoff", http.Header{"Ratelimit": {`"d";r=0;t=30`}}, 30 * time.Second},
		{"malformed ratelimit: backoff", http.Header{"Ratelimit": {`"d";r=0;t=x`}}, time.Minute},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := quotaWeb(429, tc.h)
				c, _ := newClient(w, politeness.Policy{})
				mustGet(t, c, hostA+"/x")
				start := time.Now()
				mustGet(t, c, hostA+"/y")
				if got := time.Since(start); got != tc.want {
					t.Errorf("second request waited %v, want exactly %v", got, tc.want)
				}
			})
		})
	}
}

func TestTransport_RateLimitPauseClampAndGiveUp(t *testing.T) {
	h := http.Header{"Ratelimit": {`"d";r=0;t=7200`}}
	synctest.Test(t, func(t *testing.T) {
		w := quotaWeb(200, h)
		c, _ := newClient(w, politeness.Policy{MaxRetryAfter: time.Hour})
		mustGet(t, c, hostA)
		start := time.Now()
		mustGet(t, c, hostA)
		if got := time.Since(start); got != time.Hour {
			t.Errorf("a 2 h quota reset with the Clamp policy waited %v, want the 1 h maximum", got)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		w := quotaWeb(200, h)
		c, _ := newClient(w, politeness.Policy{MaxRetryAfter: time.Hour, RetryAfterMode: politeness.GiveUp})
		mustGet(t, c, hostA)
		_, err := get(t.Context(), c, hostA)
		if !errors.Is(err, politeness.ErrGaveUp) {
			t.Errorf("a 2 h quota reset with the GiveUp policy: err = %v, want ErrGaveUp", err)
		}
		if n := len(w.records()); n != 1 {
			t.Errorf("%d requests reached the host, want 1", n)
		}
	})
}

func TestTransport_RateLimitSharedThroughGate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// Two Transports (two processes of a fleet) on one gate: the quota
		// one of them read holds the other back.
		w := quotaWeb(200, http.Header{"Ratelimit": {`"d";r=0;t=30`}})
		gate := politeness.NewMemoryGate()
		a := &http.Client{Transport: &politeness.Transport{Base: w, Gate: gate}}
		b := &http.Client{Transport: &politeness.Transport{Base: w, Gate: gate}}
		mustGet(t, a, hostA)
		start := time.Now()
		mustGet(t, b, hostA)
		if got := time.Since(start); got != 30*time.Second {
			t.Errorf("the other Transport waited %v, want exactly 30s", got)
		}
	})
}

// recordingGate is a MemoryGate that keeps every State released to it.
type recordingGate struct {
	politeness.Gate
	fail     error // if set, every Release returns it (after releasing)
	mu       sync.Mutex
	released []politeness.State
}

type recordingLease struct {
	politeness.Lease
	g *recordingGate
}

func (g *recordingGate) Acquire(ctx context.Context, host string, ready func(politeness.State) (time.Duration, error)) (politeness.Lease, error) {
	l, err := g.Gate.Acquire(ctx, host, ready)
	if err != nil {
		return nil, err
	}
	return recordingLease{l, g}, nil
}

func (l recordingLease) Release(next politeness.State) error {
	l.g.mu.Lock()
	l.g.released = append(l.g.released, next)
	l.g.mu.Unlock()
	if err := l.Lease.Release(next); err != nil || l.g.fail == nil {
		return err
	}
	return l.g.fail
}

func (g *recordingGate) last(t *testing.T) politeness.State {
	t.Helper()
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.released) == 0 {
		t.Fatal("no State was released to the gate")
	}
	return g.released[len(g.released)-1]
}

// TestTransport_RateLimitStoredState checks the State a quota answer leaves
// for the host: the pause or give-up end, the quota gap and its end (capped
// at MaxRetryAfter), no strike for a 200, and an expiry one idle hour after
// the latest of them.
func TestTransport_RateLimitStoredState(t *testing.T) {
	const h = time.Hour
	tests := []struct {
		name       string
		status     int
		header     http.Header
		policy     politeness.Policy
		wantKind   politeness.EventKind
		wantReason string
		pause      time.Duration // PauseUntil - start, 0: none
		gaveUp     time.Duration // GaveUpUntil - start, 0: none
		quotaGap   time.Duration
		quotaFor   time.Duration // QuotaUntil - start, 0: none
		strikes    int
		expires    time.Duration // Expires - start
	}{
		{"spent quota on a 200: pause, no strike", 200, http.Header{"Ratelimit": {`"d";r=0;t=30`}}, politeness.Policy{},
			politeness.EventPause, "ratelimit", 30 * time.Second, 0, 0, 0, 0, 30*time.Second + h},
		{"spent quota on a 429 without Retry-After", 429, http.Header{"Ratelimit": {`"d";r=0;t=30`}}, politeness.Policy{},
			politeness.EventPause, "ratelimit", 30 * time.Second, 0, 0, 0, 1, 30*time.Second + h},
		{"daily policy: gap for at most MaxRetryAfter", 200, http.Header{"Ratelimit-Policy": {`"p";q=1;w=86400`}}, politeness.Policy{},
			0, "", 0, 0, 86400 * time.Second, h, 0, 86400*time.Second + h},
		{"short gap, long window: expiry after the window", 200, http.Header{"Ratelimit-Policy": {`"p";q=360;w=3600`}}, politeness.Policy{},
			0, "", 0, 0, 10 * time.Second, h, 0, 2 * h},
		{"reset exactly at MaxRetryAfter: a pause, not a give-up", 200, http.Header{"Ratelimit": {`"d";r=0;t=3600`}},
			politeness.Policy{RetryAfterMode: politeness.GiveUp},
			politeness.EventPause, "ratelimit", h, 0, 0, 0, 0, 2 * h},
		{"reset beyond MaxRetryAfter: give up for GiveUpFor", 200, http.Header{"Ratelimit": {`"d";r=0;t=7200`}},
			politeness.Policy{RetryAfterMode: politeness.GiveUp, GiveUpFor: 24 * h},
			politeness.EventGiveUp, "ratelimit", 0, 24 * h, 0, 0, 0, 25 * h},
		{"endless reset: give up for a century", 200, http.Header{"Ratelimit": {`"d";r=0;t=999999999999999`}},
			politeness.Policy{RetryAfterMode: politeness.GiveUp, GiveUpFor: 24 * h},
			politeness.EventGiveUp, "ratelimit", 0, 100 * 365 * 24 * h, 0, 0, 0, 100*365*24*h + h},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := quotaWeb(tc.status, tc.header)
				gate := &recordingGate{Gate: politeness.NewMemoryGate()}
				var events []politeness.Event
				tc.policy.MinDelay = time.Second
				tr := &politeness.Transport{Base: w, Gate: gate, Policy: tc.policy,
					Observe: func(e politeness.Event) { events = append(events, e) }}
				start := time.Now()
				mustGet(t, &http.Client{Transport: tr}, hostA)
				if n := len(w.records()); n != 1 {
					t.Fatalf("%d requests reached the host, want 1", n)
				}
				st := gate.last(t)
				at := func(tm time.Time) time.Duration {
					if tm.IsZero() {
						return 0
					}
					return tm.Sub(start)
				}
				if got := at(st.PauseUntil); got != tc.pause {
					t.Errorf("PauseUntil = start+%v, want start+%v", got, tc.pause)
				}
				if got := at(st.GaveUpUntil); got != tc.gaveUp {
					t.Errorf("GaveUpUntil = start+%v, want start+%v", got, tc.gaveUp)
				}
				if st.QuotaGap != tc.quotaGap {
					t.Errorf("QuotaGap = %v, want %v", st.QuotaGap, tc.quotaGap)
				}
				if got := at(st.QuotaUntil); got != tc.quotaFor {
					t.Errorf("QuotaUntil = start+%v, want start+%v", got, tc.quotaFor)
				}
				if st.Strikes != tc.strikes {
					t.Errorf("Strikes = %d, want %d", st.Strikes, tc.strikes)
				}
				if got := at(st.Expires); got != tc.expires {
					t.Errorf("Expires = start+%v, want start+%v", got, tc.expires)
				}
				var found bool
				for _, e := range events {
					if e.Kind == politeness.EventPause || e.Kind == politeness.EventGiveUp {
						found = e.Kind == tc.wantKind && e.Reason == tc.wantReason
					}
				}
				if tc.wantKind != 0 && !found {
					t.Errorf("events %+v, want a %v with reason %q", events, tc.wantKind, tc.wantReason)
				}
			})
		})
	}
}

// TestTransport_RateLimitQuotaForgottenAfterReset: once the quota window
// has passed, the stored State carries no quota gap any more.
func TestTransport_RateLimitQuotaForgottenAfterReset(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := quotaWeb(200, http.Header{"Ratelimit": {`"default";r=5;t=10`}})
		gate := &recordingGate{Gate: politeness.NewMemoryGate()}
		c := &http.Client{Transport: &politeness.Transport{Base: w, Gate: gate, Policy: politeness.Policy{MinDelay: 500 * time.Millisecond}}}
		for range 6 { // answers end at 0, 2, 4, 6, 8 and 10 s
			mustGet(t, c, hostA)
		}
		if n := len(w.records()); n != 6 {
			t.Fatalf("%d requests, want 6", n)
		}
		if st := gate.last(t); st.QuotaGap != 0 || !st.QuotaUntil.IsZero() {
			t.Errorf("after the reset: QuotaGap %v, QuotaUntil %v; want both zero", st.QuotaGap, st.QuotaUntil)
		}
	})
}

// TestTransport_GapSaturates: the gap a Transport keeps after a request is
// max(MinDelay, Crawl-delay)·2^slow-down + jitter, saturating at the
// largest Duration like Policy.LongestGap: never wrapped round to a short
// (or negative) gap, nor left undoubled, however large the policy's delays
// or the spacing a site's quota asks for.
func TestTransport_GapSaturates(t *testing.T) {
	const largest = time.Duration(1<<63 - 1)
	for _, tc := range []struct {
		name   string
		status int
		header http.Header
		policy politeness.Policy
	}{
		{"MinDelay plus jitter", 200, nil,
			politeness.Policy{MinDelay: largest - time.Second, Jitter: time.Hour, MaxSlowdown: -1}},
		{"MinDelay doubled by a slow-down", 429, http.Header{"Retry-After": {"0"}},
			politeness.Policy{MinDelay: 5e18, MaxRetryAfter: largest}},
		{"a site's endless quota window plus jitter", 200, http.Header{"Ratelimit": {`"d";r=1;t=99999999999`}},
			politeness.Policy{MinDelay: time.Second, Jitter: time.Second}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := quotaWeb(tc.status, tc.header)
				gate := &recordingGate{Gate: politeness.NewMemoryGate()}
				mustGet(t, &http.Client{Transport: &politeness.Transport{Base: w, Gate: gate, Policy: tc.policy}}, hostA)
				if n := len(w.records()); n != 1 {
					t.Fatalf("%d requests reached the host, want 1", n)
				}
				if got := time.Until(gate.last(t).NotBefore); got != largest {
					t.Errorf("next request %v after this one, want the largest Duration %v", got, largest)
				}
			})
		})
	}
}
