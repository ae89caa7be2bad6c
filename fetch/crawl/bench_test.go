package crawl

import (
	"context"
	"fmt"
	"net/url"
	"runtime"
	"testing"
	"time"
)

const (
	benchHosts = 100
	benchURLs  = 10000
)

func benchURLList() []*url.URL {
	us := make([]*url.URL, benchURLs)
	for i := range us {
		us[i] = &url.URL{Scheme: "http", Host: fmt.Sprintf("h%d.test", i%benchHosts), Path: fmt.Sprintf("/section/page-%d", i)}
	}
	return us
}

// sliceQueues is the baseline: one slice per host and a seen set of
// u.String(), without normalisation, caps or a journal.
type sliceQueues struct {
	seen   map[string]bool
	queues map[string][]*url.URL
}

func (q *sliceQueues) add(u *url.URL) {
	k := u.String()
	if q.seen[k] {
		return
	}
	q.seen[k] = true
	q.queues[u.Host] = append(q.queues[u.Host], u)
}

func (q *sliceQueues) next(host string) (*url.URL, bool) {
	s := q.queues[host]
	if len(s) == 0 {
		return nil, false
	}
	q.queues[host] = s[1:]
	return s[0], true
}

// BenchmarkPushPop is the cost per URL of queueing it and taking it out,
// sites served round-robin, for the Frontier and the baseline.
func BenchmarkPushPop(b *testing.B) {
	us := benchURLList()
	b.Run("Frontier", func(b *testing.B) {
		for b.Loop() {
			f := &Frontier{}
			for _, u := range us {
				f.Add(u, 0, "seed")
			}
			for f.Len() > 0 {
				for _, s := range f.Sites() {
					f.Next(s)
				}
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchURLs), "ns/url")
	})
	b.Run("FrontierLease", func(b *testing.B) {
		// As a Crawler drives it: Lease the due site's head, Finish it.
		ctx := context.Background()
		now := time.Now()
		for b.Loop() {
			f := &Frontier{}
			for _, u := range us {
				f.Add(u, 0, "seed")
			}
			q := f.queue()
			for {
				it, _, ok, err := q.Lease(ctx, now, 0)
				if err != nil || !ok {
					break
				}
				if err := q.Finish(ctx, it, Step{Done: []string{it.Key}}, time.Time{}); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchURLs), "ns/url")
	})
	b.Run("SliceQueues", func(b *testing.B) {
		for b.Loop() {
			q := &sliceQueues{seen: map[string]bool{}, queues: map[string][]*url.URL{}}
			for _, u := range us {
				q.add(u)
			}
			for n := len(us); n > 0; {
				for h := range q.queues {
					if _, ok := q.next(h); ok {
						n--
					}
				}
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchURLs), "ns/url")
	})
}

// BenchmarkMemoryPerURL reports the live heap per queued URL (the URLs
// themselves are built before the measure: both hold a copy or a pointer).
func BenchmarkMemoryPerURL(b *testing.B) {
	us := benchURLList()
	measure := func(b *testing.B, fill func() any) {
		var per float64
		for b.Loop() {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			keep := fill()
			runtime.GC()
			runtime.ReadMemStats(&after)
			per = float64(after.HeapAlloc-before.HeapAlloc) / benchURLs
			runtime.KeepAlive(keep)
		}
		b.ReportMetric(per, "B/queued-url")
	}
	b.Run("Frontier", func(b *testing.B) {
		measure(b, func() any {
			f := &Frontier{}
			for _, u := range us {
				f.Add(u, 0, "seed")
			}
			return f
		})
	})
	b.Run("SliceQueues", func(b *testing.B) {
		measure(b, func() any {
			q := &sliceQueues{seen: map[string]bool{}, queues: map[string][]*url.URL{}}
			for _, u := range us {
				q.add(u)
			}
			return q
		})
	})
}
