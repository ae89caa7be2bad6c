package boltstore_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goodbot-go/goodbot/robots"
	"github.com/goodbot-go/goodbot/robots/boltstore"
	bolt "go.etcd.io/bbolt"
)

// BenchmarkSaveManySites saves robots.txt copies of distinct sites from 64
// goroutines at once, as a crawler starting on many sites does, through
// Save and, as the baseline in the same run, through one bbolt Update (one
// fsync) per copy:
//
//	go test -run '^$' -bench SaveManySites -count 3 ./robots/boltstore
func BenchmarkSaveManySites(b *testing.B) {
	e := robots.Entry{Status: 200, Body: []byte("User-agent: *\nDisallow: /private/\n"), Fetched: time.Now()}
	for _, mode := range []string{"Save", "UpdateEach"} {
		b.Run(mode, func(b *testing.B) {
			db, err := bolt.Open(filepath.Join(b.TempDir(), "state.db"), 0o600, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			s, err := boltstore.New(db, "robots")
			if err != nil {
				b.Fatal(err)
			}
			var n atomic.Int64
			b.SetParallelism(32) // 64 goroutines on 2 cores
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					origin := fmt.Sprintf("https://site%d.test", n.Add(1))
					if mode == "Save" {
						err = s.Save(context.Background(), origin, e)
					} else {
						err = db.Update(func(tx *bolt.Tx) error {
							return tx.Bucket([]byte("robots")).Put([]byte(origin), e.Body)
						})
					}
					if err != nil {
						b.Error(err)
						return
					}
				}
			})
			if n.Load() == 0 {
				b.Fatal("nothing saved")
			}
		})
	}
}
