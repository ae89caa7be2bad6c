package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/goodbot-go/goodbot/internal/syncbuf"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/goodbot-go/goodbot/examples/internal/botkit"
	"github.com/goodbot-go/goodbot/examples/internal/sofya"
	"github.com/goodbot-go/goodbot/fetch/boltstate"
	"github.com/goodbot-go/goodbot/fetch/fetchtest"
)

// The kill test runs sofyabot as a real process (the test binary re-run with
// childEnv naming a JSON childConfig) against a loopback test web served by
// the test, and SIGKILLs it at random moments.
const childEnv = "GOODBOT_SOFYABOT_CHILD"

type childConfig struct {
	Web   string   // the test web's address; every virtual host is dialled there
	Args  []string // sofyabot's command line
	Scale float64
}

// childMain runs sofyabot as its main would, over a transport that reaches
// the parent's test web.
func childMain() int {
	var cfg childConfig
	if err := json.Unmarshal([]byte(os.Getenv(childEnv)), &cfg); err != nil {
		fmt.Fprintln(os.Stderr, "child: bad config:", err)
		return 2
	}
	tr := &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, cfg.Web)
	}}
	env := botkit.OS()
	env.Transport, env.Scale = tr, cfg.Scale
	return sofya.Run(context.Background(), cfg.Args, env)
}

// killWeb is hosts sites of n pages each: the home page links to /p/1, and
// /p/i to /p/2i and /p/2i+1 (a tree: a page whose links are lost loses its
// whole subtree) and home. Every page has an ETag.
func killWeb(hosts, n int) (*fetchtest.Web, []string) {
	w := fetchtest.New()
	var pages []string
	for h := range hosts {
		host := fmt.Sprintf("s%d.test", h)
		site := w.Host(host)
		site.Handle("/robots.txt", fetchtest.Robots("User-agent: *\nAllow: /\n"))
		link := func(i int) string {
			if i > n {
				return ""
			}
			return fmt.Sprintf(`<a href="/p/%d">p%d</a> `, i, i)
		}
		site.Handle("/", fetchtest.Page{Body: "<html>" + link(1) + "</html>", ETag: fmt.Sprintf(`"%s-home"`, host)})
		pages = append(pages, "http://"+host+"/")
		for i := 1; i <= n; i++ {
			p := fmt.Sprintf("/p/%d", i)
			site.Handle(p, fetchtest.Page{Body: `<html><a href="/">home</a> ` + link(2*i) + link(2*i+1) + "</html>",
				ETag: fmt.Sprintf(`"%s-%d"`, host, i)})
			pages = append(pages, "http://"+host+p)
		}
	}
	return w, pages
}

// killLag is how much later than a kill the server may enter the handler
// of a request the killed process wrote before it died.
const killLag = 250 * time.Millisecond

// killed is what the test saw at one kill.
type killed struct {
	at      time.Time       // when the killed process was gone
	done    map[string]bool // the state file's fetched set after the kill
	results map[string]bool // URLs with a result line printed by this run or earlier ones
}

// S8 and the crash promise: SIGKILLed at random moments and restarted,
// sofyabot resumes its frontier and ends having fetched every reachable page,
// each exactly once except a fetch in flight at a kill (its outcome was not
// recorded, so it is made again); it never marks a URL fetched without its
// outcome, and keeps every page's validator.
func TestSofya_S8_SIGKILLLosesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real processes for several seconds")
	}
	const hosts, perHost = 4, 60
	w, pages := killWeb(hosts, perHost)
	addr := w.Start()
	defer w.Close()
	state := filepath.Join(t.TempDir(), "sofyabot.db")
	var seeds []string
	for h := range hosts {
		seeds = append(seeds, fmt.Sprintf("http://s%d.test/", h))
	}
	cfg := childConfig{Web: addr, Scale: 0.05, Args: append([]string{"-json", "-state", state}, seeds...)}
	rawCfg, _ := json.Marshal(cfg)
	start := func() (*exec.Cmd, *lineWatch) {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), childEnv+"="+string(rawCfg))
		stdout := &lineWatch{first: make(chan struct{})}
		cmd.Stdout, cmd.Stderr = stdout, &bytes.Buffer{}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd, stdout
	}

	seed := rand.Uint64()
	rng := rand.New(rand.NewPCG(seed, seed))
	t.Logf("kill moments from seed %d", seed)
	printed := map[string]bool{}
	var kills []killed
	deadline := time.Now().Add(40 * time.Second)
	finished := false
	for len(kills) < 7 && !finished && time.Now().Before(deadline) {
		cmd, stdout := start()
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		// The kill comes at a random moment after the run's first result
		// (so that it interrupts work, however slow the start on a loaded
		// machine).
		select {
		case <-stdout.first:
		case <-time.After(20 * time.Second):
		case err := <-exited:
			t.Fatalf("sofyabot exited before printing anything: %v\n%s", err, cmd.Stderr)
		}
		select {
		case <-time.After(time.Duration(rng.IntN(400)) * time.Millisecond):
			cmd.Process.Signal(syscall.SIGKILL)
			<-exited
		case <-exited:
			finished = true // too late: the crawl is over
		}
		// Requests the killed process sent may reach the server after the
		// signal: the kill counts from the moment the process is gone.
		at := time.Now()
		for _, r := range botkit.ParseResults(stdout.String()) {
			printed[r.URL] = true
		}
		kills = append(kills, killed{at: at, done: fetchedSet(t, state), results: clone(printed)})
	}
	// The last run is left to finish.
	cmd, stdout := start()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("the last run: %v\n%s", err, cmd.Stderr)
		}
	case <-time.After(40 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatal("the last run did not finish")
	}
	for _, r := range botkit.ParseResults(stdout.String()) {
		printed[r.URL] = true
	}

	// The kills hit a crawl in progress, not before or after it.
	mid := 0
	for _, k := range kills {
		if n := len(k.done); n > 0 && n < len(pages) {
			mid++
		}
	}
	if mid < 3 {
		t.Errorf("only %d of %d kills interrupted the crawl midway", mid, len(kills))
	}

	// Server side: every reachable page fetched, once, unless a kill came
	// while its outcome was unrecorded.
	reqs := map[string][]fetchtest.Request{}
	for _, r := range w.Requests() {
		if r.Path != "/robots.txt" {
			u := "http://" + r.URL()
			reqs[u] = append(reqs[u], r)
		}
	}
	final := fetchedSet(t, state)
	again := 0
	for _, p := range pages {
		rs := reqs[p]
		if len(rs) == 0 {
			t.Errorf("%s never fetched", p)
			continue
		}
		if !final[p] {
			t.Errorf("%s fetched but not marked fetched at the end", p)
		}
		for i := 1; i < len(rs); i++ {
			again++
			if !inFlightAtKill(rs[i-1], rs[i], p, kills) {
				t.Errorf("%s fetched at %v and again at %v with no kill in between that left it unrecorded (kills at %v)", p,
					rs[i-1].Start.Format("15:04:05.000"), rs[i].Start.Format("15:04:05.000"), killTimes(kills))
			}
		}
	}
	if again > len(kills)*hosts {
		t.Errorf("%d repeated fetches for %d kills of %d sites", again, len(kills), hosts)
	}
	// No URL marked done without its outcome; and once done, never fetched
	// again.
	for i, k := range kills {
		for u := range k.done {
			if !k.results[u] {
				t.Errorf("kill %d: %s marked fetched but no outcome was reported", i+1, u)
			}
			for _, r := range reqs[u] {
				if r.Start.After(k.at) {
					t.Errorf("kill %d: %s was marked fetched, and fetched again", i+1, u)
				}
			}
		}
	}
	// A file left by a killed process is never taken for a damaged one.
	aside, _ := filepath.Glob(state + ".*")
	logAside, _ := filepath.Glob(state + "-wal.?.*")
	if aside = append(aside, logAside...); len(aside) > 0 {
		t.Errorf("state file moved aside after a kill: %v", aside)
	}
	// No validator lost.
	st, err := boltstate.Open(state, &boltstate.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, p := range pages {
		v, ok, err := st.Validators.Load(context.Background(), p)
		host, path, _ := strings.Cut(strings.TrimPrefix(p, "http://"), "/")
		want := fmt.Sprintf(`"%s-%s"`, host, strings.TrimPrefix(path, "p/"))
		if path == "" {
			want = fmt.Sprintf(`"%s-home"`, host)
		}
		if !ok || err != nil || v.ETag != want {
			t.Errorf("%s: validator %+v %v %v, want ETag %s", p, v, ok, err, want)
		}
	}
	t.Logf("%d kills (%d midway), %d pages, %d repeated fetches", len(kills), mid, len(pages), again)
}

// inFlightAtKill reports whether a kill fell between two fetches of url
// while url was not yet marked fetched: the first fetch's outcome was lost
// with the process, so the second one is due.
func inFlightAtKill(prev, next fetchtest.Request, url string, kills []killed) bool {
	for _, k := range kills {
		// The server notes a request when its handler is entered: on a
		// loaded machine one the killed process wrote before it died may
		// be entered after the test saw it gone (killLag).
		if k.at.After(prev.Start.Add(-killLag)) && k.at.Before(next.Start) && !k.done[url] {
			return true
		}
	}
	return false
}

// killTimes is the moments of kills, for messages.
func killTimes(kills []killed) []string {
	var out []string
	for _, k := range kills {
		out = append(out, k.at.Format("15:04:05.000"))
	}
	return out
}

// fetchedSet reads the fetched set of the state file at path, as a
// process opening it would find it (the writes its log holds included).
func fetchedSet(t *testing.T, path string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	if _, err := os.Stat(path); err != nil {
		return out // killed before the file was made
	}
	st, err := boltstate.Open(path, &boltstate.Options{ReadOnly: true, LockTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	err = st.ForEach(context.Background(), boltstate.FetchedBucket, func(k, _ []byte) error {
		out[string(k)] = true
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// lineWatch keeps what a child prints and closes first at its first line.
type lineWatch struct {
	syncbuf.Buffer
	first chan struct{}
	once  sync.Once
}

func (w *lineWatch) Write(p []byte) (int, error) {
	n, err := w.Buffer.Write(p)
	if bytes.IndexByte(p, '\n') >= 0 {
		w.once.Do(func() { close(w.first) })
	}
	return n, err
}

func clone(m map[string]bool) map[string]bool {
	out := make(map[string]bool, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
