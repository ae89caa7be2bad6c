package boltstate_test

import (
	"context"
	"net/netip"
	"os"
	"path/filepath"
	"testing"

	"go.etcd.io/bbolt"
	"go.uber.org/goleak"

	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/fetch/boltstate"
	"github.com/goodbot-go/goodbot/fetch/fetchtest"
	"github.com/goodbot-go/goodbot/fetch/oncetest"
	"github.com/goodbot-go/goodbot/politeness"
	"github.com/goodbot-go/goodbot/robots"
)

func TestMain(m *testing.M) {
	if os.Getenv(damageEnv) != "" {
		os.Exit(damageMain())
	}
	if path := os.Getenv(crashChildEnv); path != "" {
		crashChild(path) // never returns
	}
	goleak.VerifyTestMain(m)
}

// loopbackOnly is what the tests, which live on loopback, allow.
var loopbackOnly = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}

// run is one run of a bot process over the state file at path.
func run(t *testing.T, w *fetchtest.Web, path string, urls ...string) []fetch.Outcome {
	t.Helper()
	st, err := boltstate.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	tr := w.Transport()
	defer tr.CloseIdleConnections()
	bot := fetch.Bot{UserAgent: "TestBot/1.0", Transport: tr, Once: true, Politeness: politeness.Policy{MinDelay: -1},
		AllowInternal: loopbackOnly}
	st.Apply(&bot)
	f, err := fetch.NewFetcher(bot)
	if err != nil {
		t.Fatal(err)
	}
	var out []fetch.Outcome
	for _, u := range urls {
		p, _ := f.Get(context.Background(), u)
		out = append(out, p.Outcome)
	}
	return out
}

// B8, B9, S8: the state survives between runs: the second run uses the
// stored robots.txt copy (no refetch), sends the stored validators (304) and
// knows which URLs it fetched.
func TestState_B9_SurvivesRestart(t *testing.T) {
	w := fetchtest.New()
	defer w.Close()
	w.Host("a.test").Handle("/robots.txt", fetchtest.Robots("User-agent: *\nDisallow: /no\n")).
		Handle("/page", fetchtest.Page{Body: "p", ETag: `"1"`}).
		Handle("/once", fetchtest.HTML("o"))
	path := filepath.Join(t.TempDir(), "bot.db")

	got := run(t, w, path, "http://a.test/page", "http://a.test/once", "http://a.test/no")
	if got[0] != fetch.OK || got[1] != fetch.OK || got[2] != fetch.Disallowed {
		t.Fatalf("first run: %v", got)
	}
	w.Reset()
	// A new process: same file.
	st, err := boltstate.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ok, _ := st.Fetched.Has(context.Background(), "http://a.test/once"); !ok {
		t.Error("fetched set lost")
	}
	if _, ok, err := st.Robots.Load(context.Background(), "http://a.test:80"); !ok || err != nil {
		t.Errorf("robots copy lost: %v", err)
	}
	st.Close()

	got = run(t, w, path, "http://a.test/once")
	if got[0] != fetch.Duplicate {
		t.Errorf("second run /once: %v", got)
	}
	if n := len(w.Requests()); n != 0 {
		t.Errorf("second run sent %d requests for a URL already fetched", n)
	}
}

// B9: one request in all on a site that published nothing: robots.txt from
// the state file, the page answered with a 304.
func TestState_B9_OneRequestAfterRestart(t *testing.T) {
	w := fetchtest.New()
	defer w.Close()
	w.Host("a.test").Handle("/robots.txt", fetchtest.Robots("")).Handle("/feed", fetchtest.Page{Body: "f", ETag: `"f1"`})
	path := filepath.Join(t.TempDir(), "bot.db")
	for i, want := range []fetch.Outcome{fetch.OK, fetch.NotModified} {
		st, err := boltstate.Open(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		tr := w.Transport()
		bot := fetch.Bot{UserAgent: "TestBot/1.0", Transport: tr, Politeness: politeness.Policy{MinDelay: -1},
			AllowInternal: loopbackOnly}
		st.Apply(&bot)
		f, _ := fetch.NewFetcher(bot)
		p, err := f.Get(fetch.WithFresh(context.Background()), "http://a.test/feed")
		tr.CloseIdleConnections()
		st.Close()
		if p.Outcome != want {
			t.Fatalf("run %d: %v %v", i, p.Outcome, err)
		}
		if i == 1 {
			if rs := w.Requests(); len(rs) != 3 || rs[2].Path != "/feed" || rs[2].Status != 304 {
				t.Errorf("second run requests: %d", len(rs)-2)
			}
		}
	}
}

func TestState_CorruptRecordReadsAsAbsent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bot.db")
	st, err := boltstate.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { st.Close() }()
	ctx := context.Background()
	if err := st.Robots.Save(ctx, "http://a.test:80", robots.Entry{Status: 200, Body: []byte("x")}); err != nil {
		t.Fatal(err)
	}
	if err := st.Validators.Save(ctx, "http://a.test/", fetch.Validator{ETag: `"e"`}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	// The record damaged in the file, as another version or a bad disk
	// would leave it.
	db, err := bbolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *bbolt.Tx) error {
		return tx.Bucket([]byte(boltstate.ValidatorsBucket)).Put([]byte("http://a.test/"), []byte("{not json"))
	}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if st, err = boltstate.Open(path, nil); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := st.Validators.Load(ctx, "http://a.test/"); ok || err == nil {
		t.Errorf("corrupt record: ok %v err %v", ok, err)
	}
	if e, ok, err := st.Robots.Load(ctx, "http://a.test:80"); !ok || err != nil || string(e.Body) != "x" {
		t.Errorf("robots entry: %+v %v %v", e, ok, err)
	}
	if _, err := boltstate.Open(path, &boltstate.Options{LockTimeout: 50_000_000}); err == nil {
		t.Error("a second Open of a locked file succeeded")
	}
}

// S8: the file's fetched set behaves as fetch expects (each URL once, a
// mark given back on Remove).
func TestFetched_Conformance(t *testing.T) {
	oncetest.Run(t, func(t *testing.T) fetch.FetchedSet {
		st, err := boltstate.Open(filepath.Join(t.TempDir(), "bot.db"), nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st.Fetched
	})
}
