package redisgate

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goodbot-go/goodbot/politeness"
)

// The gate's own cost: Acquire (ready says go) plus Release, Redis on
// loopback against the in-memory gate. Run:
//
//	go test -run '^$' -bench 'Gate|Request' -count 5 ./politeness/redisgate
func BenchmarkGate(b *testing.B) {
	gates := []struct {
		name string
		new  func(b *testing.B) politeness.Gate
	}{
		{"memory", func(*testing.B) politeness.Gate { return politeness.NewMemoryGate() }},
		{"redis", func(b *testing.B) politeness.Gate {
			return newTestGate(b, newClient(b, needRedis(b)), testPrefix(), &Options{Fence: -1})
		}},
	}
	for _, gc := range gates {
		b.Run(gc.name+"/onehost", func(b *testing.B) {
			g := gc.new(b)
			ctx := context.Background()
			var st politeness.State
			for b.Loop() {
				l, err := g.Acquire(ctx, "http://bench.test:80", proceed)
				if err != nil {
					b.Fatal(err)
				}
				st.Successes++
				if err := l.Release(st); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(gc.name+"/parallel-hosts", func(b *testing.B) {
			g := gc.new(b)
			var n atomic.Int64
			b.RunParallel(func(pb *testing.PB) {
				host := fmt.Sprintf("http://bench-%d.test:80", n.Add(1))
				ctx := context.Background()
				for pb.Next() {
					l, err := g.Acquire(ctx, host, proceed)
					if err != nil {
						b.Error(err)
						return
					}
					if err := l.Release(politeness.State{Successes: 1}); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// The gate's added latency per request: sequential GETs to one loopback host
// through politeness.Transport (no delay), with the in-memory gate and with
// the Redis gate. The difference of the two is what Redis adds.
func BenchmarkRequest(b *testing.B) {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "ok")
	}))
	defer site.Close()
	for _, name := range []string{"memory", "redis"} {
		b.Run(name, func(b *testing.B) {
			var g politeness.Gate = politeness.NewMemoryGate()
			if name == "redis" {
				g = newTestGate(b, newClient(b, needRedis(b)), testPrefix(), &Options{Fence: -1})
			}
			base := &http.Transport{}
			defer base.CloseIdleConnections()
			client := &http.Client{Transport: &politeness.Transport{Base: base, Gate: g,
				Policy: politeness.Policy{MinDelay: -1}}}
			for b.Loop() {
				resp, err := client.Get(site.URL)
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
}

// Fleet throughput: 1, 2 and 4 worker processes share 200 hosts x 20 pages
// (each page fetched once, by one worker) through one Redis, with a 100 ms
// delay per host; against the theoretical hosts / (delay + latency), where
// latency is the mean time the test web took per answer. Throughput is
// counted over the test web's busy span (first request start to last end),
// so process start-up is left out. Run:
//
//	go test -run '^$' -bench Fleet -benchtime 1x -count 3 ./politeness/redisgate
func BenchmarkFleet(b *testing.B) {
	addr := needRedis(b)
	const hosts, pages, delay = 200, 20, 100 * time.Millisecond
	for _, n := range []int{1, 2, 4} {
		b.Run(fmt.Sprintf("workers=%d", n), func(b *testing.B) {
			var span, served time.Duration
			var count int
			for b.Loop() {
				web := newTestWeb(b, webOptions{service: 5 * time.Millisecond})
				cfg := workerConfig{Redis: addr, Prefix: testPrefix(), Web: web.srv.Listener.Addr().String(),
					Hosts: fleetHosts(hosts), Pages: pages, Delay: delay, TTL: 5 * time.Second, Fence: -1}
				for _, w := range runFleet(b, n, cfg, true) {
					for _, r := range w.wait(b) {
						if !r.OK {
							b.Fatalf("%s: %s", r.URL, r.Err)
						}
					}
				}
				web.check(b, delay)
				web.mu.Lock()
				first, last := web.recs[0].Start, web.recs[0].End
				for _, r := range web.recs {
					served += r.End.Sub(r.Start)
					if r.Start.Before(first) {
						first = r.Start
					}
					if r.End.After(last) {
						last = r.End
					}
				}
				span += last.Sub(first)
				count += len(web.recs)
				web.mu.Unlock()
			}
			got := float64(count) / span.Seconds()
			latency := served / time.Duration(count)
			theory := float64(hosts) / (delay + latency).Seconds()
			b.ReportMetric(got, "req/s")
			b.ReportMetric(theory, "theory-req/s")
			b.ReportMetric(got/theory, "of-theory")
		})
	}
}
