package boltstate_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.etcd.io/bbolt"

	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/fetch/boltstate"
	"github.com/goodbot-go/goodbot/internal/testenv"
)

// txID is the id of the last committed write transaction of db.
func txID(t *testing.T, db *bbolt.DB) int {
	t.Helper()
	var id int
	if err := db.View(func(tx *bbolt.Tx) error { id = tx.ID(); return nil }); err != nil {
		t.Fatal(err)
	}
	return id
}

// Marks and validators saved at the same time share syncs of the log: 400
// concurrent writes, the first sync held until all have appended their
// records, take at most two syncs between them (the first, and one for
// those that came after its flush began; not one each, nor as many as a
// fast disk and the scheduler would make them) and no bbolt transaction
// (the log is applied to the file later, in one), and each is readable
// once its call returned.
func TestState_WritesAreGroupCommitted(t *testing.T) {
	st, err := boltstate.Open(filepath.Join(t.TempDir(), "state.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	remover := st.Fetched.(fetch.FetchedRemover)
	for _, tt := range []struct {
		name  string
		write func(i int) error
		check func(i int) (bool, error)
	}{
		{"fetched set Add", func(i int) error {
			added, err := st.Fetched.Add(ctx, fmt.Sprintf("https://h%d.test/", i))
			if err == nil && !added {
				err = fmt.Errorf("Add %d: not new", i)
			}
			return err
		}, func(i int) (bool, error) { return st.Fetched.Has(ctx, fmt.Sprintf("https://h%d.test/", i)) }},
		{"fetched set Remove", func(i int) error { return remover.Remove(ctx, fmt.Sprintf("https://h%d.test/", i)) },
			func(i int) (bool, error) {
				has, err := st.Fetched.Has(ctx, fmt.Sprintf("https://h%d.test/", i))
				return !has, err
			}},
		{"validators Save", func(i int) error {
			return st.Validators.Save(ctx, fmt.Sprintf("https://h%d.test/", i), fetch.Validator{ETag: fmt.Sprintf(`"%d"`, i)})
		}, func(i int) (bool, error) {
			v, ok, err := st.Validators.Load(ctx, fmt.Sprintf("https://h%d.test/", i))
			return ok && v.ETag == fmt.Sprintf(`"%d"`, i), err
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			const writers = 400
			before, syncs := txID(t, st.DB), boltstate.LogSyncs(st)
			var held sync.Once
			boltstate.SetBeforeSync(st, func() {
				held.Do(func() {
					deadline := time.Now().Add(10 * time.Second)
					for boltstate.LogUnsynced(st) < writers && time.Now().Before(deadline) {
						time.Sleep(time.Millisecond) // polling the others' appends
					}
				})
			})
			defer boltstate.SetBeforeSync(st, nil)
			var wg sync.WaitGroup
			errs := make(chan error, writers)
			for i := range writers {
				wg.Go(func() {
					if err := tt.write(i); err != nil {
						errs <- err
						return
					}
					if ok, err := tt.check(i); err != nil || !ok {
						errs <- fmt.Errorf("write %d not readable after it returned (%v)", i, err)
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			synced := int(boltstate.LogSyncs(st) - syncs)
			if synced < 1 || synced > 2 {
				t.Errorf("%d concurrent writes took %d syncs of the log, want 1 or 2", writers, synced)
			}
			if commits := txID(t, st.DB) - before; commits != 0 {
				t.Errorf("%d writes made %d bbolt transactions before a checkpoint, want 0", writers, commits)
			}
			t.Logf("%d writes, %d syncs", writers, synced)
		})
	}
}

// Concurrent Adds of one URL in one batch report true to exactly one caller.
func TestState_AddOnceWithinABatch(t *testing.T) {
	st, err := boltstate.Open(filepath.Join(t.TempDir(), "state.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var mu sync.Mutex
	added := 0
	var wg sync.WaitGroup
	for range 100 {
		wg.Go(func() {
			ok, err := st.Fetched.Add(context.Background(), "https://a.test/")
			if err != nil {
				t.Error(err)
			}
			if ok {
				mu.Lock()
				added++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if added != 1 {
		t.Errorf("100 concurrent Adds of one URL: %d reported new, want 1", added)
	}
}

const crashChildEnv = "BOLTSTATE_CRASH_CHILD"

// crashChild is the process TestState_KillLosesNoAcknowledgedWrite kills:
// 16 goroutines mark URLs and save validators as fast as they can and
// print each one once its call returned.
func crashChild(path string) {
	st, err := boltstate.Open(path, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	var out sync.Mutex
	ack := func(kind, key string) {
		out.Lock()
		fmt.Fprintf(os.Stdout, "%s %s\n", kind, key)
		out.Unlock()
	}
	ctx := context.Background()
	for g := range 16 {
		go func() {
			for i := 0; ; i++ {
				u := fmt.Sprintf("https://h%d.test/%d", g, i)
				if _, err := st.Fetched.Add(ctx, u); err == nil {
					ack("A", u)
				}
				if err := st.Validators.Save(ctx, u, fetch.Validator{ETag: `"x"`}); err == nil {
					ack("V", u)
				}
			}
		}()
	}
	select {}
}

// A process killed (SIGKILL) in the middle of a stream of writes loses none
// whose call had returned: every mark and validator it acknowledged is in
// the file.
func TestState_KillLosesNoAcknowledgedWrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	cmd, sc := testenv.Child(t, crashChildEnv, path)
	var acked []string
	for sc.Scan() {
		acked = append(acked, sc.Text())
		if len(acked) == 2000 {
			if err := cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
		}
	}
	cmd.Wait()
	if len(acked) < 2000 {
		t.Fatalf("the child acknowledged %d writes before it ended, want at least 2000", len(acked))
	}

	st, err := boltstate.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	lost := 0
	for _, line := range acked {
		kind, u, _ := strings.Cut(line, " ")
		var ok bool
		switch kind {
		case "A":
			ok, err = st.Fetched.Has(ctx, u)
		case "V":
			_, ok, err = st.Validators.Load(ctx, u)
		default:
			t.Fatalf("unexpected line %q", line)
		}
		if err != nil || !ok {
			lost++
			if lost <= 5 {
				t.Errorf("acknowledged %s %s lost (%v)", kind, u, err)
			}
		}
	}
	if lost > 0 {
		t.Errorf("%d of %d acknowledged writes lost", lost, len(acked))
	}
	t.Logf("%d acknowledged writes before the kill, all in the file", len(acked))
}
