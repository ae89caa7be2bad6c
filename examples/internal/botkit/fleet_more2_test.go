package botkit

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goodbot-go/goodbot/fetch/crawl/redisqueue"
	"github.com/goodbot-go/goodbot/internal/syncbuf"
	"github.com/goodbot-go/goodbot/politeness"
	"github.com/goodbot-go/goodbot/politeness/redisgate"
	"github.com/goodbot-go/goodbot/politeness/redisgate/redistest"
	"github.com/goodbot-go/goodbot/robots/redisstore"
	"github.com/redis/go-redis/v9"
)

// redisUptime is the uptime_in_seconds of the Redis rdb talks to.
func redisUptime(t *testing.T, rdb *redis.Client) time.Duration {
	t.Helper()
	info, err := rdb.Info(context.Background(), "server").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "uptime_in_seconds:"); ok {
			n, err := strconv.Atoi(v)
			if err != nil {
				t.Fatal(err)
			}
			return time.Duration(n) * time.Second
		}
	}
	t.Fatalf("no uptime in %q", info)
	return 0
}

// A fleet worker (-redis) keeps no state file; on a Redis up for less than
// the politeness gate's fence (its lease TTL, 10 s, plus one minute: see
// redisgate.Options.Fence, scaled by Env.Scale) it waits out the rest
// before it starts. Apply gives the bot the fleet's gate, robots.txt copies
// and fetched set, with leases of twice the bot's fetch deadline (fetch's
// default 30 s when the profile sets none). Close ends the worker's part:
// its queue and gate are closed, and its Redis client.
func TestStart_Fleet(t *testing.T) {
	srv := redistest.StartT(t)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr})
	t.Cleanup(func() { rdb.Close() })
	for redisUptime(t, rdb) < time.Second { // so that the wait is shorter than the fence
		time.Sleep(50 * time.Millisecond)
	}

	const scale = 0.05
	fence := time.Duration(scale * float64(10*time.Second+time.Minute))
	var stderr syncbuf.Buffer
	state := filepath.Join(t.TempDir(), "s.db")
	f := &Flags{Name: "bot", Redis: srv.Addr, Crawl: "c", State: state}
	up0 := redisUptime(t, rdb)
	began := time.Now()
	s, code, done := Start(context.Background(), f, Env{Stdout: &syncbuf.Buffer{}, Stderr: &stderr, Scale: scale}, "")
	took := time.Since(began)
	up1 := redisUptime(t, rdb)
	if done {
		t.Fatalf("Start = %d: %s", code, stderr.String())
	}
	defer s.Close()

	// The wait for the fence, from the server's uptime.
	if up0 < fence {
		_, after, ok := strings.Cut(stderr.String(), "waiting out the politeness gate's fence")
		line, _, _ := strings.Cut(after, "\n")
		_, v, found := strings.Cut(line, " wait=")
		wait, err := time.ParseDuration(v)
		if !ok || !found || err != nil {
			t.Fatalf("no wait for the fence logged (uptime %v, fence %v): %v\n%s", up0, fence, err, stderr.String())
		}
		if wait > fence-up0 || wait < fence-up1 {
			t.Errorf("waited %v for a fence of %v at an uptime of %v..%v", wait, fence, up0, up1)
		}
		if took < wait {
			t.Errorf("Start took %v, less than the %v it logged to wait", took, wait)
		}
	}

	if s.Fleet == nil || s.DB != nil || s.Journal() != nil || s.SitemapStore() == nil {
		t.Errorf("fleet %v, state file %v, journal %v, sitemap store %v", s.Fleet, s.DB, s.Journal(), s.SitemapStore())
	}
	if _, err := os.Stat(state); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a fleet worker made a state file: %v", err)
	}
	for _, tc := range []struct {
		timeout, lease time.Duration
	}{
		{0, 60 * time.Second},
		{5 * time.Second, 10 * time.Second},
	} {
		bot := testBot()
		bot.Limits.Timeout = tc.timeout
		if err := s.Apply(&bot); err != nil {
			t.Fatal(err)
		}
		if s.Fleet.LeaseTTL != tc.lease {
			t.Errorf("fetch deadline %v: LeaseTTL %v, want %v", tc.timeout, s.Fleet.LeaseTTL, tc.lease)
		}
		_, shared := bot.RobotsStore.(*redisstore.Store)
		_, fetched := bot.Fetched.(*redisqueue.Fetched)
		if bot.Gate != s.Fleet.Gate || !shared || !fetched || bot.Validators != s.stores.validators || bot.Validators == nil {
			t.Errorf("fetch deadline %v: gate %T (fleet's %v), robots %T, fetched %T, validators %T",
				tc.timeout, bot.Gate, bot.Gate == s.Fleet.Gate, bot.RobotsStore, bot.Fetched, bot.Validators)
		}
	}

	fl := s.Fleet
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := fl.Queue.Len(ctx); !errors.Is(err, redisqueue.ErrClosed) {
		t.Errorf("queue after Close: %v, want ErrClosed", err)
	}
	if _, err := fl.Gate.Acquire(ctx, "http://a.test:80", func(politeness.State) (time.Duration, error) { return 0, nil }); !errors.Is(err, redisgate.ErrClosed) {
		t.Errorf("gate after Close: %v, want ErrClosed", err)
	}
	if err := fl.Redis.Ping(ctx).Err(); !errors.Is(err, redis.ErrClosed) {
		t.Errorf("Redis client after Close: %v, want it closed", err)
	}
}

// A worker names itself in the fleet's lease tokens by host name and
// process id.
func TestOwner(t *testing.T) {
	host, _ := os.Hostname()
	if got, want := Owner(), fmt.Sprintf("%s/%d", host, os.Getpid()); got != want {
		t.Errorf("Owner() = %q, want %q", got, want)
	}
}

// A fleet worker whose Redis does not answer fails at once (ExitFailure),
// naming the address and the cause: no crawl without the shared state.
func TestStart_FleetRedisDown(t *testing.T) {
	addr, err := redistest.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr syncbuf.Buffer
	s, code, done := Start(context.Background(), &Flags{Name: "bot", Redis: addr}, Env{Stdout: &stdout, Stderr: &stderr}, "")
	if s != nil || code != ExitFailure || !done {
		t.Errorf("Start = %v, %d, %v; want nil, %d, true", s, code, done, ExitFailure)
		s.Close()
	}
	if want := "bot: redis " + addr + ": "; !strings.HasPrefix(stderr.String(), want) || !strings.Contains(stderr.String(), "redis unavailable") {
		t.Errorf("stderr %q, want %q and the cause", stderr.String(), want)
	}
}
