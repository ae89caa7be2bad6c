package boltjournal_test

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"

	"github.com/goodbot-go/goodbot/fetch/boltstate"
	"github.com/goodbot-go/goodbot/fetch/crawl"
	"github.com/goodbot-go/goodbot/fetch/crawl/boltjournal"
)

func ExampleNew() {
	dir, _ := os.MkdirTemp("", "boltjournal")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "state.db")

	// First run: two URLs queued, then the process stops.
	st, _ := boltstate.Open(path, nil)
	j, _ := boltjournal.New(st, st.Stage()) // give the Stage to the fetcher too: g.Apply(&bot)
	f := &crawl.Frontier{Journal: j}
	for _, s := range []string{"http://a.test/1", "http://a.test/2"} {
		u, _ := url.Parse(s)
		f.Add(u, 0, "seed")
	}
	st.Close()

	// Next run: the queue is still there.
	st, _ = boltstate.Open(path, nil)
	defer st.Close()
	j, _ = boltjournal.New(st, st.Stage())
	f = &crawl.Frontier{Journal: j}
	n, err := f.Resume(context.Background())
	fmt.Println("resumed", n, err)
	// Output:
	// resumed 2 <nil>
}
