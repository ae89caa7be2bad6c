package fetch_test

import (
	"net/url"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/fetch/fetchtest"
	"github.com/goodbot-go/goodbot/robots"
)

// robotsFiller is n bytes of comment lines, for robots.txt files of a given
// size.
func robotsFiller(n int) string {
	line := "# " + strings.Repeat("filler ", 9) + "\n" // 66 bytes
	return strings.Repeat(line, n/len(line)+1)[:n/len(line)*len(line)]
}

// B4: the gap after a site's robots.txt fetch, the first of the site,
// already honours its Crawl-delay, however the body arrives: the page that
// robots.txt admits goes out the Crawl-delay (7 s, more than the 1 s
// delay) after the robots.txt answer ended. The copy is parsed whole when
// the body ends, not from what the first read of it returned (a body read
// in several pieces: past the 64 KiB challenge sniff, or trickled), and
// when the robots cache closes it before its end (a file longer than the
// cache reads, RFC 9309 §2.5's 500 KiB, its Crawl-delay near the top).
func TestRobots_B4_FirstGapHonoursCrawlDelayWhateverTheBody(t *testing.T) {
	const crawl = 7 * time.Second
	group := "User-agent: *\nAllow: /\n"
	tests := []struct {
		name    string
		robots  string
		trickle bool
	}{
		{name: "small file in one write", robots: group + "Crawl-delay: 7\n"},
		{name: "Crawl-delay after the first 64 KiB, one write", robots: group + robotsFiller(100<<10) + "Crawl-delay: 7\n"},
		{name: "Crawl-delay at the end of a trickled file", robots: group + "Crawl-delay: 7\n", trickle: true},
		{name: "Crawl-delay at the top of a file cut at the cache's limit", robots: group + "Crawl-delay: 7\n" + robotsFiller(robots.MaxParseBytes+(64<<10))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := fetchtest.New()
				defer w.Close()
				h := w.Host("a.test").Fallback(fetchtest.HTML("p"))
				if tt.trickle {
					h.Handle("/robots.txt", fetchtest.Trickle(10*time.Millisecond, tt.robots))
				} else {
					h.Handle("/robots.txt", fetchtest.Robots(tt.robots))
				}
				bot := memBot(w)
				bot.Politeness.MinDelay = time.Second
				f := mustFetcher(t, bot)
				get(t, f, "http://a.test/p", fetch.OK)
				rs, ps := w.RequestsTo("a.test", "/robots.txt"), w.RequestsTo("a.test", "/p")
				if len(rs) != 1 || len(ps) != 1 {
					t.Fatalf("%d robots.txt and %d page requests, want one each", len(rs), len(ps))
				}
				if r, _ := f.Robots().Cached(mustURL(t, "http://a.test/")); r == nil {
					t.Fatal("no robots.txt copy cached")
				} else if d, ok := r.CrawlDelay(testAgent); !ok || d != crawl {
					t.Fatalf("cached Crawl-delay %v %v, want %v: the file is not what the test means", d, ok, crawl)
				}
				if gap := ps[0].Start.Sub(rs[0].End); gap != crawl {
					t.Errorf("page sent %v after robots.txt ended, want the Crawl-delay %v", gap, crawl)
				}
			})
		})
	}
}

func mustURL(t *testing.T, raw string) *url.URL {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
