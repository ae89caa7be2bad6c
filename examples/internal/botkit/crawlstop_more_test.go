package botkit

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/fetch/crawl"
	"github.com/goodbot-go/goodbot/fetch/fetchtest"
)

// An interrupted crawl ends with ExitPartial and is reported as
// interrupted, not as a failure of its queue.
func TestCrawlRun_Stopped(t *testing.T) {
	for _, tc := range []struct {
		name      string
		journal   crawl.Journal
		interrupt bool
		log, not  string
	}{
		{"interrupted", nil, true, "interrupted", "queue failed"},
	} {
		w := crawlWeb(fetchtest.HTML("c"))
		synctest.Test(t, func(t *testing.T) {
			s, f, _, _, logs := crawlSession(t, w)
			front := &crawl.Frontier{Journal: tc.journal}
			front.Add(mustURL(t, "http://a.test/"), 0, "seed")
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			c := &Crawl{Fetcher: f, Frontier: front, FollowLinks: true}
			if tc.interrupt {
				c.OnPage = func(crawl.Item, *fetch.Page, Result) { cancel() }
			}
			c.Run(ctx, s)
			if len(w.Requests()) == 0 {
				t.Fatalf("%s: nothing fetched", tc.name)
			}
			if got := s.Exit(ctx, ExitOK); got != ExitPartial {
				t.Errorf("%s: Exit = %d, want %d", tc.name, got, ExitPartial)
			}
			if !strings.Contains(logs.String(), tc.log) || strings.Contains(logs.String(), tc.not) {
				t.Errorf("%s: log has not %q or has %q:\n%s", tc.name, tc.log, tc.not, logs.String())
			}
		})
	}
}
