package redisgate

import (
	"bufio"
	"flag"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"
)

// Tests use the Redis at $GOODBOT_REDIS_ADDR (.ci/services starts one), else a
// private redis-server started here on a free loopback port, else they skip.
const addrEnv = "GOODBOT_REDIS_ADDR"

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
	if a := os.Getenv(addrEnv); a != "" {
		if err := pingRaw(a, 2*time.Second); err != nil {
			noRedis = fmt.Sprintf("%s=%s does not answer: %v", addrEnv, a, err)
			return func() {}
		}
		redisAddr = a
		return func() {}
	}
	srv, err := startRedis("")
	if err != nil {
		noRedis = fmt.Sprintf("%s unset and no private redis-server: %v", addrEnv, err)
		return func() {}
	}
	redisAddr = srv.addr
	// Examples read the address from the environment, as a program would.
	_ = os.Setenv(addrEnv, srv.addr)
	return srv.stop
}

// needRedis skips t when no Redis is available and returns its address.
func needRedis(t testing.TB) string {
	t.Helper()
	if redisAddr == "" {
		t.Skip("no Redis: " + noRedis)
	}
	return redisAddr
}

// redisServer is a private redis-server process.
type redisServer struct {
	addr string
	cmd  *exec.Cmd
}

// startRedis starts redis-server on addr ("" = a free loopback port) without
// persistence, and waits until it answers PING.
func startRedis(addr string) (*redisServer, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, err
	}
	if addr == "" {
		if addr, err = freeAddr(); err != nil {
			return nil, err
		}
	}
	_, port, _ := net.SplitHostPort(addr)
	cmd := exec.Command(bin, "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--daemonize", "no", "--loglevel", "warning")
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &redisServer{addr: addr, cmd: cmd}
	if err := pingRaw(addr, 5*time.Second); err != nil {
		s.stop()
		return nil, fmt.Errorf("redis-server on %s: %w", addr, err)
	}
	return s, nil
}

// stop kills the server at once (like a crash: nothing is saved).
func (s *redisServer) stop() {
	_ = s.cmd.Process.Kill()
	_ = s.cmd.Wait()
}

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// pingRaw waits until a Redis at addr answers PING, without a client (no
// goroutines left behind).
func pingRaw(addr string, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		err := func() error {
			c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
			if err != nil {
				return err
			}
			defer c.Close()
			_ = c.SetDeadline(time.Now().Add(time.Second))
			if _, err := c.Write([]byte("PING\r\n")); err != nil {
				return err
			}
			line, err := bufio.NewReader(c).ReadString('\n')
			if err != nil {
				return err
			}
			if !strings.HasPrefix(line, "+PONG") {
				return fmt.Errorf("PING answered %q", strings.TrimSpace(line))
			}
			return nil
		}()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(20 * time.Millisecond) // polling a server that is starting up
	}
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
