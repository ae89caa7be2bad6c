package redisgate

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/goodbot-go/goodbot/internal/testenv"
	"github.com/goodbot-go/goodbot/politeness/redisgate/redistest"
	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"
)

// Tests use the Redis at $GOODBOT_REDIS_ADDR (.ci/services starts one), else a
// private redis-server started here on a free loopback port, else they skip
// (see redistest.Setup).
var (
	redisAddr string // "" when no Redis could be found or started
	noRedis   string // why, for the skip message
)

func TestMain(m *testing.M) {
	if os.Getenv(workerEnv) != "" {
		os.Exit(workerMain())
	}
	stop := setupRedis()
	if redisAddr == "" {
		fmt.Fprintln(os.Stderr, "redisgate: no Redis, skipping the tests and examples that need one:", noRedis)
		// Examples cannot skip; leave them out rather than fail.
		_ = setRunFilter("^(Test|Fuzz)")
	}
	goleak.VerifyTestMain(m, goleak.Cleanup(func(int) { stop() }))
}

// setRunFilter sets -test.run to re unless the caller chose a filter.
func setRunFilter(re string) error {
	if !flag.Parsed() {
		flag.Parse()
	}
	if f := flag.Lookup("test.run"); f != nil && f.Value.String() == "" {
		return flag.Set("test.run", re)
	}
	return nil
}

func setupRedis() (stop func()) {
	redisAddr, stop, noRedis = redistest.Setup()
	return stop
}

// needRedis returns the address of the tests' Redis; without one t skips,
// or fails under CI (testenv.Missing).
func needRedis(t testing.TB) string {
	t.Helper()
	if redisAddr == "" {
		testenv.Missing(t, "no Redis: %s", noRedis)
	}
	return redisAddr
}

// newClient returns a client for addr, closed at the end of t.
func newClient(t testing.TB, addr string) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// testPrefix returns a key prefix of its own for one test.
func testPrefix() string {
	return fmt.Sprintf("{goodbot-test-%016x}:", rand.Uint64())
}

// newTestGate returns a gate on a fresh prefix, closed at the end of t.
func newTestGate(t testing.TB, c Client, prefix string, o *Options) *Gate {
	t.Helper()
	var opts Options
	if o != nil {
		opts = *o
	}
	opts.Prefix = prefix
	if opts.Fence == 0 {
		opts.Fence = 100 * time.Millisecond
	}
	g := New(c, &opts)
	t.Cleanup(func() { _ = g.Close() })
	return g
}
