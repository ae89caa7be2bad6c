package boltjournal_test

import (
	"context"
	"net/url"
	"path/filepath"
	"testing"

	"github.com/goodbot-go/goodbot/fetch/boltstate"
	"github.com/goodbot-go/goodbot/fetch/crawl"
	"github.com/goodbot-go/goodbot/fetch/crawl/boltjournal"
	"github.com/goodbot-go/goodbot/fetch/crawl/journaltest"
)

func open(t testing.TB, path string) (*boltstate.State, *boltstate.Stage, *boltjournal.Journal) {
	t.Helper()
	st, err := boltstate.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	g := st.Stage()
	j, err := boltjournal.New(st, g)
	if err != nil {
		t.Fatal(err)
	}
	return st, g, j
}

func TestConformance(t *testing.T) {
	journaltest.Run(t, func(t *testing.T) (crawl.Journal, journaltest.Claim) {
		st, g, j := open(t, filepath.Join(t.TempDir(), "state.db"))
		t.Cleanup(func() { st.Close() })
		return j, func(ctx context.Context, key string) error {
			_, err := g.Add(ctx, key)
			return err
		}
	})
}

// A frontier over a reopened file resumes the queue a stopped crawl left,
// and a URL whose outcome was recorded is done, not queued.
func TestResumeAcrossReopen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	st, g, j := open(t, path)
	f := &crawl.Frontier{Journal: j}
	for _, s := range []string{"http://a.test/0", "http://a.test/1", "http://b.test/0"} {
		u := mustURL(t, s)
		if !f.Add(u, 0, "seed") {
			t.Fatalf("Add(%s) refused", s)
		}
	}
	it, _ := f.Next("http://a.test")
	if _, err := g.Add(ctx, it.Key); err != nil { // the fetcher's mark
		t.Fatal(err)
	}
	if err := f.Record(ctx, crawl.Step{Done: []string{it.Key}}); err != nil {
		t.Fatal(err)
	}
	st.Close()

	st2, _, j2 := open(t, path)
	defer st2.Close()
	f2 := &crawl.Frontier{Journal: j2}
	n, err := f2.Resume(ctx)
	if err != nil || n != 2 || f2.Len() != 2 {
		t.Fatalf("Resume = %d, %v (Len %d); want 2 items", n, err, f2.Len())
	}
	if done, _ := j2.Done(ctx, "http://a.test/0"); !done {
		t.Error("the recorded page is not done after reopening")
	}
	if f2.Seen(mustURL(t, "http://a.test/0")) {
		t.Error("the recorded page is queued again")
	}
}

func TestNewNil(t *testing.T) {
	if _, err := boltjournal.New(nil, nil); err != boltjournal.ErrNilState {
		t.Errorf("New(nil, nil) = %v; want ErrNilState", err)
	}
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
