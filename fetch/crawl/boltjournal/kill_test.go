package boltjournal_test

import (
	"bufio"
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/goodbot-go/goodbot/fetch/boltstate"
	"github.com/goodbot-go/goodbot/fetch/crawl"
	"github.com/goodbot-go/goodbot/fetch/crawl/boltjournal"
	"github.com/goodbot-go/goodbot/internal/testenv"
)

const killChildEnv = "BOLTJOURNAL_KILL_CHILD"

func TestMain(m *testing.M) {
	if path := os.Getenv(killChildEnv); path != "" {
		killChild(path)
		return
	}
	goleak.VerifyTestMain(m)
}

// killChild is the crawl TestJournal_KillWithASpillLosesNothing kills: a
// frontier on 20 sites whose memory holds 20 items (the rest in the
// journal's spill), its State checkpointed every 32 KiB, taken out site
// after site; each page is marked and
// recorded done, then two new links are queued. It prints "D key" once a
// page's step returned and "Q key" once a link's Add did.
func killChild(path string) {
	ctx := context.Background()
	// Checkpoints every 32 KiB: the kill finds some of the spill in the
	// file, some only in memory.
	st, err := boltstate.Open(path, &boltstate.Options{CheckpointBytes: 32 << 10})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	g := st.Stage()
	j, err := boltjournal.New(st, g)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	f := &crawl.Frontier{Journal: j, Spill: j, MaxInMemory: 20}
	out := bufio.NewWriter(os.Stdout)
	n := 0
	link := func() {
		n++
		u, _ := url.Parse(fmt.Sprintf("http://s%d.test/p%d", n%20, n))
		if f.Add(u, 1, "page") {
			fmt.Fprintf(out, "Q %s\n", u)
			out.Flush()
		}
	}
	for range 200 {
		link()
	}
	for {
		for _, site := range f.Sites() {
			it, ok := f.Next(site)
			if !ok {
				continue
			}
			if _, err := g.Add(ctx, it.Key); err != nil {
				os.Exit(3)
			}
			if err := f.Record(ctx, crawl.Step{Done: []string{it.Key}}); err != nil {
				os.Exit(3)
			}
			fmt.Fprintf(out, "D %s\n", it.Key)
			out.Flush()
			link()
			link()
		}
		if err := f.Err(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(3)
		}
	}
}

// A crawl whose frontier spills, SIGKILLed mid-way, loses nothing it
// acknowledged although the spill is written without the log: every page
// recorded done is done and not queued again after a restart, and every
// link acknowledged queued and not yet done is queued again (from the
// journal's queue, the spill being a cache of it).
func TestJournal_KillWithASpillLosesNothing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	cmd, sc := testenv.Child(t, killChildEnv, path)
	queued, done := map[string]bool{}, map[string]bool{}
	lines := 0
	for sc.Scan() {
		kind, key, _ := strings.Cut(sc.Text(), " ")
		switch kind {
		case "Q":
			queued[key] = true
		case "D":
			done[key] = true
		default:
			t.Fatalf("unexpected line %q", sc.Text())
		}
		if lines++; lines == 3000 {
			if err := cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
		}
	}
	cmd.Wait()
	if len(done) < 500 || len(queued) < 1000 {
		t.Fatalf("the child acknowledged %d pages done and %d links queued; want at least 500 and 1,000", len(done), len(queued))
	}

	ctx := context.Background()
	st, _, j := open(t, path)
	defer st.Close()
	if n := spilledInFile(t, st.DB, "http://s1.test"); n == 0 {
		t.Error("the kill left nothing of the spill in the file: the case of a stale spill is not tested")
	}
	f := &crawl.Frontier{Journal: j, Spill: j, MaxInMemory: 20}
	if _, err := f.Resume(ctx); err != nil {
		t.Fatal(err)
	}
	again := map[string]bool{}
	for f.Len() > 0 {
		for _, site := range f.Sites() {
			if it, ok := f.Next(site); ok {
				again[it.Key] = true
			}
		}
	}
	if err := f.Err(); err != nil {
		t.Fatal(err)
	}
	lostDone, lostQueued, requeued := 0, 0, 0
	for key := range done {
		if ok, err := j.Done(ctx, key); err != nil || !ok {
			lostDone++
		}
		if again[key] {
			requeued++
		}
	}
	waiting := 0
	for key := range queued {
		if !done[key] {
			waiting++
			if !again[key] {
				lostQueued++
			}
		}
	}
	if lostDone+lostQueued+requeued > 0 {
		t.Errorf("after the kill: %d of %d pages recorded done are not done, %d queued again; %d of %d links acknowledged queued and not done are lost",
			lostDone, len(done), requeued, lostQueued, waiting)
	}
	t.Logf("%d pages done and %d links queued before the kill; %d queued after the restart", len(done), len(queued), len(again))
}
