package demo

import (
	"context"
	"fmt"
	"github.com/goodbot-go/goodbot/internal/syncbuf"
	"io"
	"strings"
	"sync"

	"github.com/goodbot-go/goodbot/examples/internal/botkit"
	"github.com/goodbot-go/goodbot/examples/internal/sofya"
	"github.com/goodbot-go/goodbot/fetch/fetchtest"
	"github.com/goodbot-go/goodbot/politeness/redisgate/redistest"
)

// fleetWorkers is the number of sofyabot workers of the fleet step.
const fleetWorkers = 2

// fleet is what the fleet step saw: why it was skipped, or how many
// results each worker printed.
type fleet struct {
	mu      sync.Mutex // guards the fields below
	skipped string
	pages   [fleetWorkers]int
}

// fleetStep runs two sofyabot workers as one fleet on the news sites: one
// crawl shared in a private Redis (started for the step when redis-server
// is on PATH, stopped after it; skipped with one line otherwise).
func (d *demo) fleetStep(news []string) step {
	fl := &fleet{}
	run := func(ctx context.Context, args []string, env botkit.Env) int {
		srv, err := redistest.Start("")
		if err != nil {
			fl.mu.Lock()
			fl.skipped = fmt.Sprintf("skipped: no redis-server to share the crawl (%v); install Debian's redis-server to see it", err)
			fl.mu.Unlock()
			return botkit.ExitOK
		}
		defer srv.Kill()
		var wg sync.WaitGroup
		var outs [fleetWorkers]syncbuf.Buffer
		codes := make([]int, fleetWorkers)
		for i := range fleetWorkers {
			wenv := env
			wenv.Stdout = io.MultiWriter(env.Stdout, &outs[i])
			wargs := append([]string{}, args...)
			for j, a := range wargs {
				if a == "-redis" && j+1 < len(wargs) {
					wargs[j+1] = srv.Addr // the step's own Redis
				}
			}
			wg.Go(func() { codes[i] = sofya.Run(ctx, wargs, wenv) })
		}
		wg.Wait()
		fl.mu.Lock()
		for i := range fleetWorkers {
			fl.pages[i] = len(botkit.ParseResults(outs[i].String()))
		}
		fl.mu.Unlock()
		return max(codes[0], codes[1])
	}
	skipped := func(check func(r *record) (bool, string)) func(r *record) (bool, string) {
		return func(r *record) (bool, string) {
			fl.mu.Lock()
			why := fl.skipped
			fl.mu.Unlock()
			if why != "" {
				return true, configTag + why
			}
			return check(r)
		}
	}
	return step{chain: chainNews, bot: "SofyaBot", title: "two workers (this command twice), one crawl: a fleet sharing a Redis", run: run,
		args: append([]string{"-json", "-redis", "127.0.0.1:6379", "-crawl", "demo"}, news...),
		claims: []claim{
			{"S8", skipped(func(r *record) (bool, string) {
				fl.mu.Lock()
				pages := fl.pages
				fl.mu.Unlock()
				seen := map[string]int{}
				for _, q := range r.reqs {
					if q.Path != "/robots.txt" {
						seen[q.URL()]++
					}
				}
				for u, n := range seen {
					if n > 1 && !strings.HasSuffix(u, "/story/3") { // news-b's 509, retried
						return false, fmt.Sprintf("%s requested %d times by the fleet", u, n)
					}
				}
				if pages[0] == 0 || pages[1] == 0 {
					return false, fmt.Sprintf("the workers handled %d and %d URLs: one did nothing", pages[0], pages[1])
				}
				return true, fmt.Sprintf("worker 1 handled %d URLs, worker 2 %d: %d pages requested, each once across both (frontier, "+
					"fetched set and robots.txt copies shared in Redis); a redis-server started for this step, stopped after it",
					pages[0], pages[1], len(seen))
			})},
			{"C3", skipped(checked(text("no two requests to one host overlapped, whichever worker sent them (the politeness gate is shared in Redis)"),
				fetchtest.NoOverlap(), fetchtest.RobotsFirst()))},
		}}
}
