package robots

import (
	"context"
	"net/url"
	"testing"

	"github.com/goodbot-go/goodbot/politeness/sitekeytest"
)

// TestOrigin_Table checks the origin key, built on the module's site key,
// against its decision table.
func TestOrigin_Table(t *testing.T) {
	for _, r := range sitekeytest.Rows(t) {
		u, err := url.Parse(r.URL)
		if err != nil {
			t.Errorf("line %d: %v", r.Line, err)
			continue
		}
		o, err := originOf(u)
		if !r.HTTP() {
			if err == nil {
				t.Errorf("line %d: originOf(%s) = %s, want ErrBadURL", r.Line, r.URL, o.key)
			}
			continue
		}
		if err != nil || o.key != r.Key {
			t.Errorf("line %d: originOf(%s) = %q, %v; want %s", r.Line, r.URL, o.key, err, r.Key)
			continue
		}
		// robots.txt is fetched from a URL of the same origin.
		if ru, err := url.Parse(o.robotsURL()); err != nil {
			t.Errorf("line %d: robotsURL %s: %v", r.Line, o.robotsURL(), err)
		} else if k, _ := originOf(ru); k.key != r.Key {
			t.Errorf("line %d: robotsURL %s has origin %s, want %s", r.Line, o.robotsURL(), k.key, r.Key)
		}
	}
}

// TestCache_C1_RobotsOncePerSiteAcrossSpellings asks the Cache about every
// spelling of each site the table spells several ways: robots.txt is fetched
// once per site, and its rules apply to every spelling.
func TestCache_C1_RobotsOncePerSiteAcrossSpellings(t *testing.T) {
	groups := sitekeytest.Spellings(t)
	if len(groups) < 8 {
		t.Fatalf("%d sites with several spellings in the table, want at least 8", len(groups))
	}
	for key, spellings := range groups {
		t.Run(key, func(t *testing.T) {
			web := &fakeWeb{}
			web.set(serve(200, "User-agent: *\nDisallow: /private\n"))
			c := &Cache{Transport: web}
			for _, s := range spellings {
				u := mustURL(t, s)
				u.Path = "/private"
				if err := c.Check(context.Background(), bothy, u); err == nil {
					t.Errorf("Check(%s) = nil, want disallowed", u)
				}
				if _, ok := c.Cached(u); !ok {
					t.Errorf("Cached(%s): no copy", u)
				}
			}
			if got := web.count(); got != 1 {
				t.Errorf("%d spellings made %d robots.txt requests, want 1", len(spellings), got)
			}
		})
	}
}

// The copy keeps the cache hit allocation-free for canonical hosts.
func TestCache_LookupDoesNotAllocate(t *testing.T) {
	web := &fakeWeb{}
	web.set(serve(200, "User-agent: *\nAllow: /\n"))
	c := &Cache{Transport: web}
	u := mustURL(t, "https://example.com/a")
	if _, err := c.Get(context.Background(), u); err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(100, func() { c.Cached(u) }); n != 0 {
		t.Errorf("Cached allocates %v times per call, want 0", n)
	}
}
