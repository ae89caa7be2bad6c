package crawl

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/fetch/fetchtest"
	"github.com/goodbot-go/goodbot/politeness"
)

const schedUA = "SchedTestBot/1.0 (+https://example.org/bot)"

// schedFetcher is a Fetcher on w's in-memory transport (usable in a
// synctest bubble) with a MinDelay of delay and no jitter.
func schedFetcher(t *testing.T, w *fetchtest.Web, delay time.Duration) *fetch.Fetcher {
	t.Helper()
	f, err := fetch.NewFetcher(fetch.Bot{UserAgent: schedUA, Transport: w.RoundTripper(),
		Politeness: politeness.Policy{MinDelay: delay}})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// times returns, per host, the offsets from start at which w's requests
// for pages (not robots.txt) started.
func times(w *fetchtest.Web, start time.Time) map[string][]time.Duration {
	out := map[string][]time.Duration{}
	for _, r := range w.Requests() {
		if r.Path != "/robots.txt" {
			out[r.Host] = append(out[r.Host], r.Start.Sub(start))
		}
	}
	return out
}

// A host paused by Retry-After: 60 holds no worker: with one worker, the
// other hosts' pages are all fetched during the pause, and the paused
// page is fetched once the pause is over. (The crawler of one worker per
// site held its only slot for the whole pause.)
func TestCrawler_PausedHostHoldsNoWorker(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := fetchtest.New()
		defer w.Close()
		var mu sync.Mutex
		limited := false
		w.Host("p.test").Handle("/robots.txt", fetchtest.Robots("")).
			Handle("/", fetchtest.HTML(`<a href="/slow">s</a> <a href="http://a.test/">a</a> <a href="http://b.test/">b</a>`)).
			Handle("/slow", http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
				mu.Lock()
				first := !limited
				limited = true
				mu.Unlock()
				if first {
					fetchtest.RetryAfter(429, "60").ServeHTTP(rw, r)
					return
				}
				fetchtest.HTML("done").ServeHTTP(rw, r)
			}))
		for _, h := range []string{"a.test", "b.test"} {
			w.Host(h).Handle("/robots.txt", fetchtest.Robots("")).
				Fallback(fetchtest.HTML(`<a href="/1">1</a> <a href="/2">2</a> <a href="/3">3</a>`))
		}
		f := &Frontier{}
		f.Add(u("http://p.test/"), 0, "seed")
		c := &Crawler{Frontier: f, Fetcher: schedFetcher(t, w, time.Second), Parallel: 1, FollowLinks: true, CrossSite: true}
		start := time.Now()
		if err := c.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		got := times(w, start)
		if len(got["a.test"]) != 4 || len(got["b.test"]) != 4 || len(got["p.test"]) != 3 {
			t.Fatalf("pages fetched: %v; want 4 on a.test and b.test, 3 on p.test (home, 429, retry)", got)
		}
		pause := got["p.test"][1] + 60*time.Second
		for _, h := range []string{"a.test", "b.test"} {
			if last := got[h][3]; last >= pause {
				t.Errorf("%s's last page at %v, after the pause of p.test ended (%v): the paused host held the worker", h, last, pause)
			}
		}
		if retry := got["p.test"][2]; retry != pause {
			t.Errorf("the paused page was fetched again at %v; want %v (the end of the pause)", retry, pause)
		}
		w.Check(t, fetchtest.NoOverlap(), fetchtest.MinGap(time.Second), fetchtest.RobotsFirst())
	})
}

// Sites are served in the order their turns come, each as soon as its
// politeness allows (its delay or Crawl-delay after its last request),
// even with one worker for three sites. (One worker per site served the
// sites one after the other.)
func TestCrawler_DueOrderExactTimes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := fetchtest.New()
		defer w.Close()
		sites := []struct {
			host, robots string
			want         []time.Duration
		}{
			{"a.test", "", []time.Duration{1 * time.Second, 2 * time.Second, 3 * time.Second}},
			{"b.test", "User-agent: *\nCrawl-delay: 2\n", []time.Duration{2 * time.Second, 4 * time.Second, 6 * time.Second}},
			{"c.test", "User-agent: *\nCrawl-delay: 3\n", []time.Duration{3 * time.Second, 6 * time.Second, 9 * time.Second}},
		}
		f := &Frontier{}
		for _, s := range sites {
			w.Host(s.host).Handle("/robots.txt", fetchtest.Robots(s.robots)).Fallback(fetchtest.HTML("p"))
			for i := range len(s.want) {
				f.Add(u(fmt.Sprintf("http://%s/%d", s.host, i)), 0, "seed")
			}
		}
		c := &Crawler{Frontier: f, Fetcher: schedFetcher(t, w, time.Second), Parallel: 1}
		start := time.Now()
		if err := c.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		got := times(w, start)
		for _, s := range sites {
			if !slices.Equal(got[s.host], s.want) {
				t.Errorf("%s: pages at %v; want %v", s.host, got[s.host], s.want)
			}
		}
		if d := time.Since(start); d != 9*time.Second {
			t.Errorf("crawl took %v; want 9s (c.test's last turn)", d)
		}
	})
}

// Parallel bounds the requests in flight, and with more sites due than
// workers every worker is busy: the crawl takes the time of the sites'
// own schedules, however long their gaps, as long as Parallel requests
// cover the demand. (One worker per site held its slot through the gaps.)
func TestCrawler_ParallelIsRequestsInFlight(t *testing.T) {
	for _, tt := range []struct {
		parallel, sites int
		delay           time.Duration
		want            time.Duration // crawl time
		slack           time.Duration // how much longer a valid schedule may take
	}{
		// 5 pages a site, 100 ms each: robots.txt, then a page every
		// delay+0.1 s (5.6 s); the robots.txt files of the 8 sites are read
		// 4 (2) at a time, so the last sites start 0.1 s (0.3 s) late.
		{parallel: 4, sites: 8, delay: time.Second, want: 5700 * time.Millisecond},
		{parallel: 2, sites: 8, delay: time.Second, want: 5900 * time.Millisecond},
		// No delay: two workers for 8 sites of 6 requests of 100 ms.
		{parallel: 2, sites: 8, delay: -1, want: 8 * 6 * 100 * time.Millisecond / 2},
		{parallel: 8, sites: 8, delay: -1, want: 6 * 100 * time.Millisecond},
		// Parallel 0: 256 workers; 3,072 requests of 100 ms, 256 at a
		// time, take at least 12 rounds. Which sites a worker takes when
		// 256 finish at one instant depends on the order they finish in,
		// and a schedule that serves each site's 6 requests one after the
		// other may then need a 13th round.
		{parallel: 0, sites: 512, delay: -1, want: 1200 * time.Millisecond, slack: 100 * time.Millisecond},
	} {
		t.Run(fmt.Sprintf("parallel=%d,sites=%d,delay=%v", tt.parallel, tt.sites, tt.delay), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := fetchtest.New()
				defer w.Close()
				var mu sync.Mutex
				inFlight, most := 0, 0
				track := func(h http.Handler) http.Handler {
					return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
						mu.Lock()
						inFlight++
						most = max(most, inFlight)
						mu.Unlock()
						h.ServeHTTP(rw, r)
						mu.Lock()
						inFlight--
						mu.Unlock()
					})
				}
				f := &Frontier{}
				for s := range tt.sites {
					h := fmt.Sprintf("h%d.test", s)
					w.Host(h).Handle("/robots.txt", track(fetchtest.Slow(100*time.Millisecond, fetchtest.Robots("")))).
						Fallback(track(fetchtest.Slow(100*time.Millisecond, fetchtest.HTML("p"))))
					for i := range 5 {
						f.Add(u(fmt.Sprintf("http://%s/%d", h, i)), 0, "seed")
					}
				}
				c := &Crawler{Frontier: f, Fetcher: schedFetcher(t, w, tt.delay), Parallel: tt.parallel}
				start := time.Now()
				if err := c.Run(context.Background()); err != nil {
					t.Fatal(err)
				}
				if n := len(w.Requests()); n != 6*tt.sites {
					t.Fatalf("%d requests; want %d", n, 6*tt.sites)
				}
				workers := tt.parallel
				if workers == 0 {
					workers = 256 // the promised default, not the constant
				}
				if most != min(workers, tt.sites) {
					t.Errorf("at most %d requests in flight; want %d", most, min(workers, tt.sites))
				}
				if d := time.Since(start); d < tt.want || d > tt.want+tt.slack {
					t.Errorf("crawl took %v; want %v (up to %v more)", d, tt.want, tt.slack)
				}
				w.Check(t, fetchtest.NoOverlap(), fetchtest.RobotsFirst())
			})
		})
	}
}

// Queued sites cost no goroutine: 10,000 sites due at once are served by
// Parallel workers. (One worker per site started 10,000 goroutines.)
func TestCrawler_NoGoroutinePerQueuedSite(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const sites = 10_000
		f := &Frontier{}
		for s := range sites {
			f.Add(u(fmt.Sprintf("http://h%d.test/", s)), 0, "seed")
		}
		base := runtime.NumGoroutine()
		c := &Crawler{Frontier: f, Parallel: 8, Get: func(ctx context.Context, it Item) Page {
			time.Sleep(time.Second)
			return Page{Outcome: "ok"}
		}}
		// The count is taken on the AfterFunc's goroutine (less that goroutine) and read after Run.
		var during atomic.Int64
		time.AfterFunc(1500*time.Millisecond, func() { during.Store(int64(runtime.NumGoroutine() - base - 1)) })
		if err := c.Run(context.Background()); err != nil || c.Done() != sites {
			t.Fatalf("Run = %v, %d pages; want nil, %d", err, c.Done(), sites)
		}
		if n := during.Load(); n == 0 || n > 8 {
			t.Errorf("%d goroutines more than before the crawl while it ran; want the 8 workers (Run's own goroutine is the dispatcher)", n)
		}
	})
}

// Waiting for a site's turn ends with ctx: Run returns at once with
// ctx's error, and the waiting items stay queued.
func TestCrawler_CancelWhileWaiting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := fetchtest.New()
		defer w.Close()
		w.Host("a.test").Handle("/robots.txt", fetchtest.Robots("User-agent: *\nCrawl-delay: 60\n")).Fallback(fetchtest.HTML("p"))
		f := &Frontier{}
		f.Add(u("http://a.test/0"), 0, "seed")
		f.Add(u("http://a.test/1"), 0, "seed")
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(30*time.Second, cancel)
		c := &Crawler{Frontier: f, Fetcher: schedFetcher(t, w, time.Second)}
		start := time.Now()
		if err := c.Run(ctx); !errors.Is(err, context.Canceled) {
			t.Fatalf("Run = %v; want context.Canceled", err)
		}
		if d := time.Since(start); d != 30*time.Second {
			t.Errorf("Run returned after %v; want 30s (the cancel)", d)
		}
		if n := w.Count("a.test", "/robots.txt"); n != 1 || c.Done() != 0 || f.Len() != 2 {
			t.Errorf("%d robots.txt requests, %d pages fetched, %d queued; want 1, 0 (the first turn comes at 60s) and 2", n, c.Done(), f.Len())
		}
	})
}

// spyQueue is a Queue that records the lease times asked and the ready
// time of each Finish that records an outcome, and can fail to lease.
type spyQueue struct {
	Queue
	mu      sync.Mutex
	ttls    []time.Duration
	readies []time.Time
	fail    error
}

func (q *spyQueue) Lease(ctx context.Context, now time.Time, ttl time.Duration) (Item, time.Time, bool, error) {
	q.mu.Lock()
	q.ttls = append(q.ttls, ttl)
	fail := q.fail
	q.mu.Unlock()
	if fail != nil {
		return Item{}, time.Time{}, false, fail
	}
	return q.Queue.Lease(ctx, now, ttl)
}

func (q *spyQueue) Finish(ctx context.Context, it Item, step Step, ready time.Time) error {
	if len(step.Done) > 0 {
		q.mu.Lock()
		q.readies = append(q.readies, ready)
		q.mu.Unlock()
	}
	return q.Queue.Finish(ctx, it, step, ready)
}

// With a Queue shared with other processes, items they add are seen
// within Recheck, not only at the next ready time this process knows.
func TestCrawler_RecheckSeesOthersItems(t *testing.T) {
	for _, tt := range []struct {
		recheck time.Duration
		want    time.Duration // when the other process's item is fetched
	}{
		{0, 60 * time.Second},
		{time.Second, 3 * time.Second},
	} {
		t.Run(fmt.Sprint(tt.recheck), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				shared := &spyQueue{Queue: NewMemoryQueue()}
				f := &Frontier{Queue: shared}
				f.Add(u("http://a.test/0"), 0, "seed")
				f.Add(u("http://a.test/1"), 0, "seed")
				start := time.Now()
				var mu sync.Mutex
				at := map[string]time.Duration{}
				c := &Crawler{Frontier: f, Recheck: tt.recheck, LeaseTTL: 5 * time.Minute, Get: func(ctx context.Context, it Item) Page {
					mu.Lock()
					at[it.Key] = time.Since(start)
					mu.Unlock()
					return Page{Outcome: "ok"}
				}}
				// a.test's second page waits 60 s; another process adds a
				// page of b.test at 2.5 s.
				time.AfterFunc(2500*time.Millisecond, func() {
					shared.Add(context.Background(), []Item{{URL: u("http://b.test/"), Key: "http://b.test/", Site: "http://b.test"}}, 0)
				})
				ready := &readyQueue{spyQueue: shared, delay: 60 * time.Second}
				f.Queue = ready
				if err := c.Run(context.Background()); err != nil {
					t.Fatal(err)
				}
				if got := at["http://b.test/"]; got != tt.want {
					t.Errorf("the other process's page fetched at %v; want %v", got, tt.want)
				}
				for _, ttl := range shared.ttls {
					if ttl != 5*time.Minute {
						t.Fatalf("Lease asked for %v; want LeaseTTL, 5m", ttl)
					}
				}
			})
		})
	}
}

// readyQueue makes every site due delay after each of its items.
type readyQueue struct {
	*spyQueue
	delay time.Duration
}

func (q *readyQueue) Finish(ctx context.Context, it Item, step Step, _ time.Time) error {
	return q.spyQueue.Finish(ctx, it, step, time.Now().Add(q.delay))
}

// A Queue that fails to lease ends the crawl with its error.
func TestCrawler_QueueFailure(t *testing.T) {
	broken := errors.New("queue server gone")
	f := &Frontier{Queue: &spyQueue{Queue: NewMemoryQueue(), fail: broken}}
	f.Add(u("http://a.test/"), 0, "seed")
	c := &Crawler{Frontier: f, Get: func(context.Context, Item) Page { return Page{} }}
	if err := c.Run(context.Background()); !errors.Is(err, ErrQueue) || !errors.Is(err, broken) {
		t.Errorf("Run = %v; want ErrQueue wrapping the queue's error", err)
	}
}

// A lease asked for without a time lasts ten minutes.
func TestMemoryQueue_DefaultLeaseTTL(t *testing.T) {
	q := NewMemoryQueue()
	ctx := context.Background()
	if _, err := q.Add(ctx, []Item{{URL: u("http://a.test/"), Key: "http://a.test/", Site: "http://a.test"}}, 0); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if _, _, ok, _ := q.Lease(ctx, now, 0); !ok {
		t.Fatal("no lease")
	}
	if _, next, ok, _ := q.Lease(ctx, now, 0); ok || !next.Equal(now.Add(10*time.Minute)) {
		t.Errorf("next = %v; want the lease's end, 10 minutes on", next.Sub(now))
	}
}

// A URL robots.txt disallows does not wait for its site's turn: the
// Fetcher refuses it without a request, so its outcome is recorded as soon
// as it is leased. Here the first two URLs of a site are disallowed: they
// are answered when robots.txt has been read (0 s), not at the site's
// first turn after it (1 s), and the pages follow at their turns. (The
// crawler that waited for the turn recorded the refusals at 1 s.)
func TestCrawler_DisallowedURLDoesNotWaitForTheTurn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := fetchtest.New()
		defer w.Close()
		w.Host("a.test").Handle("/robots.txt", fetchtest.Robots("User-agent: *\nDisallow: /private/\n")).Fallback(fetchtest.HTML("p"))
		f := &Frontier{}
		for _, p := range []string{"/private/1", "/private/2", "/a", "/b"} {
			f.Add(u("http://a.test"+p), 0, "seed")
		}
		start := time.Now()
		var mu sync.Mutex
		at := map[string]time.Duration{}
		c := &Crawler{Frontier: f, Fetcher: schedFetcher(t, w, time.Second), Parallel: 1,
			OnPage: func(it Item, p Page) {
				mu.Lock()
				at[it.URL.Path+" "+p.Outcome] = time.Since(start)
				mu.Unlock()
			}}
		if err := c.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		want := map[string]time.Duration{"/private/1 disallowed": 0, "/private/2 disallowed": 0, "/a ok": time.Second, "/b ok": 2 * time.Second}
		if !maps.Equal(at, want) {
			t.Errorf("outcomes at %v; want %v", at, want)
		}
		if got := times(w, start)["a.test"]; !slices.Equal(got, []time.Duration{time.Second, 2 * time.Second}) {
			t.Errorf("pages requested at %v; want [1s 2s]", got)
		}
	})
}

// slowJournal is a MemoryJournal whose Record of the outcome of key waits
// for release (a Journal waiting for its disk).
type slowJournal struct {
	MemoryJournal
	key      string
	entered  chan struct{}
	release  chan struct{}
	waiting  atomic.Bool // Record of key has begun and not returned
	recorded atomic.Int32
}

func (j *slowJournal) Record(ctx context.Context, step Step) error {
	if len(step.Done) > 0 && step.Done[0] == j.key {
		j.waiting.Store(true)
		close(j.entered)
		select {
		case <-j.release:
		case <-time.After(5 * time.Second): // the crawl waits for this Record: it fails below
		}
		j.waiting.Store(false)
	}
	err := j.MemoryJournal.Record(ctx, step)
	if len(step.Done) > 0 {
		j.recorded.Add(1)
	}
	return err
}

// A worker does not wait for its page's outcome to become durable: with
// one worker, the second site's page is fetched while the first's outcome
// is still being recorded; the first site's next page waits for it; Run
// returns only once every outcome is recorded.
func TestCrawler_WorkerFreeWhileOutcomeIsRecorded(t *testing.T) {
	j := &slowJournal{key: "http://a.test/1", entered: make(chan struct{}), release: make(chan struct{})}
	f := &Frontier{Journal: j}
	f.AddAll([]*url.URL{u("http://a.test/1"), u("http://b.test/1"), u("http://a.test/2")}, "seed")
	var mu sync.Mutex
	var fetched []string
	c := &Crawler{Frontier: f, Parallel: 1, Get: func(ctx context.Context, it Item) Page {
		mu.Lock()
		fetched = append(fetched, it.Key)
		mu.Unlock()
		if it.Key == "http://b.test/1" {
			select {
			case <-j.entered: // a.test/1's Record began (it may begin just after this Get)
				if !j.waiting.Load() {
					t.Error("b.test/1 fetched after a.test/1's Record returned; want while it waits")
				}
				close(j.release)
			case <-time.After(5 * time.Second):
				t.Error("a.test/1's Record never began while b.test/1 was fetched")
			}
		}
		return Page{Outcome: "ok"}
	}}
	if err := c.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := j.recorded.Load(); n != 3 {
		t.Errorf("Run returned with %d outcomes recorded; want 3", n)
	}
	want := []string{"http://a.test/1", "http://b.test/1", "http://a.test/2"}
	if !slices.Equal(fetched, want) {
		t.Errorf("fetched %v; want %v (a.test/2 after a.test/1's Finish)", fetched, want)
	}
}

// A redirected page's links are read against its final URL, and the final
// URL counts as done: a link to it later in the crawl is not leased again.
func TestCrawler_RedirectTargetIsDone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := fetchtest.New()
		defer w.Close()
		w.Host("a.test").Handle("/robots.txt", fetchtest.Robots("")).
			Handle("/old", fetchtest.Redirect("/dir/new", http.StatusMovedPermanently)).
			Handle("/dir/new", fetchtest.HTML(`<a href="page">p</a>`)).
			Handle("/dir/page", fetchtest.HTML(`<a href="/dir/new">back</a>`)).
			Fallback(fetchtest.HTML("elsewhere"))
		f := &Frontier{}
		f.Add(u("http://a.test/old"), 0, "seed")
		var mu sync.Mutex
		var got []string
		c := &Crawler{Frontier: f, Fetcher: schedFetcher(t, w, time.Second), FollowLinks: true,
			OnPage: func(it Item, p Page) {
				mu.Lock()
				got = append(got, it.URL.Path+" "+p.Outcome)
				mu.Unlock()
			}}
		if err := c.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		if n := w.Count("a.test", "/dir/new"); n != 1 {
			t.Fatalf("%d requests for the redirect's target; want 1", n)
		}
		if want := []string{"/old ok", "/dir/page ok"}; !slices.Equal(got, want) {
			t.Errorf("items handled %v; want %v (the link resolved against the final URL, which is not leased again)", got, want)
		}
	})
}

// Handle sees every page fetched; an error it returns is logged, with the
// page's URL, and the crawl goes on.
func TestCrawler_HandleErrorIsLogged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := fetchtest.New()
		defer w.Close()
		w.Host("a.test").Handle("/robots.txt", fetchtest.Robots("")).Fallback(fetchtest.HTML("p"))
		f := &Frontier{}
		f.AddAll([]*url.URL{u("http://a.test/bad"), u("http://a.test/good")}, "seed")
		var logged bytes.Buffer
		var handled []string
		c := &Crawler{Frontier: f, Fetcher: schedFetcher(t, w, time.Second), Parallel: 1,
			Log: slog.New(slog.NewTextHandler(&logged, nil)),
			Handle: func(_ context.Context, it Item, _ *fetch.Page) error {
				handled = append(handled, it.URL.Path)
				if it.URL.Path == "/bad" {
					return errors.New("no room for it")
				}
				return nil
			}}
		if err := c.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		if want := []string{"/bad", "/good"}; !slices.Equal(handled, want) || c.Done() != 2 {
			t.Fatalf("handled %v, %d pages; want %v, 2", handled, c.Done(), want)
		}
		lines := strings.Split(strings.TrimSpace(logged.String()), "\n")
		if len(lines) != 1 || !strings.Contains(lines[0], "page handler failed") ||
			!strings.Contains(lines[0], "url=http://a.test/bad") || !strings.Contains(lines[0], "no room for it") {
			t.Errorf("log %q; want one warning for /bad with the handler's error", lines)
		}
	})
}

// A page's Finish makes its site due at its next turn, as the Fetcher
// paces it (its delay after the request), so that the site's next item is
// leased when its turn has come.
func TestCrawler_FinishedSiteDueAtItsNextTurn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := fetchtest.New()
		defer w.Close()
		w.Host("a.test").Handle("/robots.txt", fetchtest.Robots("")).Fallback(fetchtest.HTML("p"))
		q := &spyQueue{Queue: NewMemoryQueue()}
		f := &Frontier{Queue: q}
		f.AddAll([]*url.URL{u("http://a.test/0"), u("http://a.test/1"), u("http://a.test/2")}, "seed")
		c := &Crawler{Frontier: f, Fetcher: schedFetcher(t, w, time.Second), Parallel: 1}
		start := time.Now()
		if err := c.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got := times(w, start)["a.test"]; !slices.Equal(got, []time.Duration{time.Second, 2 * time.Second, 3 * time.Second}) {
			t.Fatalf("pages requested at %v; want [1s 2s 3s]", got)
		}
		var due []time.Duration
		for _, r := range q.readies {
			due = append(due, r.Sub(start))
		}
		if want := []time.Duration{2 * time.Second, 3 * time.Second, 4 * time.Second}; !slices.Equal(due, want) {
			t.Errorf("the site due again at %v after its pages; want %v (a second after each)", due, want)
		}
	})
}
