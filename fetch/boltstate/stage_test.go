package boltstate_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/fetch/boltstate"
	"github.com/goodbot-go/goodbot/fetch/oncetest"
)

func TestStage_Conformance(t *testing.T) {
	oncetest.Run(t, func(t *testing.T) fetch.FetchedSet {
		st, err := boltstate.Open(filepath.Join(t.TempDir(), "bot.db"), nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st.Stage()
	})
}

// A staged mark or validator is not in the file until committed, and is
// committed with the caller's own record in one transaction; a failed
// commit writes nothing and keeps them staged.
func TestStage_CommitWithOutcome(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bot.db")
	st, err := boltstate.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	g := st.Stage()
	const a, b = "http://a.test/a", "http://a.test/b"
	for _, u := range []string{a, b} {
		if ok, err := g.Add(ctx, u); !ok || err != nil {
			t.Fatalf("Add(%s) = %v, %v", u, ok, err)
		}
		g.Save(ctx, u, fetch.Validator{ETag: `"` + u + `"`})
	}
	inFile := func(u string) (bool, bool) {
		has, _ := st.Fetched.Has(ctx, u)
		_, v, _ := st.Validators.Load(ctx, u)
		return has, v
	}
	if m, v := inFile(a); m || v {
		t.Fatalf("before Commit the file has mark %v validator %v", m, v)
	}
	if ok, _ := g.Has(ctx, a); !ok {
		t.Error("Has of a staged mark = false")
	}
	if v, ok, _ := g.Load(ctx, a); !ok || v.ETag != `"`+a+`"` {
		t.Errorf("Load of a staged validator = %v, %v", v, ok)
	}

	boom := errors.New("boom")
	if err := g.Commit(ctx, []string{a}, func(tx *boltstate.Tx) error { return boom }); !errors.Is(err, boom) {
		t.Fatalf("Commit with a failing record = %v", err)
	}
	if m, v := inFile(a); m || v {
		t.Fatalf("a failed commit wrote mark %v validator %v", m, v)
	}
	err = g.Commit(ctx, []string{a}, func(tx *boltstate.Tx) error { return tx.Put("outcomes", a, []byte("ok")) })
	if err != nil {
		t.Fatal(err)
	}
	if m, v := inFile(a); !m || !v {
		t.Errorf("after Commit the file has mark %v validator %v", m, v)
	}
	if m, v := inFile(b); m || v {
		t.Errorf("an uncommitted URL reached the file: mark %v validator %v", m, v)
	}
	if ok, _ := g.Add(ctx, a); ok {
		t.Error("Add of a committed URL = true")
	}
	if ok, _ := st.Stage().Add(ctx, b); !ok {
		t.Error("a new Stage (a restarted process) sees an uncommitted mark")
	}
}

// Adds of one URL racing with Commits of it claim it once: a URL whose
// claim a Commit moves to the file while another Add reads the file is
// not claimed again. Many workers Add each URL; whoever claims it commits
// it at once.
func TestStage_AddOnceWhileCommitting(t *testing.T) {
	st, err := boltstate.Open(filepath.Join(t.TempDir(), "bot.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	g := st.Stage()
	const urls, workers = 200, 8
	var claimed [urls]atomic.Int32
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range urls {
				u := fmt.Sprintf("http://a.test/%d", i)
				ok, err := g.Add(ctx, u)
				if err != nil {
					t.Error(err)
					return
				}
				if ok {
					claimed[i].Add(1)
					if err := g.Commit(ctx, []string{u}, nil); err != nil {
						t.Error(err)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	for i := range urls {
		if n := claimed[i].Load(); n != 1 {
			t.Errorf("URL %d claimed %d times, want once", i, n)
		}
	}
}

// The race above made certain: while an Add reads the file, another Add
// claims the URL and commits it. The first Add must then see the committed
// mark and not claim the URL again.
func TestStage_AddAfterACommitDuringItsRead(t *testing.T) {
	st, err := boltstate.Open(filepath.Join(t.TempDir(), "bot.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	g := st.Stage()
	const u = "http://a.test/page"
	var inner []bool
	boltstate.SetAfterRead(g, func() {
		boltstate.SetAfterRead(g, nil)
		ok, err := g.Add(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		inner = append(inner, ok)
		if err := g.Commit(ctx, []string{u}, nil); err != nil {
			t.Fatal(err)
		}
	})
	ok, err := g.Add(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	if len(inner) != 1 || !inner[0] {
		t.Fatalf("the racing Add did not claim the URL (%v): the test did not run as meant", inner)
	}
	if ok {
		t.Error("Add claimed a URL another Add claimed and committed during its read: fetched twice")
	}
}
