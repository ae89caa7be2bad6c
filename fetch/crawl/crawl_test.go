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

	"github.com/goodbot-go/goodbot/politeness"
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

// Only absolute http and https URLs are queued.
func TestFrontier_AddOnlyHTTP(t *testing.T) {
	f := &Frontier{}
	for _, tt := range []struct {
		url  *url.URL
		want bool
	}{
		{u("http://a.test/"), true},
		{u("https://b.test/"), true},
		{u("ftp://c.test/"), false},
		{u("mailto:x@a.test"), false},
		{u("http:///no-host"), false},
		{u("/relative"), false},
		{nil, false},
	} {
		if got := f.Add(tt.url, 0, "seed"); got != tt.want {
			t.Errorf("Add(%v) = %v, want %v", tt.url, got, tt.want)
		}
	}
	if f.Len() != 2 {
		t.Errorf("Len %d; want 2", f.Len())
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

// FollowLinks queues the links of each page, and MaxDepth bounds that: the
// links of a page at MaxDepth are not queued; 0 follows them all. Each
// item carries its depth from the seed.
func TestCrawler_FollowLinksToMaxDepth(t *testing.T) {
	for _, tt := range []struct {
		follow   bool
		maxDepth int
		want     string // pages fetched, "path@depth"
	}{
		{false, 0, "[/0@0]"},
		{true, 0, "[/0@0 /1@1 /2@2 /3@3]"},
		{true, 1, "[/0@0 /1@1]"},
		{true, 2, "[/0@0 /1@1 /2@2]"},
	} {
		t.Run(fmt.Sprintf("follow=%v,maxDepth=%d", tt.follow, tt.maxDepth), func(t *testing.T) {
			f := &Frontier{}
			f.Add(u("http://a.test/0"), 0, "seed")
			var got []string
			c := &Crawler{Frontier: f, FollowLinks: tt.follow, MaxDepth: tt.maxDepth, Get: func(ctx context.Context, it Item) Page {
				got = append(got, fmt.Sprintf("%s@%d", it.URL.Path, it.Depth))
				var n int
				fmt.Sscanf(it.URL.Path, "/%d", &n)
				if n == 3 {
					return Page{Outcome: "ok", Body: []byte("the end")}
				}
				return Page{Outcome: "ok", Body: fmt.Appendf(nil, `<a href="/%d">next</a>`, n+1)}
			}}
			if err := c.Run(context.Background()); err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != tt.want {
				t.Errorf("fetched %v; want %s", got, tt.want)
			}
		})
	}
}

// A fetch gives up its whole site when the fetcher or the politeness
// transport gave up on the host, the host is down, or robots.txt is
// unreachable; each of these alone is enough, and nothing else is.
func TestStopsSite(t *testing.T) {
	for _, tt := range []struct {
		name string
		err  error
		want bool
	}{
		{"no error", nil, false},
		{"fetcher gave up", fetch.ErrGaveUp, true},
		{"politeness gave up", politeness.ErrGaveUp, true},
		{"host down", fmt.Errorf("get: %w", politeness.ErrHostDown), true},
		{"robots.txt unreachable", &robots.DisallowedError{URL: "http://a.test/", Unreachable: true}, true},
		{"disallowed by a rule", &robots.DisallowedError{URL: "http://a.test/", Rule: "Disallow: /"}, false},
		{"rate-limited", fetch.ErrRateLimited, false},
	} {
		if got := StopsSite(tt.err); got != tt.want {
			t.Errorf("%s: StopsSite(%v) = %v; want %v", tt.name, tt.err, got, tt.want)
		}
	}
}

// A page is HTML by its Content-Type; a missing page or header is not.
func TestIsHTML(t *testing.T) {
	for _, tt := range []struct {
		name string
		page *fetch.Page
		want bool
	}{
		{"no page", nil, false},
		{"no header", &fetch.Page{Status: 200, Body: []byte("<p>")}, false},
		{"html", &fetch.Page{Header: http.Header{"Content-Type": {"text/html; charset=utf-8"}}}, true},
		{"xhtml", &fetch.Page{Header: http.Header{"Content-Type": {"application/xhtml+xml"}}}, true},
		{"text", &fetch.Page{Header: http.Header{"Content-Type": {"text/plain"}}}, false},
		{"malformed", &fetch.Page{Header: http.Header{"Content-Type": {"text/html; ="}}}, false},
	} {
		if got := IsHTML(tt.page); got != tt.want {
			t.Errorf("%s: IsHTML = %v; want %v", tt.name, got, tt.want)
		}
	}
}

// PageOf gives the crawler the outcome, status, size and final URL of a
// fetch; links (the body) only for an HTML page fetched without error;
// Reason for an error; StopSite and Retry from the error's kind.
func TestPageOf(t *testing.T) {
	html := http.Header{"Content-Type": {"text/html"}}
	body := []byte(`<a href="/next">next</a>`)
	unreachable := &fetch.Error{Outcome: fetch.Unreachable, URL: "http://a.test/", Status: 500, Err: fetch.ErrUnreachable}
	rateLimited := &fetch.Error{Outcome: fetch.RateLimited, Err: fetch.ErrRateLimited}
	gaveUp := &fetch.Error{Outcome: fetch.GaveUp, Err: fetch.ErrGaveUp}
	for _, tt := range []struct {
		name string
		page *fetch.Page
		err  error
		want string // the Page's fields, FinalURL written out and Body as text
	}{
		{"html", &fetch.Page{Status: 200, Header: html, Body: body, FinalURL: "http://a.test/final"}, nil,
			`final=http://a.test/final status=200 outcome=ok body="<a href=\"/next\">next</a>" bytes=24 reason="" stop=false retry=false`},
		{"not html", &fetch.Page{Status: 200, Header: http.Header{"Content-Type": {"text/plain"}}, Body: body, FinalURL: "http://a.test/"}, nil,
			`final=http://a.test/ status=200 outcome=ok body="" bytes=24 reason="" stop=false retry=false`},
		{"html with an error", &fetch.Page{Status: 500, Header: html, Body: body, FinalURL: "http://a.test/"}, unreachable,
			`final=http://a.test/ status=500 outcome=unreachable body="" bytes=24 reason="` + unreachable.Error() + `" stop=false retry=false`},
		{"no final URL", &fetch.Page{Status: 200, Header: html, Body: body}, nil,
			`final=<nil> status=200 outcome=ok body="<a href=\"/next\">next</a>" bytes=24 reason="" stop=false retry=false`},
		{"final URL unparsable", &fetch.Page{Status: 200, Header: html, Body: body, FinalURL: "http://a.test/%zz"}, nil,
			`final=<nil> status=200 outcome=ok body="<a href=\"/next\">next</a>" bytes=24 reason="" stop=false retry=false`},
		{"rate-limited, no page", nil, rateLimited,
			`final=<nil> status=0 outcome=rate_limited body="" bytes=0 reason="` + rateLimited.Error() + `" stop=false retry=true`},
		{"gave up, no page", nil, gaveUp,
			`final=<nil> status=0 outcome=gave_up body="" bytes=0 reason="` + gaveUp.Error() + `" stop=true retry=false`},
	} {
		p := PageOf(tt.page, tt.err)
		final := "<nil>"
		if p.FinalURL != nil {
			final = p.FinalURL.String()
		}
		got := fmt.Sprintf("final=%s status=%d outcome=%s body=%q bytes=%d reason=%q stop=%v retry=%v",
			final, p.Status, p.Outcome, p.Body, p.Bytes, p.Reason, p.StopSite, p.Retry)
		if got != tt.want {
			t.Errorf("%s: PageOf =\n%s; want\n%s", tt.name, got, tt.want)
		}
	}
}

// Allowed and Accept each refuse a URL on their own.
func TestFrontier_AllowedAndAccept(t *testing.T) {
	f := &Frontier{Allowed: func(site string) bool { return site == "http://b.test" }, Accept: LooksHTML}
	for _, tt := range []struct {
		raw  string
		want bool
	}{
		{"http://a.test/", false},      // site not allowed
		{"http://b.test/x.pdf", false}, // not accepted
		{"http://b.test/", true},
	} {
		if got := f.Add(u(tt.raw), 0, "seed"); got != tt.want {
			t.Errorf("Add(%s) = %v, want %v", tt.raw, got, tt.want)
		}
	}
	if f.Len() != 1 {
		t.Errorf("Len %d; want 1", f.Len())
	}
}

// AddLinks queues a page's links to its site, in page order, once each,
// skipping nofollow links, links to other sites and URLs Accept refuses.
func TestFrontier_AddLinks(t *testing.T) {
	f := &Frontier{Accept: LooksHTML}
	body := []byte(`<a href="/ads" rel="nofollow">ads</a> <a href="http://other.test/">other</a>
		<a href="/doc.pdf">pdf</a> <a href="/1">1</a> <a href="/1#top">1 again</a> <a href="2">2</a>`)
	if n := f.AddLinks(u("http://a.test/dir/"), body, 1, "http://a.test"); n != 2 {
		t.Errorf("AddLinks queued %d; want 2", n)
	}
	var got []string
	for it, ok := f.Next("http://a.test"); ok; it, ok = f.Next("http://a.test") {
		got = append(got, fmt.Sprintf("%s@%d %s", it.Key, it.Depth, it.From))
	}
	if want := "[http://a.test/1@1 link http://a.test/dir/2@1 link]"; fmt.Sprint(got) != want {
		t.Errorf("queued %v; want %s", got, want)
	}
}

// Frontier.Retry queues an item once more, at the end of its site's queue;
// an item retried already is not queued again.
func TestFrontier_RetryOnce(t *testing.T) {
	f := &Frontier{}
	f.AddAll([]*url.URL{u("http://a.test/0"), u("http://a.test/1")}, "seed")
	it, _ := f.Next("http://a.test")
	if !f.Retry(it) {
		t.Fatal("the first Retry was refused")
	}
	var got []string
	for it, ok := f.Next("http://a.test"); ok; it, ok = f.Next("http://a.test") {
		got = append(got, fmt.Sprintf("%s tries %d", it.Key, it.Tries))
		if it.Tries > 0 && f.Retry(it) {
			t.Errorf("%s retried a second time", it.Key)
		}
	}
	if want := "[http://a.test/1 tries 0 http://a.test/0 tries 1]"; fmt.Sprint(got) != want {
		t.Errorf("Next gave %v; want %s", got, want)
	}
	if f.Len() != 0 {
		t.Errorf("Len %d after the last Next; want 0", f.Len())
	}
	if it, ok := f.Next("http://none.test"); ok {
		t.Errorf("Next of a site never queued = %v, true", it)
	}
}

// LooksHTML refuses the extensions of documents other than HTML pages,
// whatever their case, and takes every other path.
func TestLooksHTML(t *testing.T) {
	for _, ext := range strings.Fields(`.pdf .doc .docx .xls .xlsx .ppt .pptx .zip .gz .tgz .rar .7z
		.exe .dmg .iso .jpg .jpeg .png .gif .webp .svg .ico .bmp .mp3 .mp4 .m4a .wav .avi .mov .webm
		.css .js .json .xml .rss .txt .csv .woff .woff2`) {
		for _, p := range []string{"/f" + ext, "/dir/F" + strings.ToUpper(ext)} {
			if LooksHTML(u("http://a.test" + p)) {
				t.Errorf("LooksHTML(%s) = true", p)
			}
		}
	}
	for _, p := range []string{"", "/", "/a.html", "/a.php", "/a.pdf/", "/pdf", "/a.pdfx"} {
		if !LooksHTML(u("http://a.test" + p)) {
			t.Errorf("LooksHTML(%q) = false", p)
		}
	}
}
