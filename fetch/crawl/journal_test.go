package crawl

import (
	"context"
	"fmt"
	"net/url"
	"sync"
	"testing"
)

// memJournal is a MemoryJournal that also keeps every step.
type memJournal struct {
	MemoryJournal
	mu    sync.Mutex
	steps []Step
}

func newMemJournal() *memJournal { return &memJournal{} }

func (j *memJournal) Record(ctx context.Context, s Step) error {
	j.mu.Lock()
	j.steps = append(j.steps, s)
	j.mu.Unlock()
	return j.MemoryJournal.Record(ctx, s)
}

// A page's outcome and the links it queued are one journal step, and the
// journal ends empty with every page done.
func TestCrawler_JournalStepPerOutcome(t *testing.T) {
	j := newMemJournal()
	f := &Frontier{Journal: j}
	f.Add(u("http://a.test/p0"), 0, "seed")
	if len(j.queue) != 1 {
		t.Fatalf("the seed is not in the journal: %v", j.queue)
	}
	c := &Crawler{Frontier: f, FollowLinks: true, Get: func(ctx context.Context, it Item) Page {
		var n int
		fmt.Sscanf(it.URL.Path, "/p%d", &n)
		return Page{Outcome: "ok", Body: fmt.Appendf(nil, `<a href="/p%d">x</a><a href="/p%d">y</a>`, (n+1)%6, (n+2)%6)}
	}}
	c.Run(context.Background())
	if len(j.queue) != 0 || len(j.done) != 6 {
		t.Errorf("journal after the crawl: queued %v, done %d", j.queue, len(j.done))
	}
	for _, s := range j.steps {
		if len(s.Queued) > 0 && s.Queued[0].From == "link" && len(s.Done) != 1 {
			t.Errorf("links queued without their page's outcome in the same step: %+v", s)
		}
	}
}

// An item whose fetch was interrupted stays in the journal, and a new
// frontier resumes it, with the per-site count.
func TestCrawler_InterruptedItemResumes(t *testing.T) {
	j := newMemJournal()
	f := &Frontier{Journal: j, MaxPerSite: 3}
	if n := f.AddAll([]*url.URL{u("http://a.test/0"), u("http://a.test/1"), u("http://a.test/2"), u("http://a.test/3")}, "seed"); n != 3 || len(j.steps) != 1 {
		t.Fatalf("AddAll queued %d in %d steps, want 3 (the cap) in 1", n, len(j.steps))
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := &Crawler{Frontier: f, Get: func(_ context.Context, it Item) Page {
		if it.URL.Path == "/1" {
			cancel() // the process stops while this page is fetched
		}
		return Page{Outcome: "ok"}
	}}
	c.Run(ctx)
	next := &Frontier{Journal: j, MaxPerSite: 3}
	n, err := next.Resume(context.Background())
	if err != nil || n != 2 {
		t.Fatalf("Resume = %d, %v; want the 2 unfinished items", n, err)
	}
	if it, _ := next.Next("http://a.test"); it.URL.Path != "/1" {
		t.Errorf("first resumed item %v, want /1 (interrupted)", it.URL)
	}
	if next.Add(u("http://a.test/4"), 0, "seed") {
		t.Error("the site's cap was forgotten on resume")
	}
	if !j.done["http://a.test/0"] || j.done["http://a.test/1"] {
		t.Errorf("done %v", j.done)
	}
}
