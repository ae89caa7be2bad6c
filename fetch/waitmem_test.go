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
// the chain with the request, its headers and contexts built (3.1 KB per
// waiting Get when it did).
func TestFetcher_WaitingGetHoldsUnder2KB(t *testing.T) {
	const hosts, bound = 1000, 2 << 10
	synctest.Test(t, func(t *testing.T) {
		var waits sync.Map // host -> struct{}
		f := mustFetcher(t, fetch.Bot{UserAgent: testUA, Politeness: politeness.Policy{MinDelay: time.Hour},
			Transport: memSite(pageOf(3000), true),
			Observe: func(e politeness.Event) {
				if e.Kind == politeness.EventWait {
					waits.Store(e.Host, struct{}{})
				}
			}})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var wg sync.WaitGroup
		for h := range hosts { // robots.txt, an hour, the first page
			wg.Go(func() { get(t, f, fmt.Sprintf("http://h%d.test/p/0", h), fetch.OK) })
		}
		wg.Wait()
		waits.Clear()
		before := liveHeap()
		for h := range hosts {
			wg.Go(func() { _, _ = f.Get(ctx, fmt.Sprintf("http://h%d.test/p/1", h)) })
		}
		synctest.Wait()
		after := liveHeap()
		n := 0
		waits.Range(func(any, any) bool { n++; return true })
		if n != hosts {
			t.Fatalf("%d hosts waiting for their gap, want %d", n, hosts)
		}
		per := (int64(after) - int64(before)) / hosts
		t.Logf("%d B of heap per waiting Get", per)
		if per >= bound {
			t.Errorf("a waiting Get holds %d B of heap, want < %d", per, bound)
		}
		cancel()
		wg.Wait()
	})
}
