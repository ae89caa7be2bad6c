package botkit

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/fetch/crawl"
	"github.com/goodbot-go/goodbot/fetch/fetchtest"
)

// brokenJournal is a crawl journal that records the seeds and then fails
// for good (a full disk).
type brokenJournal struct {
	crawl.MemoryJournal
	mu      sync.Mutex
	records int
}

var errDiskFull = errors.New("no space left on device")

func (j *brokenJournal) Record(ctx context.Context, step crawl.Step) error {
	j.mu.Lock()
	j.records++
	n := j.records
	j.mu.Unlock()
	if n > 1 {
		return errDiskFull
	}
	return j.MemoryJournal.Record(ctx, step)
}

// A crawl stopped before its end ends with ExitPartial, saying why: an
// interrupted one is reported as interrupted, not as a failure of its
// queue; one whose outcomes cannot be recorded stops after the page whose
// outcome failed (every page fetched after it would be fetched again by
// the next run) and is reported as its queue's failure, with the cause.
func TestCrawlRun_Stopped(t *testing.T) {
	for _, tc := range []struct {
		name      string
		journal   crawl.Journal
		interrupt bool
		log, not  string
	}{
		{"interrupted", nil, true, "interrupted", "queue failed"},
		{"journal fails", &brokenJournal{}, false, "the crawl stopped: its queue failed", "interrupted"},
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
			if n := w.Count("a.test", "/"); n != 1 {
				t.Fatalf("%s: the home page fetched %d times, want 1", tc.name, n)
			}
			for _, p := range []string{"/a", "/b", "/c"} {
				if n := w.Count("a.test", p); n != 0 {
					t.Errorf("%s: %s fetched %d times after the crawl stopped; want 0", tc.name, p, n)
				}
			}
			if got := s.Exit(ctx, ExitOK); got != ExitPartial {
				t.Errorf("%s: Exit = %d, want %d", tc.name, got, ExitPartial)
			}
			if tc.journal != nil && !strings.Contains(logs.String(), errDiskFull.Error()) {
				t.Errorf("%s: log lacks the journal's error:\n%s", tc.name, logs.String())
			}
			if !strings.Contains(logs.String(), tc.log) || strings.Contains(logs.String(), tc.not) {
				t.Errorf("%s: log has not %q or has %q:\n%s", tc.name, tc.log, tc.not, logs.String())
			}
		})
	}
}
