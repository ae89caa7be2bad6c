package robots

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"
)

// countingWeb answers every robots.txt with one Disallow rule and counts
// the requests per host.
type countingWeb struct{ fakeWeb }

func newCountingWeb() *countingWeb {
	w := &countingWeb{}
	w.set(serve(200, "User-agent: *\nDisallow: /private\n"))
	return w
}

func (w *countingWeb) hits(host string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, r := range w.calls {
		if r.URL.Host == host {
			n++
		}
	}
	return n
}

func siteURL(i int) string { return fmt.Sprintf("https://s%d.test/page", i) }

// ttlPasses, in a list of sites visited, is the TTL passing: every copy
// goes stale, and the next visit of a site fetches it again.
const ttlPasses = -1

// The Cache keeps at most MaxEntries origins, forgetting the one used least
// recently; a forgotten origin's robots.txt is fetched again when next
// asked about, and its rules still apply.
func TestCache_MaxEntriesEvictsLeastRecentlyUsed(t *testing.T) {
	for _, tt := range []struct {
		name    string
		max     int
		visit   []int // sites asked about, in order
		fetches int   // robots.txt fetches the visits make
		kept    []int
		dropped []int
	}{
		{"bound respected", 3, []int{0, 1, 2, 3, 4}, 5, []int{2, 3, 4}, []int{0, 1}},
		{"a site asked about again is kept", 3, []int{0, 1, 2, 0, 3}, 4, []int{0, 2, 3}, []int{1}},
		{"bound of one", 1, []int{0, 1, 2}, 3, []int{2}, []int{0, 1}},
		{"under the bound nothing is dropped", 10, []int{0, 1, 2, 1, 0}, 3, []int{0, 1, 2}, nil},
		{"negative: no bound", -1, []int{0, 1, 2, 3, 4, 5}, 6, []int{0, 1, 2, 3, 4, 5}, nil},
		// The copy fetched again replaces the old one in the recency
		// order too: sites 1, then 2 are the least recently used, not 0.
		{"a site fetched again is used once", 2, []int{0, 1, ttlPasses, 0, 2, 0, 3}, 5, []int{0, 3}, []int{1, 2}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				web := newCountingWeb()
				c := &Cache{Transport: web, MaxEntries: tt.max}
				ctx := context.Background()
				for _, i := range tt.visit {
					if i == ttlPasses {
						time.Sleep(DefaultTTL)
						continue
					}
					if _, err := c.Get(ctx, mustURL(t, siteURL(i))); err != nil {
						t.Fatal(err)
					}
				}
				if web.count() != tt.fetches {
					t.Fatalf("%d robots.txt fetches, want %d", web.count(), tt.fetches)
				}
				for _, i := range tt.kept {
					if _, ok := c.Cached(mustURL(t, siteURL(i))); !ok {
						t.Errorf("site %d was dropped, want it kept", i)
					}
				}
				for _, i := range tt.dropped {
					if _, ok := c.Cached(mustURL(t, siteURL(i))); ok {
						t.Errorf("site %d is still kept, want it dropped", i)
					}
				}
				c.mu.Lock()
				n := len(c.sites)
				c.mu.Unlock()
				if want := len(tt.kept); n != want {
					t.Errorf("%d entries kept, want %d", n, want)
				}
				// A dropped site is fetched again, once, and its rules apply.
				for _, i := range tt.dropped {
					host := fmt.Sprintf("s%d.test", i)
					before := web.hits(host)
					err := c.Check(ctx, Agent{Token: "bot"}, mustURL(t, fmt.Sprintf("https://%s/private", host)))
					if err == nil {
						t.Errorf("%s/private allowed after eviction, want disallowed", host)
					}
					if got := web.hits(host) - before; got != 1 {
						t.Errorf("%s: %d robots.txt fetches after eviction, want 1", host, got)
					}
				}
			})
		})
	}
}

// With MaxEntries unset, the Cache keeps 10,000 origins.
func TestCache_DefaultMaxEntries(t *testing.T) {
	web := newCountingWeb()
	c := &Cache{Transport: web}
	ctx := context.Background()
	for i := range 10_001 {
		if _, err := c.Get(ctx, mustURL(t, siteURL(i))); err != nil {
			t.Fatal(err)
		}
	}
	if got := web.count(); got != 10_001 {
		t.Fatalf("%d robots.txt fetches, want 10001", got)
	}
	c.mu.Lock()
	n := len(c.sites)
	c.mu.Unlock()
	if n != 10_000 {
		t.Errorf("%d entries kept, want 10000", n)
	}
	if _, ok := c.Cached(mustURL(t, siteURL(0))); ok {
		t.Error("the least recently used site is still kept")
	}
	if _, ok := c.Cached(mustURL(t, siteURL(1))); !ok {
		t.Error("site 1 was dropped, want kept")
	}
}

// Evicting and replacing entries keeps the hit path allocation-free.
func TestCache_LookupDoesNotAllocateUnderEviction(t *testing.T) {
	web := newCountingWeb()
	c := &Cache{Transport: web, MaxEntries: 2}
	ctx := context.Background()
	us := []string{"https://a.test/x", "https://b.test/x"}
	for _, s := range append(us, "https://c.test/x", us[0], us[1]) {
		if _, err := c.Get(ctx, mustURL(t, s)); err != nil {
			t.Fatal(err)
		}
	}
	a, b := mustURL(t, us[0]), mustURL(t, us[1])
	if n := testing.AllocsPerRun(100, func() { c.Cached(a); c.Cached(b) }); n != 0 {
		t.Errorf("Cached allocates %v times per call pair, want 0", n)
	}
}
