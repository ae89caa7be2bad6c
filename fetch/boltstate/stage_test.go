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
// claims the URL (and commits it, or leaves it staged). The first Add must
// then see the mark and not claim the URL again, so that one URL is new to
// one Add only.
func TestStage_AddRacingAnotherDuringItsRead(t *testing.T) {
	for _, commit := range []bool{true, false} {
		st, err := boltstate.Open(filepath.Join(t.TempDir(), "bot.db"), nil)
		if err != nil {
			t.Fatal(err)
		}
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
			if commit {
				if err := g.Commit(ctx, []string{u}, nil); err != nil {
					t.Fatal(err)
				}
			}
		})
		ok, err := g.Add(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		if len(inner) != 1 || !inner[0] {
			t.Fatalf("commit %v: the racing Add did not claim the URL (%v): the test did not run as meant", commit, inner)
		}
		if ok {
			t.Errorf("commit %v: Add claimed a URL another Add claimed during its read: fetched twice", commit)
		}
		st.Close()
	}
}

// Remove drops a URL's mark whether it is staged or committed (the next Add
// claims it again, and so does a State opened later); removing a URL never
// marked is no error and writes nothing.
func TestStage_Remove(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bot.db")
	st := openState(t, path)
	ctx := context.Background()
	g := st.Stage()
	const staged, committed, kept, never = "http://a.test/staged", "http://a.test/committed", "http://a.test/kept", "http://a.test/never"
	for _, u := range []string{staged, committed, kept} {
		if added, err := g.Add(ctx, u); !added || err != nil {
			t.Fatalf("Add(%s) = %v, %v; want a new URL", u, added, err)
		}
	}
	if err := g.Commit(ctx, []string{committed, kept}, nil); err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{staged, committed, never} {
		syncs := boltstate.LogSyncs(st)
		if err := g.Remove(ctx, u); err != nil {
			t.Fatalf("Remove(%s) = %v", u, err)
		}
		if wrote := boltstate.LogSyncs(st) > syncs; wrote != (u == committed) {
			t.Errorf("Remove(%s) wrote to the log: %v; want a write only for the committed mark", u, wrote)
		}
	}
	for _, tt := range []struct {
		url  string
		want bool
	}{{staged, false}, {committed, false}, {kept, true}, {never, false}} {
		if has, err := g.Has(ctx, tt.url); has != tt.want || err != nil {
			t.Errorf("Has(%s) after the removals = %v, %v; want %v", tt.url, has, err, tt.want)
		}
	}
	if added, err := g.Add(ctx, committed); !added || err != nil {
		t.Errorf("Add(%s) after its Remove = %v, %v; want it claimed again", committed, added, err)
	}
	st.Close()
	st = openState(t, path)
	defer st.Close()
	for _, tt := range []struct {
		url  string
		want bool
	}{{committed, false}, {kept, true}} {
		if has, err := st.Stage().Has(ctx, tt.url); has != tt.want || err != nil {
			t.Errorf("reopened: Has(%s) = %v, %v; want %v", tt.url, has, err, tt.want)
		}
	}
}

// A validator saved again while the commit of the one before is writing
// stays staged: Load answers the newer, and the next Commit writes it.
func TestStage_ValidatorSavedDuringItsCommit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bot.db")
	st := openState(t, path)
	ctx := context.Background()
	g := st.Stage()
	const u = "http://a.test/page"
	older, newer := fetch.Validator{ETag: `"1"`}, fetch.Validator{ETag: `"2"`}
	if err := g.Save(ctx, u, older); err != nil {
		t.Fatal(err)
	}
	if err := g.Commit(ctx, []string{u}, func(*boltstate.Tx) error { return g.Save(ctx, u, newer) }); err != nil {
		t.Fatal(err)
	}
	if v, ok, err := g.Load(ctx, u); v != newer || !ok || err != nil {
		t.Fatalf("Load after the commit = %+v, %v, %v; want the newer %+v", v, ok, err, newer)
	}
	if err := g.Commit(ctx, []string{u}, nil); err != nil {
		t.Fatal(err)
	}
	st.Close()
	st = openState(t, path)
	defer st.Close()
	if v, ok, err := st.Validators.Load(ctx, u); v != newer || !ok || err != nil {
		t.Errorf("reopened: Load = %+v, %v, %v; want the newer %+v", v, ok, err, newer)
	}
}

// openState opens the state at path, failing t if it cannot.
func openState(t *testing.T, path string) *boltstate.State {
	t.Helper()
	st, err := boltstate.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	return st
}
