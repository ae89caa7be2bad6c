package boltjournal_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/url"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.etcd.io/bbolt"

	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/fetch/boltstate"
	"github.com/goodbot-go/goodbot/fetch/crawl"
	"github.com/goodbot-go/goodbot/fetch/crawl/boltjournal"
	"github.com/goodbot-go/goodbot/internal/cputime"
)

// BenchmarkFrontierMemory reports the live heap per URL of a Frontier of
// 100,000 URLs on 100 sites: queued (all waiting) and seen (all taken out
// again, so only the seen set remains), in memory and with this Journal as
// Spill (MaxInMemory 1,000), in the same run, and the seconds taking them
// out took. The URLs are built before the measure and dropped by the
// Frontier's caller.
func BenchmarkFrontierMemory(b *testing.B) {
	const urls, batch = 100_000, 1000
	raw := make([]string, urls)
	for i := range raw {
		raw[i] = fmt.Sprintf("http://h%d.test/section/page-%d", i%100, i)
	}
	for _, spill := range []bool{false, true} {
		for _, drain := range []bool{false, true} {
			name := map[bool]string{false: "queued", true: "seen"}[drain] + map[bool]string{false: "/memory", true: "/spill"}[spill]
			b.Run(name, func(b *testing.B) {
				var per, secs float64
				for b.Loop() {
					f := &crawl.Frontier{}
					if spill {
						st, _, j := open(b, filepath.Join(b.TempDir(), "state.db"))
						defer st.Close()
						f = &crawl.Frontier{Journal: j, Spill: j, MaxInMemory: batch}
					}
					var before, after runtime.MemStats
					runtime.GC()
					runtime.ReadMemStats(&before)
					for i := 0; i < urls; i += batch {
						us := make([]*url.URL, 0, batch)
						for _, s := range raw[i : i+batch] {
							u, _ := url.Parse(s)
							us = append(us, u)
						}
						f.AddAll(us, "seed")
					}
					if drain {
						start := time.Now()
						for f.Len() > 0 {
							for _, s := range f.Sites() {
								f.Next(s)
							}
						}
						secs = time.Since(start).Seconds()
					}
					runtime.GC()
					runtime.ReadMemStats(&after)
					per = float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / urls
					runtime.KeepAlive(f)
					if err := f.Err(); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(per, "B/url")
				if drain {
					b.ReportMetric(secs, "s/drain")
				}
			})
		}
	}
}

// countingSpill is a Journal as Spill (and SeenStore) that counts its Pop
// calls: one bbolt transaction each.
type countingSpill struct {
	*boltjournal.Journal
	pops atomic.Int64
}

func (c *countingSpill) Pop(ctx context.Context, site string, n int) ([]crawl.Item, error) {
	c.pops.Add(1)
	return c.Journal.Pop(ctx, site, n)
}

// BenchmarkSpillDrain drains a fully spilled Frontier: 100,000 URLs on 100
// sites queued with MaxInMemory 1,000 (99,000 of them in the Spill), then
// leased and finished by a Crawler whose Get answers at once, with this
// Journal as Spill only ("spill": Finish records nothing) and as Journal
// too ("journal": each Finish is a journal step), against the same
// Frontier all in memory ("memory") in the same run. It reports the
// drain's seconds (the queueing aside), the Spill.Pop transactions per URL
// and the most items in memory the Get calls saw.
func BenchmarkSpillDrain(b *testing.B) {
	const urls, sites, maxInMem = 100_000, 100, 1000
	raw := make([]*url.URL, urls)
	for i := range raw {
		raw[i], _ = url.Parse(fmt.Sprintf("http://h%d.test/section/page-%d", i%sites, i))
	}
	for _, v := range []struct {
		name           string
		spill, journal bool
	}{{"memory", false, false}, {"spill", true, false}, {"journal", true, true}} {
		b.Run(v.name, func(b *testing.B) {
			var secs, pops float64
			var peak int
			for b.Loop() {
				st, _, j := open(b, filepath.Join(b.TempDir(), "state.db"))
				sp := &countingSpill{Journal: j}
				f, inMem := &crawl.Frontier{}, urls
				if v.spill {
					f.Spill, f.MaxInMemory, inMem = sp, maxInMem, maxInMem
				}
				if v.journal {
					f.Journal = j
				}
				for i := 0; i < urls; i += maxInMem {
					f.AddAll(raw[i:i+maxInMem], "seed")
				}
				if f.InMemory() != inMem {
					b.Fatalf("%d items in memory before the drain; want %d", f.InMemory(), inMem)
				}
				var mu sync.Mutex
				c := &crawl.Crawler{Frontier: f, Parallel: 8,
					Get: func(context.Context, crawl.Item) crawl.Page {
						n := f.InMemory()
						mu.Lock()
						peak = max(peak, n)
						mu.Unlock()
						return crawl.Page{Status: 200, Outcome: "ok"}
					}}
				start := time.Now()
				if err := c.Run(context.Background()); err != nil {
					b.Fatal(err)
				}
				secs = time.Since(start).Seconds()
				pops = float64(sp.pops.Load()) / urls
				if c.Done() != urls || f.Len() != 0 {
					b.Fatalf("drained %d, %d left; want %d, 0", c.Done(), f.Len(), urls)
				}
				if err := f.Err(); err != nil {
					b.Fatal(err)
				}
				st.Close()
			}
			b.ReportMetric(secs, "s/drain")
			b.ReportMetric(pops, "pops/url")
			b.ReportMetric(float64(peak), "max-in-memory")
		})
	}
}

// BenchmarkAddSeen writes 100,000 URL keys into an empty seen set in one
// AddSeen, as a Frontier does when its seen set outgrows MaxInMemory:
// given in random order (as a Go map hands them over) and, in the same
// run, already in key order. The ratio random/sorted is the cost of the
// order; bbolt inserting each key in place made the random order
// quadratic (20 s of CPU for 100,000 keys) until AddSeen sorted them.
//
//	go test ./fetch/crawl/boltjournal -run '^$' -bench AddSeen -benchtime 3x
func BenchmarkAddSeen(b *testing.B) {
	const n = 100_000
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("http://h%d.test/section/page-%d", (i*7919)%2000, i)
	}
	sorted := slices.Sorted(slices.Values(keys))
	rand.New(rand.NewPCG(1, 2)).Shuffle(n, func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
	var took [2]time.Duration
	for b.Loop() {
		for i, ks := range [][]string{keys, sorted} {
			st, _, j := open(b, filepath.Join(b.TempDir(), "state.db"))
			start := time.Now()
			if err := j.AddSeen(context.Background(), ks); err != nil {
				b.Fatal(err)
			}
			took[i] += time.Since(start)
			if ok, err := j.HasSeen(context.Background(), ks[n/2]); err != nil || !ok {
				b.Fatalf("key %q not in the seen set after AddSeen (%v)", ks[n/2], err)
			}
			st.Close()
		}
	}
	b.ReportMetric(float64(took[0].Nanoseconds())/float64(b.N*n), "random-ns/key")
	b.ReportMetric(float64(took[1].Nanoseconds())/float64(b.N*n), "sorted-ns/key")
	b.ReportMetric(took[0].Seconds()/took[1].Seconds(), "random/sorted")
}

// BenchmarkRecord records a crawl's page outcomes from 256 goroutines at
// once, each step as a crawler makes it (the page's fetched mark staged
// and committed, the page off the queue, two links queued, its site's
// count), through the Journal (one write of the state's log per step,
// applied to the bbolt file in checkpoints) and, as the baseline in the
// same run, through one bbolt DB.Batch per step making the same changes
// (the Journal's own transaction before the log):
//
//	go test ./fetch/crawl/boltjournal -run '^$' -bench Record -benchtime 100000x
//
// It reports steps per second and the process's CPU time per step, a last
// checkpoint included.
func BenchmarkRecord(b *testing.B) {
	ctx := context.Background()
	for _, mode := range []string{"journal", "bbolt-batch"} {
		b.Run(mode, func(b *testing.B) {
			st, g, j := open(b, filepath.Join(b.TempDir(), "state.db"))
			defer st.Close()
			var n atomic.Int64
			item := func(i int64) crawl.Item {
				u, _ := url.Parse(fmt.Sprintf("http://h%d.test/section/page-%d", i%2000, i))
				return crawl.Item{URL: u, Key: u.String(), Site: fmt.Sprintf("http://h%d.test", i%2000)}
			}
			record := func(step crawl.Step) error { return j.Record(ctx, step) }
			if mode == "bbolt-batch" {
				record = func(step crawl.Step) error {
					return st.DB.Batch(func(tx *bbolt.Tx) error {
						fetched := tx.Bucket([]byte(boltstate.FetchedBucket))
						fb, _ := tx.CreateBucketIfNotExists(boltjournal.FrontierBucket)
						sb, _ := tx.CreateBucketIfNotExists(boltjournal.SitesBucket)
						for _, k := range step.Done {
							fetched.Put([]byte(k), []byte(time.Now().UTC().Format(time.RFC3339)))
							fb.Delete([]byte(k))
						}
						for _, it := range step.Queued {
							c, _ := strconv.Atoi(string(sb.Get([]byte(it.Site))))
							sb.Put([]byte(it.Site), []byte(strconv.Itoa(c+1)))
							seq, _ := fb.NextSequence()
							raw, _ := json.Marshal(map[string]any{"u": it.URL.String(), "s": seq})
							if err := fb.Put([]byte(it.Key), raw); err != nil {
								return err
							}
						}
						return nil
					})
				}
			}
			cpu0 := cputime.Self()
			b.SetParallelism(128) // 256 goroutines on 2 cores
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					i := n.Add(1)
					done := item(i)
					if _, err := g.Add(ctx, done.Key); err != nil {
						b.Error(err)
						return
					}
					if err := record(crawl.Step{Done: []string{done.Key}, Queued: []crawl.Item{item(-i), item(-i - 1<<40)}}); err != nil {
						b.Error(err)
						return
					}
				}
			})
			if err := st.Checkpoint(ctx); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "steps/s")
			b.ReportMetric(float64((cputime.Self()-cpu0).Microseconds())/float64(b.N), "cpu-µs/step")
		})
	}
}

// BenchmarkSeenSteady reports the CPU time a key of a frontier's seen set
// costs once the set is large (100,000 and 1,000,000 keys already in the
// file): 200,000 new keys on 2,000 sites, added in batches of 1,024 (as
// crawl.Frontier flushes them) and checkpointed. AddSeen (unlogged writes
// of the State, applied with its checkpoints) against, in the same run,
// the baseline of a bbolt transaction a batch with its keys sorted (the
// Journal's AddSeen before):
//
//	go test ./fetch/crawl/boltjournal -run '^$' -bench SeenSteady -benchtime 1x -count 2
func BenchmarkSeenSteady(b *testing.B) {
	for _, held := range []int{100_000, 1_000_000} {
		for _, way := range []string{"AddSeen", "tx-a-batch"} {
			b.Run(fmt.Sprintf("held=%d/%s", held, way), func(b *testing.B) {
				ctx := context.Background()
				st, _, j := open(b, filepath.Join(b.TempDir(), "state.db"))
				defer st.Close()
				key := func() string { return fmt.Sprintf("http://s%d.test/p/%d", rand.IntN(2000), rand.Int64()) }
				for range held / 100_000 {
					keys := make([]string, 100_000)
					for i := range keys {
						keys[i] = key()
					}
					if err := j.AddSeen(ctx, keys); err != nil {
						b.Fatal(err)
					}
					if err := st.Checkpoint(ctx); err != nil {
						b.Fatal(err)
					}
				}
				batches := make([][]string, 200_000/1024)
				for i := range batches {
					for range 1024 {
						batches[i] = append(batches[i], key())
					}
				}
				var perKey float64
				for b.Loop() {
					cpu := cputime.Self()
					for _, keys := range batches {
						if err := addBatch(ctx, st, j, keys, way == "tx-a-batch"); err != nil {
							b.Fatal(err)
						}
					}
					if err := st.Checkpoint(ctx); err != nil {
						b.Fatal(err)
					}
					perKey = float64((cputime.Self() - cpu).Nanoseconds()) / float64(len(batches)*1024)
				}
				b.ReportMetric(perKey/1000, "cpu-µs/key")
			})
		}
	}
}

// addBatch is AddSeen, or with tx the baseline: one bbolt transaction.
func addBatch(ctx context.Context, st *boltstate.State, j *boltjournal.Journal, keys []string, tx bool) error {
	if !tx {
		return j.AddSeen(ctx, keys)
	}
	keys = slices.Sorted(slices.Values(keys))
	return st.DB.Update(func(tx *bbolt.Tx) error {
		bk, err := tx.CreateBucketIfNotExists(boltjournal.SeenBucket)
		if err != nil {
			return err
		}
		for _, k := range keys {
			if err := bk.Put([]byte(k), nil); err != nil {
				return err
			}
		}
		return nil
	})
}

// BenchmarkSpillAdmit reports what admitting a page's links costs once the
// frontier's memory is full: a Frontier with this Journal as Spill and a
// MaxInMemory of 1,000, holding 2,000 URLs on 2,000 sites, takes 3,000
// AddAll calls of two new URLs each (a page's links, as a crawl admits
// them), every one of them spilled; against, in the same run, a Frontier
// all in memory:
//
//	go test ./fetch/crawl/boltjournal -run '^$' -bench SpillAdmit -benchtime 1x -count 3
func BenchmarkSpillAdmit(b *testing.B) {
	for _, where := range []string{"memory", "spill"} {
		b.Run(where, func(b *testing.B) {
			st, _, j := open(b, filepath.Join(b.TempDir(), "state.db"))
			defer st.Close()
			f := &crawl.Frontier{}
			if where == "spill" {
				f = &crawl.Frontier{Spill: j, MaxInMemory: 1000}
			}
			n := 0
			next := func() *url.URL {
				n++
				u, _ := url.Parse(fmt.Sprintf("http://h%d.test/p/%d", rand.IntN(2000), n))
				return u
			}
			for range 2000 {
				f.AddAll([]*url.URL{next()}, "seed")
			}
			const pages = 3000
			var wall, cpu float64
			for b.Loop() {
				cpu0, start := cputime.Self(), time.Now()
				for range pages {
					if f.AddAll([]*url.URL{next(), next()}, "page") != 2 {
						b.Fatal("a new link was not queued")
					}
				}
				wall, cpu = float64(time.Since(start).Microseconds())/pages, float64((cputime.Self()-cpu0).Microseconds())/pages
			}
			if err := f.Err(); err != nil {
				b.Fatal(err)
			}
			if where == "spill" && f.InMemory() > 1000 {
				b.Fatalf("%d items in memory; MaxInMemory 1,000", f.InMemory())
			}
			b.ReportMetric(wall, "µs/page")
			b.ReportMetric(cpu, "cpu-µs/page")
		})
	}
}

// BenchmarkCrawlState measures what the durable state costs a crawl per
// page, as sofyabot keeps it: a Crawler (256 workers) on 2,000 sites whose
// Get answers at once with a page linking to two new pages of its site,
// each page claimed in the fetched set first (as fetch.Bot.Once does). In
// "state" the Frontier has this Journal, as its Journal and its Spill, with
// MaxInMemory 100,000 and the Stage as the fetched set; in "memory", in the
// same run, no Journal, no Spill and a fetch.MemorySet. It reports CPU time
// per page of each (checkpoints included) and their difference, the state's
// own cost:
//
//	go test ./fetch/crawl/boltjournal -run '^$' -bench CrawlState -benchtime 300000x
func BenchmarkCrawlState(b *testing.B) {
	const sites, parallel, maxInMem = 2000, 256, 100_000
	ctx := context.Background()
	crawlPages := func(b *testing.B, pages int, f *crawl.Frontier, claim func(string) (bool, error), end func() error) float64 {
		seeds := make([]*url.URL, sites)
		for i := range seeds {
			seeds[i], _ = url.Parse(fmt.Sprintf("https://www.h%d.example/articles/2026/12/a-page-on-a-topic/0", i))
		}
		f.AddAll(seeds, "seed")
		runCtx, cancel := context.WithCancel(ctx)
		defer cancel()
		var done atomic.Int64
		c := &crawl.Crawler{Frontier: f, Parallel: parallel, FollowLinks: true,
			Get: func(_ context.Context, it crawl.Item) crawl.Page {
				if ok, err := claim(it.Key); err != nil || !ok {
					b.Errorf("claim %s: %v, %v", it.Key, ok, err)
				}
				n, _ := strconv.Atoi(path.Base(it.URL.Path))
				body := fmt.Appendf(nil, `<html><body><a href="%d">a</a> <a href="%d">b</a> <a href="0">home</a></body></html>`, 2*n+1, 2*n+2)
				if done.Add(1) == int64(pages) {
					cancel()
				}
				return crawl.Page{Status: 200, Outcome: "ok", Body: body, Bytes: int64(len(body))}
			}}
		cpu0 := cputime.Self()
		if err := c.Run(runCtx); err != nil && runCtx.Err() == nil {
			b.Fatal(err)
		}
		if err := f.Err(); err != nil {
			b.Fatal(err)
		}
		if err := end(); err != nil { // the state's last checkpoint counts too
			b.Fatal(err)
		}
		if got := done.Load(); got < int64(pages) {
			b.Fatalf("%d pages crawled, want %d", got, pages)
		}
		return float64((cputime.Self() - cpu0).Microseconds()) / float64(done.Load())
	}
	var mem, state float64
	b.Run("memory", func(b *testing.B) {
		set := &fetch.MemorySet{}
		mem = crawlPages(b, b.N, &crawl.Frontier{}, func(k string) (bool, error) { return set.Add(ctx, k) },
			func() error { return nil })
		b.ReportMetric(mem, "cpu-µs/page")
	})
	b.Run("state", func(b *testing.B) {
		st, g, j := open(b, filepath.Join(b.TempDir(), "state.db"))
		defer st.Close()
		state = crawlPages(b, b.N, &crawl.Frontier{Journal: j, Spill: j, MaxInMemory: maxInMem},
			func(k string) (bool, error) { return g.Add(ctx, k) }, st.Close)
		b.ReportMetric(state, "cpu-µs/page")
		if mem > 0 {
			b.ReportMetric(state-mem, "state-cpu-µs/page")
		}
	})
}
