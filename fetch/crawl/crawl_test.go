package crawl

import (
	"context"
	"errors"
	"fmt"
	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/robots"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/goodbot-go/goodbot/politeness/sitekeytest"
)

func u(s string) *url.URL {
	v, err := url.Parse(s)
	if err != nil {
		panic(err)
	}
	return v
}

// S8: each URL once, after normalisation; H7/B10: a cap per site.
func TestFrontier_S8_H7(t *testing.T) {
	f := &Frontier{MaxPerSite: 3}
	adds := []struct {
		s    string
		want bool
	}{
		{"http://a.test/", true},
		{"HTTP://A.TEST:80/#top", false},
		{"http://a.test/x/../", false},
		{"http://a.test/%7Ex", true},
		{"http://a.test/~x", false},
		{"http://a.test/y", true},
		{"http://a.test/z", false}, // cap
		{"http://b.test/", true},
		{"mailto:x@a.test", false},
	}
	for _, a := range adds {
		if got := f.Add(u(a.s), 0, "seed"); got != a.want {
			t.Errorf("Add(%s) = %v, want %v", a.s, got, a.want)
		}
	}
	if f.Len() != 4 || len(f.Sites()) != 2 {
		t.Errorf("len %d sites %v", f.Len(), f.Sites())
	}
	if it, _ := f.Next("http://a.test"); it.Key != "http://a.test/" {
		t.Errorf("first item %v", it)
	}
	if n := f.Drop("http://a.test"); n != 2 || f.Len() != 1 {
		t.Errorf("drop %d len %d", n, f.Len())
	}
}

func TestSite(t *testing.T) {
	for in, want := range map[string]string{"http://A.test:80/x": "http://a.test", "https://a.test:8443/": "https://a.test:8443"} {
		if got := Site(u(in)); got != want {
			t.Errorf("Site(%s) = %s, want %s", in, got, want)
		}
	}
	// Every spelling of a site in the module's table is one site.
	for _, r := range sitekeytest.Rows(t) {
		if !r.HTTP() {
			continue
		}
		want := strings.TrimSuffix(r.Key, ":80")
		if strings.HasPrefix(r.Key, "https://") {
			want = strings.TrimSuffix(r.Key, ":443")
		}
		if got := Site(u(r.URL)); got != want {
			t.Errorf("line %d: Site(%s) = %s, want %s", r.Line, r.URL, got, want)
		}
	}
}

// S8 and C3 in the frontier: spellings of one site share one queue (one
// worker, so one request at a time) and one seen set.
func TestFrontier_S8_SpellingsOfOneSite(t *testing.T) {
	f := &Frontier{}
	for i, s := range []string{"http://a.test/p", "http://A.TEST.:080/p", "http://a。test/p", "http://ａ.test/p", "http://a.test./q"} {
		if got, want := f.Add(u(s), 0, "seed"), i == 0 || i == 4; got != want {
			t.Errorf("Add(%s) = %v, want %v", s, got, want)
		}
	}
	if sites := f.Sites(); len(sites) != 1 || sites[0] != "http://a.test" || f.Len() != 2 {
		t.Errorf("sites %v, %d queued; want [http://a.test], 2", sites, f.Len())
	}
}

// A toy web: every page links to two others on its own site and one on
// another site; each Get takes one second of (fake) time.
func toyGet(mu *sync.Mutex, inFlight map[string]int, maxSeen *int) func(ctx context.Context, it Item) Page {
	return func(ctx context.Context, it Item) Page {
		mu.Lock()
		inFlight[it.Site]++
		if inFlight[it.Site] > *maxSeen {
			*maxSeen = inFlight[it.Site]
		}
		mu.Unlock()
		time.Sleep(time.Second)
		mu.Lock()
		inFlight[it.Site]--
		mu.Unlock()
		var n int
		fmt.Sscanf(it.URL.Path, "/p%d", &n)
		body := fmt.Sprintf(`<a href="/p%d">x</a><a href="/p%d" rel="nofollow">n</a><a href="http://other.test/">o</a>`, (n+1)%10, (n+2)%10)
		return Page{Status: 200, Outcome: "ok", Body: []byte(body)}
	}
}

// B10, H7: a page fetched outside the frontier (the home page read first)
// is one of the capped pages; a URL only marked seen is not.
func TestFrontier_MarkFetchedCounts(t *testing.T) {
	f := &Frontier{MaxPerSite: 2}
	f.MarkFetched(u("http://a.test/"))
	f.MarkFetched(u("http://a.test/")) // once only
	f.MarkSeen(u("http://a.test/old"))
	if !f.Add(u("http://a.test/x"), 1, "link") || f.Add(u("http://a.test/y"), 1, "link") {
		t.Errorf("with the home page fetched, a cap of 2 admits exactly one more page (len %d)", f.Len())
	}
	if f.Add(u("http://a.test/"), 1, "link") || f.Add(u("http://a.test/old"), 1, "link") {
		t.Error("a URL marked fetched or seen was queued")
	}
}

// S11: with a worker free for each site, N sites take as long as one: throughput
// grows with the number of hosts while each host sees one request at a time.
func TestCrawler_S11_ThroughputGrowsWithHosts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		elapsed := func(hosts int) time.Duration {
			var mu sync.Mutex
			inFlight := map[string]int{}
			maxSeen := 0
			f := &Frontier{MaxPerSite: 5}
			for h := range hosts {
				f.Add(u(fmt.Sprintf("http://h%d.test/p0", h)), 0, "seed")
			}
			c := &Crawler{Frontier: f, Get: toyGet(&mu, inFlight, &maxSeen), FollowLinks: true}
			start := time.Now()
			c.Run(context.Background())
			if c.Done() != 5*hosts {
				t.Errorf("%d hosts: %d pages, want %d", hosts, c.Done(), 5*hosts)
			}
			if maxSeen != 1 {
				t.Errorf("%d hosts: %d requests at once on one site", hosts, maxSeen)
			}
			return time.Since(start)
		}
		one, eight := elapsed(1), elapsed(8)
		if one != 5*time.Second || eight != one {
			t.Errorf("1 host: %v, 8 hosts: %v; want 8 hosts in the time of 1", one, eight)
		}
	})
}

func TestCrawler_StopSite(t *testing.T) {
	f := &Frontier{}
	for i := range 5 {
		f.Add(u(fmt.Sprintf("http://a.test/%d", i)), 0, "seed")
	}
	var got []string
	c := &Crawler{Frontier: f, Get: func(ctx context.Context, it Item) Page {
		got = append(got, it.URL.Path)
		return Page{Outcome: "gave_up", StopSite: it.URL.Path == "/1"}
	}}
	c.Run(context.Background())
	if len(got) != 2 {
		t.Errorf("fetched %v after giving up", got)
	}
}

func TestCrawler_Cancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	f := &Frontier{}
	for i := range 50 {
		f.Add(u(fmt.Sprintf("http://h%d.test/", i)), 0, "seed")
	}
	c := &Crawler{Frontier: f, Parallel: 2, Get: func(ctx context.Context, it Item) Page {
		cancel()
		return Page{}
	}}
	if err := c.Run(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Run after cancel = %v; want context.Canceled", err)
	}
	if c.Done() > 2 {
		t.Errorf("%d fetched after cancel", c.Done())
	}
}

func TestCrawler_NeedsFrontierAndFetcher(t *testing.T) {
	get := func(context.Context, Item) Page { return Page{} }
	for name, c := range map[string]*Crawler{
		"nothing":     {},
		"no frontier": {Get: get},
		"no fetcher":  {Frontier: &Frontier{}},
	} {
		if err := c.Run(context.Background()); !errors.Is(err, ErrNoFetcher) {
			t.Errorf("%s: Run = %v; want ErrNoFetcher", name, err)
		}
	}
	if err := (&Crawler{Frontier: &Frontier{}, Get: get}).Run(context.Background()); err != nil {
		t.Errorf("Run of an empty frontier = %v; want nil", err)
	}
}

// A rate-limited page is tried once more, after the site's other pages.
func TestCrawler_RetryRateLimitedOnce(t *testing.T) {
	f := &Frontier{}
	f.Add(u("http://a.test/1"), 0, "seed")
	f.Add(u("http://a.test/2"), 0, "seed")
	var got []string
	c := &Crawler{Frontier: f, Get: func(ctx context.Context, it Item) Page {
		got = append(got, it.URL.Path)
		return Page{Outcome: "rate_limited", Retry: it.URL.Path == "/1"}
	}}
	c.Run(context.Background())
	if fmt.Sprint(got) != "[/1 /2 /1]" {
		t.Errorf("order %v", got)
	}
}

// A slow (paused) site holds only its own worker: the other site's pages
// are all fetched while the slow one's first page still waits.
func TestCrawler_NoHeadOfLineBlocking(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &Frontier{}
		f.Add(u("http://slow.test/0"), 0, "seed")
		for i := range 5 {
			f.Add(u(fmt.Sprintf("http://fast.test/%d", i)), 0, "seed")
		}
		fastDone := make(chan struct{})
		var mu sync.Mutex
		var fast int
		c := &Crawler{Frontier: f, Parallel: 2, Get: func(ctx context.Context, it Item) Page {
			if it.Site == "http://slow.test" {
				select {
				case <-fastDone:
				case <-time.After(10 * time.Second):
					t.Error("the slow site's page waited for the fast site, which never finished")
				}
				return Page{Outcome: "ok"}
			}
			mu.Lock()
			defer mu.Unlock()
			if fast++; fast == 5 {
				close(fastDone)
			}
			return Page{Outcome: "ok"}
		}}
		if err := c.Run(context.Background()); err != nil || c.Done() != 6 {
			t.Errorf("Run = %v, %d pages; want nil, 6", err, c.Done())
		}
	})
}

// A page whose directives say nofollow gives the crawler no links to follow;
// the same page without them does.
func TestPageOf_NoFollowGivesNoLinks(t *testing.T) {
	html := http.Header{"Content-Type": {"text/html"}}
	page := &fetch.Page{Status: 200, Header: html, Body: []byte(`<a href="/next">next</a>`), FinalURL: "http://a.test/"}
	if cp := PageOf(page, nil); len(cp.Body) == 0 {
		t.Fatal("an HTML page without directives gave no body to follow")
	}
	page.Rules = robots.PageRules{NoFollow: true}
	if cp := PageOf(page, nil); cp.Body != nil {
		t.Errorf("a nofollow page gave %d bytes of links to follow", len(cp.Body))
	}
}
