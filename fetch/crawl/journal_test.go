package crawl

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// memJournal is a MemoryJournal that also keeps every step, and fails
// every Record with fail when it is set, from the failFrom-th on (counted
// from 1; 0: every one).
type memJournal struct {
	MemoryJournal
	mu       sync.Mutex
	steps    []Step
	fail     error
	failFrom int
}

func newMemJournal() *memJournal { return &memJournal{} }

func (j *memJournal) Record(ctx context.Context, s Step) error {
	j.mu.Lock()
	j.steps = append(j.steps, s)
	fail := j.fail
	if len(j.steps) < j.failFrom {
		fail = nil
	}
	j.mu.Unlock()
	if fail != nil {
		return fail
	}
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

// failingQueue is a Queue whose Finish fails with fail from the after-th
// call on, and (with lost) answers the first call with a lost lease after
// applying it; it counts the calls.
type failingQueue struct {
	Queue
	mu    sync.Mutex
	calls int
	after int
	fail  error
	lost  bool
}

func (q *failingQueue) Finish(ctx context.Context, it Item, step Step, ready time.Time) error {
	q.mu.Lock()
	q.calls++
	n := q.calls
	q.mu.Unlock()
	if q.fail != nil && n >= q.after {
		return q.fail
	}
	err := q.Queue.Finish(ctx, it, step, ready)
	if q.lost && n == 1 && err == nil {
		return &LeaseError{Site: it.Site}
	}
	return err
}

// An outcome the Queue fails to record (its Journal cannot write, a shared
// queue's server is gone) stops the crawl: Run leases nothing more and
// returns ErrQueue with the Queue's error, each outcome not recorded is
// logged with its URL, and what was not recorded is still queued for the
// next run. Without the stop, every page fetched after the failure would
// be fetched again when the crawl resumes.
func TestCrawler_FinishFailureStopsTheCrawl(t *testing.T) {
	const sites, parallel = 40, 2
	seeds := make([]*url.URL, sites)
	for i := range seeds {
		seeds[i] = u(fmt.Sprintf("http://s%d.test/", i))
	}
	for _, tt := range []struct {
		name string
		err  error
		make func(err error) (*Frontier, *memJournal)
	}{
		{"journal", errors.New("disk full"), func(err error) (*Frontier, *memJournal) {
			// Record 1 is the seeds, 2 and 3 two outcomes; 4 fails.
			j := &memJournal{fail: err, failFrom: 4}
			return &Frontier{Journal: j}, j
		}},
		{"shared queue", errors.New("queue server gone"), func(err error) (*Frontier, *memJournal) {
			return &Frontier{Queue: &failingQueue{Queue: NewMemoryQueue(), after: 3, fail: err}}, nil
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f, j := tt.make(tt.err)
			if n := f.AddAll(seeds, "seed"); n != sites {
				t.Fatalf("AddAll queued %d, want %d", n, sites)
			}
			var logged bytes.Buffer
			c := &Crawler{Frontier: f, Parallel: parallel, Log: slog.New(slog.NewTextHandler(&logged, nil)),
				Get: func(context.Context, Item) Page { return Page{Outcome: "ok"} }}
			// A crawl that goes on leases the items whose Finish failed again
			// and again: the deadline ends it.
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			err := c.Run(ctx)
			if !errors.Is(err, ErrQueue) || !errors.Is(err, tt.err) {
				t.Fatalf("Run = %v; want ErrQueue wrapping %q", err, tt.err)
			}
			// Two outcomes recorded, the failing one, and at most what the
			// workers, the finishers and their queue held when it failed.
			if got, most := c.Done(), 2+1+3*parallel+1; got < 3 || got > most {
				t.Errorf("%d pages fetched of %d; want at least the 3 up to the failure and at most %d", got, sites, most)
			}
			lines := strings.Split(strings.TrimSpace(logged.String()), "\n")
			if len(lines) != c.Done()-2 {
				t.Errorf("%d lines logged for %d outcomes not recorded: %q", len(lines), c.Done()-2, lines)
			}
			for _, line := range lines {
				if !strings.Contains(line, "level=ERROR") || !strings.Contains(line, tt.err.Error()) || !strings.Contains(line, "url=http://s") {
					t.Errorf("log line %q; want an error with the page's URL and the queue's error", line)
				}
			}
			if j == nil {
				return
			}
			next := &Frontier{Journal: j}
			if n, err := next.Resume(context.Background()); err != nil || n != sites-2 {
				t.Errorf("Resume = %d, %v; want the %d outcomes not recorded", n, err, sites-2)
			}
		})
	}
}

// A lease lost (the item went to another taker) is logged and the crawl
// goes on: the item is the other taker's to finish.
func TestCrawler_LostLeaseDoesNotStopTheCrawl(t *testing.T) {
	f := &Frontier{Queue: &failingQueue{Queue: NewMemoryQueue(), lost: true}}
	f.AddAll([]*url.URL{u("http://a.test/0"), u("http://a.test/1"), u("http://b.test/0")}, "seed")
	var logged bytes.Buffer
	c := &Crawler{Frontier: f, Log: slog.New(slog.NewTextHandler(&logged, nil)),
		Get: func(context.Context, Item) Page { return Page{Outcome: "ok"} }}
	if err := c.Run(context.Background()); err != nil {
		t.Fatalf("Run = %v; want nil", err)
	}
	if c.Done() != 3 || f.Len() != 0 {
		t.Errorf("%d pages fetched, %d left; want 3, 0", c.Done(), f.Len())
	}
	if n := strings.Count(logged.String(), "no lease on an item of"); n != 1 {
		t.Errorf("log %q; want the lost lease once", logged.String())
	}
}

// Retry and Drop record their change in the Journal: a new frontier
// resumes the retried item last, with its try counted, and not the
// dropped site's items.
func TestFrontier_RetryAndDropAreJournaled(t *testing.T) {
	j := newMemJournal()
	f := &Frontier{Journal: j}
	f.AddAll([]*url.URL{u("http://a.test/0"), u("http://a.test/1"), u("http://b.test/0")}, "seed")
	it, ok := f.Next("http://a.test")
	if !ok || !f.Retry(it) {
		t.Fatalf("Next = %v, %v; want a.test/0, retried", it.Key, ok)
	}
	if n := f.Drop("http://b.test"); n != 1 {
		t.Fatalf("Drop = %d; want 1", n)
	}
	next := &Frontier{Journal: j}
	if n, err := next.Resume(context.Background()); err != nil || n != 2 {
		t.Fatalf("Resume = %d, %v; want 2 (a.test/1 and the retry)", n, err)
	}
	var got []string
	for it, ok := next.Next("http://a.test"); ok; it, ok = next.Next("http://a.test") {
		got = append(got, fmt.Sprintf("%s tries %d", it.Key, it.Tries))
	}
	if want := "[http://a.test/1 tries 0 http://a.test/0 tries 1]"; fmt.Sprint(got) != want {
		t.Errorf("resumed %v; want %s", got, want)
	}
	if sites := next.Sites(); len(sites) != 0 {
		t.Errorf("sites %v left; want none (b.test was dropped)", sites)
	}
}

// Resume skips the journal's items whose key the frontier has seen (here
// marked before it) and queues the rest.
func TestFrontier_ResumeSkipsSeenKeys(t *testing.T) {
	j := newMemJournal()
	first := &Frontier{Journal: j}
	first.AddAll([]*url.URL{u("http://a.test/0"), u("http://a.test/1"), u("http://a.test/2")}, "seed")
	next := &Frontier{Journal: j}
	next.MarkSeen(u("http://a.test/1"))
	if _, err := next.Resume(context.Background()); err != nil {
		t.Fatal(err)
	}
	var got []string
	for it, ok := next.Next("http://a.test"); ok; it, ok = next.Next("http://a.test") {
		got = append(got, it.Key)
	}
	if want := "[http://a.test/0 http://a.test/2]"; fmt.Sprint(got) != want {
		t.Errorf("queued %v; want %s", got, want)
	}
}

// Err reports the first error the Journal returned to Add (later ones do
// not replace it); the items stay queued in memory.
func TestFrontier_ErrIsTheFirstJournalError(t *testing.T) {
	j := newMemJournal()
	f := &Frontier{Journal: j}
	if !f.Add(u("http://a.test/0"), 0, "seed") || f.Err() != nil {
		t.Fatalf("Add with a working journal: Err = %v; want nil", f.Err())
	}
	first, second := errors.New("disk full"), errors.New("disk gone")
	for _, fail := range []error{first, second} {
		j.fail = fail
		if !f.Add(u("http://a.test/"+fail.Error()), 0, "seed") {
			t.Fatalf("Add refused while the journal fails with %v", fail)
		}
	}
	if err := f.Err(); !errors.Is(err, first) {
		t.Errorf("Err = %v; want the first journal error, %v", err, first)
	}
	if f.Len() != 3 {
		t.Errorf("Len %d; want 3 (queued in memory)", f.Len())
	}
}

// With a Journal, a link whose outcome an earlier run recorded is not
// queued, and is marked seen without counting against the site's cap.
func TestFrontier_LinksDoneInAnEarlierRun(t *testing.T) {
	j := newMemJournal()
	if err := j.Record(context.Background(), Step{Done: []string{"http://a.test/old"}}); err != nil {
		t.Fatal(err)
	}
	f := &Frontier{Journal: j, MaxPerSite: 2}
	body := []byte(`<a href="/old">old</a> <a href="/1">1</a> <a href="/2">2</a>`)
	if n := f.AddLinks(u("http://a.test/"), body, 1, "http://a.test"); n != 2 {
		t.Errorf("AddLinks queued %d; want 2 (the cap, the old link not counted)", n)
	}
	var got []string
	for it, ok := f.Next("http://a.test"); ok; it, ok = f.Next("http://a.test") {
		got = append(got, it.Key)
	}
	if want := "[http://a.test/1 http://a.test/2]"; fmt.Sprint(got) != want {
		t.Errorf("queued %v; want %s", got, want)
	}
	if !f.Seen(u("http://a.test/old")) {
		t.Error("the link done in an earlier run is not marked seen")
	}
}

// A page that gives up its site takes the site's items out of the journal
// too, the page itself included, also when it asked for a retry: a new
// frontier resumes none of them.
func TestCrawler_StopSiteLeavesTheJournal(t *testing.T) {
	for _, retry := range []bool{false, true} {
		t.Run(fmt.Sprint("retry=", retry), func(t *testing.T) {
			j := newMemJournal()
			f := &Frontier{Journal: j}
			f.AddAll([]*url.URL{u("http://a.test/0"), u("http://a.test/1"), u("http://a.test/2")}, "seed")
			c := &Crawler{Frontier: f, Get: func(context.Context, Item) Page {
				return Page{Outcome: "gave_up", StopSite: true, Retry: retry}
			}}
			if err := c.Run(context.Background()); err != nil {
				t.Fatal(err)
			}
			if c.Done() != 1 || f.Len() != 0 {
				t.Fatalf("%d fetched, %d left; want 1, 0 (the site given up)", c.Done(), f.Len())
			}
			next := &Frontier{Journal: j}
			if n, err := next.Resume(context.Background()); err != nil || n != 0 {
				t.Errorf("Resume = %d, %v; want nothing left of the site given up", n, err)
			}
		})
	}
}

// MemoryJournal's Load counts the URLs admitted per site: a URL queued
// again (recorded twice, or retried) is counted once, and a retry alone
// is no admission.
func TestMemoryJournal_CountsEachURLOnce(t *testing.T) {
	a0 := Item{URL: u("http://a.test/0"), Key: "http://a.test/0", Site: "http://a.test"}
	retry := a0
	retry.Tries = 1
	for _, tt := range []struct {
		name  string
		steps []Step
		want  int // a.test's count
	}{
		{"queued once", []Step{{Queued: []Item{a0}}}, 1},
		{"queued twice", []Step{{Queued: []Item{a0}}, {Queued: []Item{a0}}}, 1},
		{"queued, then retried", []Step{{Queued: []Item{a0}}, {Queued: []Item{retry}}}, 1},
		{"a retry alone", []Step{{Queued: []Item{retry}}}, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			j := &MemoryJournal{}
			for _, s := range tt.steps {
				if err := j.Record(context.Background(), s); err != nil {
					t.Fatal(err)
				}
			}
			items, counts, err := j.Load(context.Background())
			if err != nil || len(items) != 1 || items[0].Key != a0.Key {
				t.Fatalf("Load = %v, %v; want a.test/0 queued", keysOf(items), err)
			}
			if counts["http://a.test"] != tt.want {
				t.Errorf("a.test counted %d; want %d", counts["http://a.test"], tt.want)
			}
		})
	}
}
