// Package redistest runs a private redis-server for tests, on the model of
// net/http/httptest: tests of a Redis-backed store or gate use the server at
// $GOODBOT_REDIS_ADDR (CI's .ci/services starts one) or start their own on a
// free loopback port, and skip with a message when neither is possible.
//
// It needs a redis-server binary on PATH (Debian's redis-server package) and
// no client library: it speaks just enough RESP to wait for PING.
package redistest

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/goodbot-go/goodbot/internal/testenv"
)

// AddrEnv names the environment variable holding the address of a Redis that
// tests may use (host:port, loopback).
const AddrEnv = "GOODBOT_REDIS_ADDR"

// Server is a private redis-server process without persistence, made by
// [Start]; Kill it when done. Its methods are not for concurrent use.
type Server struct {
	Addr string // host:port it listens on
	cmd  *exec.Cmd
}

// Start starts redis-server on addr ("" means a free loopback port), without
// persistence, with args added to its command line (say "--requirepass",
// "pw"), and waits until it answers PING.
func Start(addr string, args ...string) (*Server, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, err
	}
	if addr == "" {
		if addr, err = FreeAddr(); err != nil {
			return nil, err
		}
	}
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, append([]string{"--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--daemonize", "no", "--loglevel", "warning"}, args...)...)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &Server{Addr: addr, cmd: cmd}
	if err := Ping(addr, 5*time.Second); err != nil {
		s.Kill()
		return nil, fmt.Errorf("redistest: redis-server on %s: %w", addr, err)
	}
	return s, nil
}

// StartT is Start("", args...) for the test t, the server killed when t
// ends. Without a redis-server it fails the test where CI is set and skips
// it elsewhere, saying why (testenv.Missing).
func StartT(t testing.TB, args ...string) *Server {
	t.Helper()
	s, err := Start("", args...)
	if err != nil {
		testenv.Missing(t, "no private redis-server: %v", err)
	}
	t.Cleanup(s.Kill)
	return s
}

// Kill stops the server at once, like a crash: nothing is saved.
func (s *Server) Kill() {
	_ = s.cmd.Process.Kill()
	_ = s.cmd.Wait()
}

// Setup finds the Redis for a test binary: the one at $GOODBOT_REDIS_ADDR if
// it answers, else a private server started now (its address is then put in
// the environment, as a program would read it). It returns "" and the reason
// when there is none; stop is always safe to call.
func Setup() (addr string, stop func(), why string) {
	if a := os.Getenv(AddrEnv); a != "" {
		if err := Ping(a, 2*time.Second); err != nil {
			return "", func() {}, fmt.Sprintf("%s=%s does not answer: %v", AddrEnv, a, err)
		}
		return a, func() {}, ""
	}
	srv, err := Start("")
	if err != nil {
		return "", func() {}, fmt.Sprintf("%s unset and no private redis-server: %v", AddrEnv, err)
	}
	_ = os.Setenv(AddrEnv, srv.Addr)
	return srv.Addr, srv.Kill, ""
}

// FreeAddr returns a loopback address nothing listens on (at the moment).
func FreeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// Ping waits until a Redis at addr answers PING (with PONG, or by asking for
// a password first), without a client library (no goroutines left behind).
func Ping(addr string, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		err := ping(addr)
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(20 * time.Millisecond) // polling a server that is starting up
	}
}

func ping(addr string) error {
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
	if !strings.HasPrefix(line, "+PONG") && !strings.HasPrefix(line, "-NOAUTH") {
		return fmt.Errorf("redistest: PING answered %q", strings.TrimSpace(line))
	}
	return nil
}

// Cluster is a private Redis Cluster of masters without replicas or
// persistence, made by [StartCluster]; Kill it when done.
type Cluster struct {
	Addrs   []string // one host:port per master
	servers []*Server
	dir     string
}

// StartCluster starts n (at least 3) redis-server processes in cluster mode
// on free loopback ports, joins them with redis-cli --cluster create (each
// master serves a third of the slots) and waits until the cluster is ok. It
// needs redis-server and redis-cli on PATH.
func StartCluster(n int) (*Cluster, error) {
	cli, err := exec.LookPath("redis-cli")
	if err != nil {
		return nil, err
	}
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "redistest-cluster-")
	if err != nil {
		return nil, err
	}
	c := &Cluster{dir: dir}
	for i := range max(n, 3) {
		addr, err := FreeAddr()
		if err != nil {
			c.Kill()
			return nil, err
		}
		_, port, _ := net.SplitHostPort(addr)
		cmd := exec.Command(bin, "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
			"--daemonize", "no", "--loglevel", "warning", "--cluster-enabled", "yes",
			"--cluster-config-file", filepath.Join(dir, fmt.Sprintf("nodes-%d.conf", i)))
		cmd.Dir = dir
		if err := cmd.Start(); err != nil {
			c.Kill()
			return nil, err
		}
		c.servers = append(c.servers, &Server{Addr: addr, cmd: cmd})
		c.Addrs = append(c.Addrs, addr)
		if err := Ping(addr, 5*time.Second); err != nil {
			c.Kill()
			return nil, fmt.Errorf("redistest: cluster node %s: %w", addr, err)
		}
	}
	args := append([]string{"--cluster", "create"}, c.Addrs...)
	args = append(args, "--cluster-replicas", "0", "--cluster-yes")
	if out, err := exec.Command(cli, args...).CombinedOutput(); err != nil {
		c.Kill()
		return nil, fmt.Errorf("redistest: redis-cli --cluster create: %v: %s", err, out)
	}
	// The nodes agree on the slots a moment after create returns.
	deadline := time.Now().Add(10 * time.Second)
	for _, addr := range c.Addrs {
		for {
			out, err := exec.Command(cli, "-h", "127.0.0.1", "-p", portOf(addr), "cluster", "info").Output()
			if err == nil && strings.Contains(string(out), "cluster_state:ok") {
				break
			}
			if time.Now().After(deadline) {
				c.Kill()
				return nil, fmt.Errorf("redistest: cluster node %s not ok after 10s: %s", addr, out)
			}
			time.Sleep(50 * time.Millisecond) // polling the nodes' gossip
		}
	}
	return c, nil
}

func portOf(addr string) string {
	_, port, _ := net.SplitHostPort(addr)
	return port
}

// Kill stops every node at once and removes their files.
func (c *Cluster) Kill() {
	for _, s := range c.servers {
		s.Kill()
	}
	_ = os.RemoveAll(c.dir)
}
