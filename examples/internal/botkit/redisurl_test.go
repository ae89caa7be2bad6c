package botkit

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/goodbot-go/goodbot/internal/syncbuf"
	"github.com/goodbot-go/goodbot/politeness/redisgate/redistest"
)

// -redis takes host:port or a redis:// or rediss:// URL (user, password,
// database, TLS); a password it does not give comes from
// $GOODBOT_REDIS_PASSWORD; messages name the address without its password,
// also when the URL does not parse.
func TestRedisOptions(t *testing.T) {
	env := func(k string) string {
		if k == RedisPasswordEnv {
			return "from-env"
		}
		return ""
	}
	for _, tt := range []struct {
		addr               string
		wantAddr, wantUser string
		wantPassword       string
		wantDB             int
		wantTLS, wantErr   bool
		wantName           string
	}{
		{addr: "127.0.0.1:6379", wantAddr: "127.0.0.1:6379", wantPassword: "from-env", wantName: "127.0.0.1:6379"},
		{addr: "redis://10.0.0.1:6380/2", wantAddr: "10.0.0.1:6380", wantPassword: "from-env", wantDB: 2, wantName: "redis://10.0.0.1:6380/2"},
		{addr: "redis://:s3cret@10.0.0.1:6380/2", wantAddr: "10.0.0.1:6380", wantPassword: "s3cret", wantDB: 2, wantName: "redis://:xxxxx@10.0.0.1:6380/2"},
		{addr: "redis://bob:s3cret@r.example:7000", wantAddr: "r.example:7000", wantUser: "bob", wantPassword: "s3cret", wantName: "redis://bob:xxxxx@r.example:7000"},
		{addr: "rediss://r.example", wantAddr: "r.example:6379", wantPassword: "from-env", wantTLS: true, wantName: "rediss://r.example"},
		{addr: "redis://:s3cret@r.example:port", wantErr: true},
		{addr: "redis://:s3cret@r.example:7000/db", wantErr: true},
		{addr: "redis://:s3cret@r.example:7000/1?dial_timeout=soon", wantErr: true},
	} {
		opt, name, err := redisOptions(tt.addr, env)
		if strings.Contains(name, "s3cret") || err != nil && strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%s: the password shows: name %q, err %v", tt.addr, name, err)
		}
		if tt.wantErr {
			if err == nil {
				t.Errorf("%s: no error", tt.addr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tt.addr, err)
			continue
		}
		if opt.Addr != tt.wantAddr || opt.Username != tt.wantUser || opt.Password != tt.wantPassword || opt.DB != tt.wantDB ||
			(opt.TLSConfig != nil) != tt.wantTLS || name != tt.wantName {
			t.Errorf("%s: addr %q user %q password %q db %d tls %v name %q (want name %q)", tt.addr, opt.Addr, opt.Username, opt.Password, opt.DB, opt.TLSConfig != nil, name, tt.wantName)
		}
		if opt.DialTimeout <= 0 {
			t.Errorf("%s: no dial timeout", tt.addr)
		}
	}
}

// A worker reaches a Redis that asks for a password with the password in
// the -redis URL or in $GOODBOT_REDIS_PASSWORD; without it, or with a wrong
// one, it stops at once with a line that says so, and the password it was
// given never shows on stderr.
func TestStart_FleetRedisPassword(t *testing.T) {
	srv := redistest.StartT(t, "--requirepass", "pa55word")
	for _, tt := range []struct {
		name, redis, envPassword string
		ok                       bool
		secret                   string // must not show
	}{
		{"in the URL", "redis://:pa55word@" + srv.Addr, "", true, "pa55word"},
		{"in the environment", srv.Addr, "pa55word", true, "pa55word"},
		{"none", srv.Addr, "", false, ""},
		{"wrong, in the URL", "redis://:wr0ng@" + srv.Addr, "", false, "wr0ng"},
		{"wrong, in the environment", srv.Addr, "wr0ng", false, "wr0ng"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(RedisPasswordEnv, tt.envPassword)
			var stderr syncbuf.Buffer
			f := &Flags{Name: "bot", Redis: tt.redis, Crawl: "c", Verbose: true}
			s, code, done := Start(context.Background(), f, Env{Stdout: &syncbuf.Buffer{}, Stderr: &stderr, Scale: 0.001}, "")
			if !done {
				defer s.Close()
			}
			if tt.secret != "" && strings.Contains(stderr.String(), tt.secret) {
				t.Errorf("the password shows on stderr: %s", stderr.String())
			}
			if tt.ok {
				if done || s.Fleet == nil {
					t.Fatalf("Start = %d: %s", code, stderr.String())
				}
				if err := s.Fleet.Redis.Ping(t.Context()).Err(); err != nil {
					t.Errorf("the fleet's Redis client: %v", err)
				}
				return
			}
			if !done || code != ExitFailure {
				t.Fatalf("Start = %d, done %v: want ExitFailure", code, done)
			}
			if msg := stderr.String(); !strings.Contains(msg, "bot: redis ") || !strings.Contains(strings.ToLower(msg), "auth") && !strings.Contains(strings.ToLower(msg), "password") {
				t.Errorf("stderr %q: want one line naming Redis and the refused password", msg)
			}
		})
	}
}

// cancelOn is a writer that cancels a context once what it was given holds
// a word.
type cancelOn struct {
	syncbuf.Buffer
	word   string
	cancel context.CancelFunc
}

func (w *cancelOn) Write(p []byte) (int, error) {
	n, err := w.Buffer.Write(p)
	if strings.Contains(w.Buffer.String(), w.word) {
		w.cancel()
	}
	return n, err
}

// A worker waiting out the politeness gate's fence on a Redis just started
// (70 s at full scale) stops waiting when its context ends (an interrupt):
// Start returns at once, saying what it was waiting for.
func TestStart_FleetFenceWaitEndsWithTheContext(t *testing.T) {
	srv := redistest.StartT(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stderr := &cancelOn{word: "waiting out the politeness gate's fence", cancel: cancel}
	began := time.Now()
	s, code, done := Start(ctx, &Flags{Name: "bot", Redis: srv.Addr, Crawl: "c"}, Env{Stdout: &syncbuf.Buffer{}, Stderr: stderr}, "")
	if !done {
		s.Close()
		t.Fatalf("Start went on after its context ended: %s", stderr.String())
	}
	if took := time.Since(began); took > 30*time.Second {
		t.Errorf("Start took %v: it waited the fence out (70 s) instead of stopping with its context", took)
	}
	msg := stderr.String()
	if code != ExitFailure || !strings.Contains(msg, "waiting out the politeness gate's fence") || !strings.Contains(msg, "waiting out the fence: context canceled") {
		t.Errorf("Start = %d: %s", code, msg)
	}
}
