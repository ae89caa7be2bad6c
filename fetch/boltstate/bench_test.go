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
)

// BenchmarkFetchedAdd marks URLs from 256 goroutines at once (a crawl of
// many hosts), through the fetched set (group-committed) and, as the
// baseline in the same run, through one bbolt Update (one fsync) per URL,
// as the set did before:
//
//	go test -run '^$' -bench FetchedAdd -benchtime 2000x ./fetch/boltstate
func BenchmarkFetchedAdd(b *testing.B) {
	for _, mode := range []string{"set", "update-per-url"} {
		b.Run(mode, func(b *testing.B) {
			st, err := boltstate.Open(filepath.Join(b.TempDir(), "state.db"), nil)
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			add := func(u string) error { _, err := st.Fetched.Add(context.Background(), u); return err }
			if mode != "set" {
				add = func(u string) error {
					return st.DB.Update(func(tx *bbolt.Tx) error {
						return tx.Bucket([]byte(boltstate.FetchedBucket)).Put([]byte(u), []byte(time.Now().UTC().Format(time.RFC3339)))
					})
				}
			}
			var n atomic.Int64
			b.SetParallelism(128) // 256 goroutines on 2 cores
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := add(fmt.Sprintf("https://h%d.test/", n.Add(1))); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "marks/s")
		})
	}
}
