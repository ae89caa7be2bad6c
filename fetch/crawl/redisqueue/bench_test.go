package redisqueue

import (
	"context"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/fetch/crawl"
	"github.com/goodbot-go/goodbot/fetch/fetchtest"
	"github.com/goodbot-go/goodbot/politeness"
	"github.com/goodbot-go/goodbot/politeness/redisgate"
	"github.com/goodbot-go/goodbot/robots/redisstore"
	"github.com/redis/go-redis/v9"
)

// A fleet crawl on one machine: 1, 2 and 4 workers (each with its own
// Redis client, gate, queue and fetcher, as separate processes have) crawl
// 500 local hosts × 8 pages, 100 ms delay, 10 ms latency, sharing one crawl
// in Redis. Reported per run: the share of the politeness ceiling
// hosts / (delay + latency), CPU per request (this process: workers and
// test web; and Redis's own), Redis commands (scripts' inner calls
// included) and round trips per request. workers=local is the baseline of
// the same run: one process, the in-memory frontier and gate. Run:
//
//	go test -run '^$' -bench Fleet -benchtime 1x ./fetch/crawl/redisqueue
func BenchmarkFleet(b *testing.B) {
	c := needRedis(b)
	const hosts, pages = 500, 20
	const delay, latency = 100 * time.Millisecond, 10 * time.Millisecond
	web := fetchtest.New()
	slow := func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			time.Sleep(latency) // the site's latency
			h.ServeHTTP(w, r)
		})
	}
	var seeds []*url.URL
	for h := range hosts {
		site := web.Host(fmt.Sprintf("h%d.test", h))
		site.Handle("/robots.txt", fetchtest.Robots("User-agent: *\nAllow: /\n"))
		for p := range pages {
			next := ""
			if p+1 < pages {
				next = fmt.Sprintf(`<a href="/p%d">next</a>`, p+1)
			}
			site.Handle(fmt.Sprintf("/p%d", p), slow(fetchtest.HTML(next)))
		}
		u, _ := url.Parse(fmt.Sprintf("http://h%d.test/p0", h))
		seeds = append(seeds, u)
	}
	web.Start()
	defer web.Close()
	ceiling := float64(hosts) / (delay + latency).Seconds()
	for _, n := range []int{0, 1, 2, 4} {
		label := strconv.Itoa(n)
		if n == 0 {
			label = "local"
		}
		b.Run("workers="+label, func(b *testing.B) {
			for b.Loop() {
				web.Reset()
				name := crawlName()
				gatePrefix := "{" + name + "-gate}:"
				cmds0, cpu0 := redisStats(b, c)
				ru0 := rusage()
				var rts int64
				var hooks []*rtHook
				var wg sync.WaitGroup
				start := time.Now()
				for w := range max(n, 1) {
					rdb := redis.NewClient(&redis.Options{Addr: redisAddr, PoolSize: 128})
					h := &rtHook{}
					rdb.AddHook(h)
					hooks = append(hooks, h)
					q := New(rdb, name, nil)
					gate := redisgate.New(rdb, &redisgate.Options{Prefix: gatePrefix, Fence: -1})
					bot := fetch.Bot{
						UserAgent: "BenchBot/1.0", Token: "BenchBot",
						Politeness:    politeness.Policy{MinDelay: delay, BreakerThreshold: -1},
						Gate:          gate,
						RobotsStore:   &redisstore.Store{Client: rdb, Prefix: gatePrefix + "robots:"},
						Fetched:       q.Fetched(time.Minute),
						Once:          true,
						Transport:     web.Transport(),
						AllowInternal: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
					}
					front := &crawl.Frontier{Queue: q}
					if n == 0 { // the baseline: all in memory
						bot.Gate, bot.RobotsStore, bot.Fetched, front = nil, nil, nil, &crawl.Frontier{}
					}
					f, err := fetch.NewFetcher(bot)
					if err != nil {
						b.Fatal(err)
					}
					if w == 0 {
						front.AddAll(seeds, "seed")
					}
					cr := &crawl.Crawler{Frontier: front, Fetcher: f, FollowLinks: true, Parallel: 128,
						LeaseTTL: time.Minute, Recheck: 20 * time.Millisecond}
					wg.Go(func() {
						defer rdb.Close()
						defer gate.Close()
						defer q.Close()
						defer f.CloseIdleConnections()
						if err := cr.Run(context.Background()); err != nil {
							b.Error(err)
						}
					})
				}
				wg.Wait()
				took := time.Since(start)
				ru1 := rusage()
				cmds1, cpu1 := redisStats(b, c)
				for _, h := range hooks {
					rts += h.n.Load()
				}
				reqs := len(web.Requests())
				if reqs < hosts*(pages+1) {
					b.Fatalf("%d requests; want %d", reqs, hosts*(pages+1))
				}
				if v := fetchtest.Violations(web.Requests(), fetchtest.NoOverlap(), fetchtest.MinGap(delay), fetchtest.RobotsFirst()); len(v) > 0 {
					b.Fatalf("%d politeness violations, first: %s", len(v), v[0])
				}
				rate := float64(reqs) / took.Seconds()
				b.ReportMetric(rate/ceiling*100, "%ceiling")
				b.ReportMetric(rate, "req/s")
				b.ReportMetric(float64((ru1-ru0).Microseconds())/float64(reqs), "µs-cpu/req")
				b.ReportMetric((cpu1-cpu0)*1e6/float64(reqs), "µs-redis-cpu/req")
				b.ReportMetric(float64(cmds1-cmds0)/float64(reqs), "redis-cmds/req")
				b.ReportMetric(float64(rts)/float64(reqs), "round-trips/req")
			}
		})
	}
}

// rusage is this process's CPU time (user + system).
func rusage() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// redisStats returns the commands Redis has run (INFO commandstats,
// scripts' inner calls included) and its CPU seconds.
func redisStats(b *testing.B, c *redis.Client) (cmds int64, cpu float64) {
	ctx := context.Background()
	info, err := c.Info(ctx, "commandstats", "cpu").Result()
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(info, "\n") {
		line = strings.TrimSpace(line)
		if _, rest, ok := strings.Cut(line, ":calls="); ok && strings.HasPrefix(line, "cmdstat_") {
			v, _, _ := strings.Cut(rest, ",")
			n, _ := strconv.ParseInt(v, 10, 64)
			cmds += n
		}
		for _, k := range []string{"used_cpu_user:", "used_cpu_sys:"} {
			if v, ok := strings.CutPrefix(line, k); ok {
				f, _ := strconv.ParseFloat(v, 64)
				cpu += f
			}
		}
	}
	return cmds, cpu
}
