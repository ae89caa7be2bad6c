package boltjournal_test

import (
	"fmt"
	"net/url"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/goodbot-go/goodbot/fetch/crawl"
)

// BenchmarkFrontierMemory reports the live heap per URL of a Frontier of
// 100,000 URLs on 100 sites: queued (all waiting) and seen (all taken out
// again, so only the seen set remains), in memory and with this Journal as
// Spill (MaxInMemory 1,000), in the same run. The URLs are built before
// the measure and dropped by the Frontier's caller.
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
				var per float64
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
						for f.Len() > 0 {
							for _, s := range f.Sites() {
								f.Next(s)
							}
						}
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
			})
		}
	}
}
