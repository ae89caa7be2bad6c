package boltstate_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"go.etcd.io/bbolt"

	"github.com/goodbot-go/goodbot/fetch/boltstate"
	"github.com/goodbot-go/goodbot/internal/cputime"
)

// BenchmarkFetchedAdd marks URLs from 256 goroutines at once (a crawl of
// many hosts) through the fetched set (its log: group-committed appends,
// applied to the bbolt file in checkpoints) and, as baselines in the same
// run, through bbolt's own group commit (DB.Batch: one transaction and
// fsync for the marks made meanwhile, as the set wrote them before the
// log) and through one bbolt Update (one fsync) per URL:
//
//	go test -run '^$' -bench FetchedAdd -benchtime 20000x ./fetch/boltstate
//
// It reports marks per second and the process's CPU time per mark, a
// last checkpoint included (the marks in the bbolt file).
func BenchmarkFetchedAdd(b *testing.B) {
	for _, mode := range []string{"set", "bbolt-batch", "update-per-url"} {
		b.Run(mode, func(b *testing.B) {
			st, err := boltstate.Open(filepath.Join(b.TempDir(), "state.db"), nil)
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			put := func(tx *bbolt.Tx, u string) error {
				bk := tx.Bucket([]byte(boltstate.FetchedBucket))
				if bk.Get([]byte(u)) != nil {
					return nil
				}
				return bk.Put([]byte(u), []byte(time.Now().UTC().Format(time.RFC3339)))
			}
			add := func(u string) error { _, err := st.Fetched.Add(context.Background(), u); return err }
			switch mode {
			case "bbolt-batch":
				add = func(u string) error { return st.DB.Batch(func(tx *bbolt.Tx) error { return put(tx, u) }) }
			case "update-per-url":
				add = func(u string) error { return st.DB.Update(func(tx *bbolt.Tx) error { return put(tx, u) }) }
			}
			var n atomic.Int64
			cpu0 := cputime.Self()
			b.SetParallelism(128) // 256 goroutines on 2 cores
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					i := n.Add(1)
					if err := add(fmt.Sprintf("https://h%d.test/page/%d", i%2000, i)); err != nil {
						b.Error(err)
						return
					}
				}
			})
			// The log's marks reach the bbolt file in checkpoints: the
			// last one is part of the cost.
			if err := st.Checkpoint(context.Background()); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "marks/s")
			b.ReportMetric(float64((cputime.Self()-cpu0).Microseconds())/float64(b.N), "cpu-µs/mark")
		})
	}
}
