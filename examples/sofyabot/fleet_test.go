package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/goodbot-go/goodbot/examples/internal/botkit"
	"github.com/goodbot-go/goodbot/examples/internal/bottest"
	"github.com/goodbot-go/goodbot/examples/internal/sofya"
	"github.com/goodbot-go/goodbot/fetch/fetchtest"
	"github.com/goodbot-go/goodbot/politeness/redisgate/redistest"
	"github.com/redis/go-redis/v9"
)

// fleetWeb is hosts sites of n pages each, linked as a tree from the home
// page (like killWeb), each page also linking to a disallowed /private/
// page; every answer takes 15 ms, so that workers always have requests in
// flight.
func fleetWeb(hosts, n int) (*fetchtest.Web, []string) {
	w := fetchtest.New()
	var pages []string
	slow := func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			time.Sleep(15 * time.Millisecond) // the site's latency
			h.ServeHTTP(rw, r)
		})
	}
	for h := range hosts {
		host := fmt.Sprintf("f%d.test", h)
		site := w.Host(host)
		site.Handle("/robots.txt", fetchtest.Robots("User-agent: *\nDisallow: /private/\n"))
		link := func(i int) string {
			if i > n {
				return ""
			}
			return fmt.Sprintf(`<a href="/p/%d">p%d</a> `, i, i)
		}
		site.Handle("/", slow(fetchtest.HTML("<html>"+link(1)+`<a href="/private/x">x</a></html>`)))
		pages = append(pages, "http://"+host+"/")
		for i := 1; i <= n; i++ {
			p := fmt.Sprintf("/p/%d", i)
			site.Handle(p, slow(fetchtest.HTML(`<html><a href="/">home</a> <a href="/private/x">x</a> `+link(2*i)+link(2*i+1)+"</html>")))
			pages = append(pages, "http://"+host+p)
		}
		site.Handle("/private/x", fetchtest.HTML("private"))
	}
	return w, pages
}

// fleetRedis starts a redis-server for a fleet test, killed when the test
// ends, and a client of it.
func fleetRedis(t *testing.T) (*redistest.Server, *redis.Client) {
	t.Helper()
	srv := redistest.StartT(t)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr})
	t.Cleanup(func() { rdb.Close() })
	return srv, rdb
}

// worker is one sofyabot process of the fleet test.
type worker struct {
	cmd    *exec.Cmd
	out    *lineWatch
	exited chan error
}

func (w *worker) owner() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s/%d/", host, w.cmd.Process.Pid)
}

func (w *worker) results() []botkit.Result { return botkit.ParseResults(w.out.String()) }

// S8 and S5 across a fleet: three sofyabot workers share one crawl in Redis
// (-redis); one is SIGKILLed after it has leased work and started again.
// Every reachable page is fetched, exactly once except a request in flight
// at the kill (its outcome was never recorded, so its item comes back when
// the dead worker's lease runs out and is fetched again); no two requests to
// one host overlap, no gap is below the delay, robots.txt comes first and
// disallowed pages are never fetched; the URLs the killed worker held are
// fetched by another worker.
func TestSofya_S8_FleetSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a redis-server and four sofyabot processes for several seconds")
	}
	srv, rdb := fleetRedis(t)

	const hosts, perHost = 30, 14
	const scale = 0.05 // sofyabot's 1 s delay becomes 50 ms, its fetch deadline 2 s, its lease 4 s
	web, pages := fleetWeb(hosts, perHost)
	addr := web.Start()
	defer web.Close()
	var seeds []string
	for h := range hosts {
		seeds = append(seeds, fmt.Sprintf("http://f%d.test/", h))
	}
	crawlName := fmt.Sprintf("fleet-test-%d", time.Now().UnixNano())

	start := func(withSeeds bool) *worker {
		args := []string{"-json", "-redis", srv.Addr, "-crawl", crawlName}
		if withSeeds {
			args = append(args, seeds...)
		}
		raw, _ := json.Marshal(childConfig{Web: addr, Scale: scale, Args: args})
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), childEnv+"="+string(raw))
		w := &worker{cmd: cmd, out: &lineWatch{first: make(chan struct{})}, exited: make(chan error, 1)}
		cmd.Stdout, cmd.Stderr = w.out, &bytes.Buffer{}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go func() { w.exited <- cmd.Wait() }()
		return w
	}
	// Every worker is given the seeds (each is queued once); the one
	// started again after the kill joins with none.
	workers := []*worker{start(true), start(true), start(true)}
	defer func() {
		for _, w := range workers {
			w.cmd.Process.Kill()
		}
	}()

	// The victim is killed once it has printed some results and holds a
	// lease: the URLs it held are then orphans.
	victim := workers[0]
	ctx := context.Background()
	var orphans []string
	var killedAt time.Time
	deadline := time.Now().Add(30 * time.Second)
	for killedAt.IsZero() {
		if time.Now().After(deadline) {
			t.Fatalf("worker 0 never held a lease after 10 results:\n%s", victim.cmd.Stderr)
		}
		held, err := rdb.HGetAll(ctx, "goodbot:crawl:{"+crawlName+"}:held").Result()
		if err != nil {
			t.Fatal(err)
		}
		mine := 0
		for _, h := range held {
			if strings.HasPrefix(h, victim.owner()) {
				mine++
			}
		}
		if mine > 0 && len(victim.results()) >= 10 {
			victim.cmd.Process.Signal(syscall.SIGKILL)
			<-victim.exited
			killedAt = time.Now()
			held, err = rdb.HGetAll(ctx, "goodbot:crawl:{"+crawlName+"}:held").Result()
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range held {
				if strings.HasPrefix(h, victim.owner()) {
					_, key, _ := strings.Cut(h, "\n")
					orphans = append(orphans, key)
				}
			}
			if len(orphans) == 0 { // it finished them in between: kill another moment
				t.Log("the victim's leases ended just before the kill; trying again")
				workers[0] = start(true)
				victim, killedAt = workers[0], time.Time{}
			}
			continue
		}
		time.Sleep(5 * time.Millisecond) // polling the victim's progress
	}
	killedResults := victim.results()
	restarted := start(false)
	live := []*worker{workers[1], workers[2], restarted}
	workers = append(workers, restarted)
	for i, w := range live {
		select {
		case err := <-w.exited:
			if err != nil {
				t.Fatalf("worker %d: %v\n%s", i, err, w.cmd.Stderr)
			}
		case <-time.After(60 * time.Second):
			t.Fatalf("worker %d did not finish\n%s", i, w.cmd.Stderr)
		}
	}

	// The work happened, shared: pages fetched, each worker some.
	byURL := map[string][]int{} // URL -> the workers whose results name it (0: the killed one)
	for i, rs := range [][]botkit.Result{killedResults, live[0].results(), live[1].results(), live[2].results()} {
		if i < 3 && len(rs) == 0 {
			t.Errorf("worker %d printed no result", i)
		}
		for _, r := range rs {
			byURL[r.URL] = append(byURL[r.URL], i)
		}
	}
	reqs := map[string][]fetchtest.Request{}
	for _, r := range web.Requests() {
		if r.Path != "/robots.txt" {
			reqs["http://"+r.URL()] = append(reqs["http://"+r.URL()], r)
		}
	}
	if len(reqs) == 0 {
		t.Fatal("no page was requested")
	}
	isOrphan := map[string]bool{}
	for _, o := range orphans {
		isOrphan[o] = true
	}
	again := 0
	for _, p := range pages {
		rs := reqs[p]
		switch {
		case len(rs) == 0:
			t.Errorf("%s never fetched", p)
		case len(rs) > 1 && !(isOrphan[p] && len(rs) == 2 && rs[0].Start.Before(killedAt)):
			t.Errorf("%s fetched %d times (not a request in flight at the kill)", p, len(rs))
		case len(rs) == 2:
			again++
		}
	}
	// The killed worker's leased URLs were handled by another worker: fetched
	// after the kill or, for a URL robots.txt disallows, reported disallowed
	// with no request at all.
	for _, o := range orphans {
		by := false
		for _, i := range byURL[o] {
			by = by || i > 0
		}
		if !by {
			t.Errorf("%s, leased by the killed worker, was not fetched by another one (results from workers %v)", o, byURL[o])
		}
		rs := reqs[o]
		switch {
		case strings.Contains(o, "/private/"):
			if len(rs) > 0 {
				t.Errorf("%s, disallowed, was requested %d times", o, len(rs))
			}
		case len(rs) == 0 || rs[len(rs)-1].Start.Before(killedAt):
			t.Errorf("%s, leased by the killed worker, has no request after the kill", o)
		}
	}
	web.Check(t, fetchtest.NoOverlap(), fetchtest.MinGap(50*time.Millisecond), fetchtest.RobotsFirst(),
		fetchtest.NotFetched("f0.test", "/private/x"), fetchtest.Allowed(func(_, pq string) bool {
			return !strings.HasPrefix(pq, "/private/")
		}))
	// The crawl is over in Redis: nothing queued or leased.
	if n, err := rdb.HLen(ctx, "goodbot:crawl:{"+crawlName+"}:items").Result(); n != 0 || err != nil {
		t.Errorf("items left in the crawl: %d, %v", n, err)
	}
	t.Logf("%d pages by %d+%d+%d+%d results; killed holding %d leases %v; %d fetched again",
		len(pages), len(killedResults), len(live[0].results()), len(live[1].results()), len(live[2].results()), len(orphans), orphans, again)
}

// Fleet mode documents its flags, and fails closed at once, saying why,
// when its Redis does not answer: no crawl without the shared state.
func TestSofya_FleetFlagsAndRedisDown(t *testing.T) {
	bottest.CheckHelp(t, sofya.Run, "-redis", "-crawl")
	addr, err := redistest.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	env := botkit.Env{Stdout: &stdout, Stderr: &stderr}
	code := sofya.Run(context.Background(), []string{"-redis", addr, "http://a.test/"}, env)
	if code != botkit.ExitFailure || !strings.Contains(stderr.String(), "redis "+addr) ||
		!strings.Contains(stderr.String(), "redis unavailable") {
		t.Errorf("with Redis down: exit %d, stderr %q; want exit %d naming the address and the cause", code, stderr.String(), botkit.ExitFailure)
	}
	if stdout.Len() != 0 {
		t.Errorf("results printed without Redis: %q", stdout.String())
	}
}

// A fleet whose Redis refuses writes (out of memory) crawls nothing and
// says so: the seeds cannot be queued, and the run ends partial, not 0.
func TestSofya_FleetRedisRefusesWrites(t *testing.T) {
	srv, rdb := fleetRedis(t)
	ctx := context.Background()
	if err := rdb.ConfigSet(ctx, "maxmemory-policy", "noeviction").Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.ConfigSet(ctx, "maxmemory", "1").Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.Set(ctx, "probe", "x", 0).Err(); err == nil || !strings.Contains(err.Error(), "OOM") {
		t.Fatalf("a write to the full Redis: %v; want an OOM error", err)
	}
	web, _ := fleetWeb(1, 2)
	var stdout, stderr bytes.Buffer
	env := botkit.Env{Stdout: &stdout, Stderr: &stderr, Transport: web.RoundTripper(), Scale: 0.01}
	code := sofya.Run(ctx, []string{"-json", "-redis", srv.Addr, "-crawl", "full", "http://f0.test/"}, env)
	if code != botkit.ExitPartial {
		t.Errorf("exit %d, want ExitPartial (%d); stderr:\n%s", code, botkit.ExitPartial, stderr.String())
	}
	if !strings.Contains(stderr.String(), "the seeds could not be queued") {
		t.Errorf("stderr does not say the seeds were not queued:\n%s", stderr.String())
	}
	if n := len(web.RequestsTo("f0.test", "/")); n != 0 {
		t.Errorf("the home page was fetched %d times with no queue to record it; want 0", n)
	}
}
