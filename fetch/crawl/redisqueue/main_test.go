package redisqueue

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/goodbot-go/goodbot/internal/testenv"
	"github.com/goodbot-go/goodbot/politeness/redisgate/redistest"
	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"
)

// Tests use the Redis at $GOODBOT_REDIS_ADDR (.ci/services starts one), else
// a private redis-server started here, else they skip (fail under CI).
var redisAddr, noRedis string

func TestMain(m *testing.M) {
	addr, stop, why := redistest.Setup()
	redisAddr, noRedis = addr, why
	if redisAddr == "" {
		fmt.Fprintln(os.Stderr, "redisqueue: no Redis, skipping the tests and examples that need one:", noRedis)
		// Examples cannot skip; leave them out rather than fail.
		flag.Parse()
		if f := flag.Lookup("test.run"); f != nil && f.Value.String() == "" {
			_ = flag.Set("test.run", "^(Test|Fuzz)")
		}
	}
	goleak.VerifyTestMain(m, goleak.Cleanup(func(int) { stop() }))
}

// needRedis returns a client of the tests' Redis, closed at the end of t;
// without Redis t skips, or fails under CI.
func needRedis(t testing.TB) *redis.Client {
	t.Helper()
	if redisAddr == "" {
		testenv.Missing(t, "no Redis: %s", noRedis)
	}
	c := redis.NewClient(&redis.Options{Addr: redisAddr})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// crawlName returns a crawl name of its own for one test.
func crawlName() string { return fmt.Sprintf("test-%016x", rand.Uint64()) }
