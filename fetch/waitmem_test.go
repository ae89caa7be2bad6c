package fetch_test

import (
	"context"
	"fmt"
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/politeness"
)

// liveHeap is the heap in use by live objects, after two collections.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// A Get waiting for its host's gap holds less than 2 KB of heap (its
// goroutine's included): it waits before building its request, not inside
// the chain with the request, its headers and contexts built (3.2 KB per
// waiting Get when it did).
func TestFetcher_WaitingGetHoldsUnder2KB(t *testing.T) {
	const bound = 2 << 10
	synctest.Test(t, func(t *testing.T) {
		per := waitingGetHeap(t, 1000, time.Hour)
		t.Logf("%d B of heap per waiting Get", per)
		if per >= bound {
			t.Errorf("a waiting Get holds %d B of heap, want < %d", per, bound)
		}
	})
}

// BenchmarkWaitingGetHeap reports the heap a Get waiting for its host's
// gap holds (B/waiting-get), over 1,000 hosts with a 3 s delay (real time:
// about 6 s per round):
//
//	go test -run '^$' -bench WaitingGetHeap -benchtime 1x ./fetch
func BenchmarkWaitingGetHeap(b *testing.B) {
	var sum int64
	for b.Loop() {
		sum += waitingGetHeap(b, 1000, 3*time.Second)
	}
	b.ReportMetric(float64(sum)/float64(b.N), "B/waiting-get")
}

// waitingGetHeap fetches a page from each of hosts hosts (in memory, with
// the given delay), then starts a second Get on each and returns the heap
// each of them holds once all wait for their host's gap.
func waitingGetHeap(tb testing.TB, hosts int, delay time.Duration) int64 {
	tb.Helper()
	var waiting sync.Map // host -> struct{}
	f, err := fetch.NewFetcher(fetch.Bot{UserAgent: testUA, Politeness: politeness.Policy{MinDelay: delay},
		Transport: memSite(pageOf(3000), true),
		Observe: func(e politeness.Event) {
			if e.Kind == politeness.EventWait {
				waiting.Store(e.Host, struct{}{})
			}
		}})
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	for h := range hosts { // robots.txt, the delay, the first page
		wg.Go(func() {
			if _, err := f.Get(ctx, fmt.Sprintf("http://h%d.test/p/0", h)); err != nil {
				tb.Error(err)
			}
		})
	}
	wg.Wait()
	waiting.Clear()
	before := liveHeap()
	for h := range hosts {
		wg.Go(func() { _, _ = f.Get(ctx, fmt.Sprintf("http://h%d.test/p/1", h)) })
	}
	for n := 0; n < hosts; time.Sleep(time.Millisecond) {
		n = 0
		waiting.Range(func(any, any) bool { n++; return true })
	}
	after := liveHeap()
	cancel()
	wg.Wait()
	return (int64(after) - int64(before)) / int64(hosts)
}
