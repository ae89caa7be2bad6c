package botkit

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/goodbot-go/goodbot/fetch/crawl"
	"github.com/goodbot-go/goodbot/fetch/fetchtest"
	"github.com/goodbot-go/goodbot/internal/syncbuf"
)

// Run keeps the session's progress (the one Apply and Begin wired to the
// pacing events and the paused-host count), or makes one, and feeds it the
// crawl's counters.
func TestCrawlRun_Progress(t *testing.T) {
	for _, preset := range []bool{false, true} {
		w := crawlWeb(fetchtest.HTML("c"))
		synctest.Test(t, func(t *testing.T) {
			var stdout, stderr syncbuf.Buffer
			s, _ := testSession(t, Env{Stdout: &stdout, Stderr: &stderr})
			f := webFetcher(t, w)
			var mine *Progress
			if preset {
				mine = &Progress{W: &stderr}
				s.Prog = mine
			}
			front := &crawl.Frontier{}
			front.Add(mustURL(t, "http://a.test/"), 0, "seed")
			counts := (&Crawl{Fetcher: f, Frontier: front, FollowLinks: true}).Run(context.Background(), s)
			if counts["ok"] != 4 {
				t.Fatalf("preset=%v: counts %v", preset, counts)
			}
			if s.Prog == nil || (preset && s.Prog != mine) {
				t.Fatalf("preset=%v: session progress %p, set %p", preset, s.Prog, mine)
			}
			done, queued, _ := s.Prog.counts(s.Prog.start)
			if done != 4 || queued != 0 {
				t.Errorf("preset=%v: progress counts %d done, %d queued; want 4, 0", preset, done, queued)
			}
		})
	}
}
