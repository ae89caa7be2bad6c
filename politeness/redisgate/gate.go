package redisgate

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/goodbot-go/goodbot/politeness"
	"github.com/redis/go-redis/v9"

	"github.com/goodbot-go/goodbot/internal/quote"
	"github.com/goodbot-go/goodbot/internal/sleep"
)

// Client is what the gate needs from a Redis client: scripts and a
// subscription. *redis.Client, *redis.ClusterClient, *redis.Ring (single
// shard) and redis.UniversalClient satisfy it.
type Client interface {
	redis.Scripter
	Subscribe(ctx context.Context, channels ...string) *redis.PubSub
}

// Options configures a [Gate]. A nil *Options, and every zero field, means the
// default.
type Options struct {
	// Prefix starts every key and the wake channel. Zero means
	// "{goodbot:politeness}:"; the braces make it a Redis Cluster hash tag,
	// so all keys of one gate live on one shard as the scripts need (keep a
	// {hash tag} in a Prefix of your own on Redis Cluster).
	Prefix string

	// LeaseTTL bounds how long a crashed holder blocks a host. A live
	// holder renews its lease every LeaseTTL/3 for as long as it holds it,
	// however long its request takes. Zero means 10 s.
	LeaseTTL time.Duration

	// Fence is how long after the Redis server started that the gate grants
	// no lease when it finds its data missing (first use of this Redis, or a
	// restart without persistence): holders from before the restart must
	// have re-asserted their leases, and the gaps then in progress must be
	// over, before hosts are used again. It must exceed LeaseTTL plus the
	// client's reconnection time (go-redis retries a failing dial once a
	// second). Zero means LeaseTTL + 1 minute (the longest common
	// Crawl-delay cap); negative means no fence.
	Fence time.Duration

	// MaxWait is the longest a waiter sleeps before it looks at Redis
	// again. Waiters are woken when the lease is released (publish/subscribe),
	// so MaxWait only bounds the cost of a lost wake-up. Zero means 2 s.
	MaxWait time.Duration

	// OpTimeout bounds Release and the lease renewals, which take no
	// context. Zero means 5 s (at most LeaseTTL/2).
	OpTimeout time.Duration

	// Logger receives lost leases, failed renewals and releases. Nil means
	// silent.
	Logger *slog.Logger
}

// Gate is a [politeness.Gate] whose leases and States live in Redis, so many
// processes pace hosts together. Create it with [New] (a zero Gate has no
// Redis: its Acquire fails closed with [ErrUnavailable]). It is safe for
// concurrent use. Call Close when done to stop its subscription.
type Gate struct {
	rdb    Client
	prefix string
	ttl    time.Duration
	fence  time.Duration
	wait   time.Duration
	opTO   time.Duration
	log    *slog.Logger
	now    func() time.Time // nil: time.Now (see clock)

	local queue // in-process FIFO per host

	mu      sync.Mutex               // guards waiters, ps, psDone, closed
	waiters map[string]chan struct{} // host -> wake-up (buffered 1), one per host (see local)
	ps      *redis.PubSub            // nil until the first wait
	psDone  chan struct{}            // closed when the dispatch goroutine ends
	closed  bool
}

var _ politeness.Gate = (*Gate)(nil)

// New returns a Gate on rdb. The caller keeps ownership of rdb (Close does not
// close it).
func New(rdb Client, opts *Options) *Gate {
	var o Options
	if opts != nil {
		o = *opts
	}
	g := &Gate{rdb: rdb, prefix: o.Prefix, ttl: o.LeaseTTL, fence: o.Fence, wait: o.MaxWait, opTO: o.OpTimeout, log: o.Logger}
	if g.prefix == "" {
		g.prefix = "{goodbot:politeness}:"
	}
	if g.ttl <= 0 {
		g.ttl = 10 * time.Second
	}
	if g.ttl < 3*time.Millisecond {
		g.ttl = 3 * time.Millisecond
	}
	if g.fence == 0 {
		g.fence = g.ttl + time.Minute
	}
	if g.wait <= 0 {
		g.wait = 2 * time.Second
	}
	if g.opTO <= 0 {
		g.opTO = 5 * time.Second
	}
	g.opTO = min(g.opTO, g.ttl/2)
	if g.log == nil {
		g.log = slog.New(slog.DiscardHandler)
	}
	return g
}

func (g *Gate) leaseKey(host string) string { return g.prefix + "lease:" + host }
func (g *Gate) stateKey(host string) string { return g.prefix + "state:" + host }
func (g *Gate) queueKey(host string) string { return g.prefix + "queue:" + host }
func (g *Gate) aliveKey(host string) string { return g.prefix + "alive:" + host }
func (g *Gate) epochKey() string            { return g.prefix + "epoch" }
func (g *Gate) channel() string             { return g.prefix + "wake" }

// Acquire implements [politeness.Gate]. Callers in one process queue in
// arrival order, and the processes waiting for a host are served in the order
// they started waiting, so no process can keep a host from the others.
// While ready asks to wait d, the lease is kept (and renewed) when d is at most
// LeaseTTL, and otherwise released during the wait so other processes can read
// the host's State. Redis failures return an *[Error] matching
// [ErrUnavailable] or [ErrRedis]; the caller gets no lease (fail closed).
func (g *Gate) Acquire(ctx context.Context, host string, ready func(politeness.State) (time.Duration, error)) (politeness.Lease, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if g.rdb == nil {
		return nil, &Error{Op: "acquire", Host: host, Kind: ErrUnavailable, Err: errNoClient}
	}
	if g.isClosed() {
		return nil, &Error{Op: "acquire", Host: host, Kind: ErrClosed}
	}
	if err := g.local.lock(ctx, host); err != nil {
		return nil, err
	}
	l, err := g.acquire(ctx, host, ready)
	if err != nil {
		g.local.unlock(host)
		return nil, err
	}
	return l, nil
}

func (g *Gate) acquire(ctx context.Context, host string, ready func(politeness.State) (time.Duration, error)) (*lease, error) {
	token := newToken()
	for {
		st, sk, err := g.take(ctx, host, token)
		if err != nil {
			return nil, err
		}
		l := g.newLease(host, token, st)
		l.skew = sk
		for again := true; again; {
			d, err := callReady(ready, l.st)
			if err != nil {
				l.free(nil)
				return nil, err
			}
			if d <= 0 {
				return l, nil
			}
			if d > g.ttl {
				// A long wait (a pause): let the others see the State.
				l.free(nil)
				if err := sleep.For(ctx, d); err != nil {
					return nil, err
				}
				again = false
				continue
			}
			if err := sleep.For(ctx, d); err != nil {
				l.free(nil)
				return nil, err
			}
			code, st, sk, err := g.touch(ctx, host, token)
			switch {
			case err != nil:
				l.free(nil)
				return nil, err
			case code == 0: // lost meanwhile: queue again
				l.stopRenewing()
				g.log.Warn("redisgate: lease lost while waiting", "host", host)
				again = false
			case code == 1:
				l.st, l.skew = st, sk
				// code 2: re-asserted after Redis lost its data; the State
				// read before is still the host's (nobody else held it).
			}
		}
	}
}

func callReady(ready func(politeness.State) (time.Duration, error), st politeness.State) (time.Duration, error) {
	if ready == nil {
		return 0, nil
	}
	return ready(st)
}

// acquireOnce runs acquireScript for token's turn at host and returns its
// answer.
func (g *Gate) acquireOnce(ctx context.Context, host, token string) ([]any, error) {
	return acquireScript.Run(ctx, g.rdb,
		[]string{g.epochKey(), g.leaseKey(host), g.stateKey(host), g.queueKey(host), g.aliveKey(host)},
		token, g.ttl.Milliseconds(), g.fence.Milliseconds(), g.ticketLife().Milliseconds()).Slice()
}

// releaseKeys are the KEYS of releaseScript for host.
func (g *Gate) releaseKeys(host string) []string {
	return []string{g.leaseKey(host), g.stateKey(host), g.queueKey(host), g.aliveKey(host)}
}

// take waits until the caller holds host's lease in Redis and returns the
// host's State, on the process's clock, and the skew it was moved by.
func (g *Gate) take(ctx context.Context, host, token string) (politeness.State, skew, error) {
	wake := g.listen(host)
	defer g.unlisten(host)
	var timer *time.Timer
	for {
		sent := g.clock()
		res, err := g.acquireOnce(ctx, host, token)
		recv := g.clock()
		if err != nil {
			if ctx.Err() != nil || isTimeout(err) {
				// The script may have run without its answer reaching us:
				// free what may be ours rather than hold up the host.
				g.leave(host, token)
			}
			if ctx.Err() != nil {
				return politeness.State{}, skew{}, ctx.Err()
			}
			return politeness.State{}, skew{}, opError("acquire", host, err)
		}
		code, arg := reply(res)
		var d time.Duration
		switch code {
		case 1:
			st, err := decodeState(arg)
			if err != nil {
				err = &Error{Op: "acquire", Host: host, Kind: ErrBadState, Err: err}
				if ferr := g.release(host, token, nil, skew{}); ferr != nil {
					g.log.Warn("redisgate: release after bad state failed", "host", host, "err", ferr)
				}
				return politeness.State{}, skew{}, err
			}
			sk := skewOf(element(res, 2), sent, recv)
			return sk.toLocal(st), sk, nil
		case 2: // fenced after Redis lost its data
			d = msDuration(arg)
			g.log.Info("redisgate: fenced after redis lost its data", "host", host, "wait", d)
		default: // queued: until woken, the lease's expiry, or MaxWait
			d = msDuration(arg)
			if d <= 0 { // free, but another process is ahead
				d = g.wait
			}
			d = min(d, g.wait)
		}
		if g.subscribe(ctx) {
			continue // look again now that no release can go unnoticed
		}
		d = max(d, time.Millisecond)
		if timer == nil {
			timer = time.NewTimer(d)
			defer timer.Stop()
		} else {
			timer.Reset(d)
		}
		select {
		case <-wake:
			if !timer.Stop() {
				<-timer.C
			}
		case <-timer.C:
		case <-ctx.Done():
			g.leave(host, token)
			return politeness.State{}, skew{}, ctx.Err()
		}
	}
}

// ticketLife is how long a waiter's place in the queue outlives its last look
// at Redis (it looks at least every MaxWait).
func (g *Gate) ticketLife() time.Duration { return 2*g.wait + time.Second }

// leave gives up a place in host's queue (and a lease that may have been
// granted unseen), waking the next waiter.
func (g *Gate) leave(host, token string) {
	if err := g.release(host, token, nil, skew{}); err != nil && !errors.Is(err, ErrLeaseLost) {
		g.log.Warn("redisgate: leaving the queue failed", "host", host, "err", err)
	}
}

// touch renews a held lease and reads the State: code 1 (ours), 2 (re-asserted
// after Redis lost its data) or 0 (lost). The State is on the process's
// clock, moved by the skew returned.
func (g *Gate) touch(ctx context.Context, host, token string) (int64, politeness.State, skew, error) {
	sent := g.clock()
	res, err := touchScript.Run(ctx, g.rdb, []string{g.leaseKey(host), g.stateKey(host)},
		token, g.ttl.Milliseconds()).Slice()
	recv := g.clock()
	if err != nil {
		if ctx.Err() != nil {
			return 0, politeness.State{}, skew{}, ctx.Err()
		}
		return 0, politeness.State{}, skew{}, opError("renew", host, err)
	}
	code, arg := reply(res)
	if code == 0 {
		return 0, politeness.State{}, skew{}, nil
	}
	st, err := decodeState(arg)
	if err != nil {
		return 0, politeness.State{}, skew{}, &Error{Op: "renew", Host: host, Kind: ErrBadState, Err: err}
	}
	sk := skewOf(element(res, 2), sent, recv)
	return code, sk.toLocal(st), sk, nil
}

// release frees host's lease, storing *next (nil: keep the State), whose
// instants are on the process's clock: they are stored on the server's,
// moved by sk.
func (g *Gate) release(host, token string, next *politeness.State, sk skew) error {
	ctx, cancel := context.WithTimeout(context.Background(), g.opTO)
	defer cancel()
	mode, body, at := "k", "", int64(0)
	if next != nil {
		st := sk.toServer(*next)
		b, err := json.Marshal(st)
		if err != nil { // cannot happen for plain data; keep the old State
			return &Error{Op: "release", Host: host, Kind: ErrBadState, Err: err}
		}
		mode, body = "s", string(b)
		if !st.Expires.IsZero() {
			at = max(st.Expires.UnixMilli(), g.clock().Add(sk.hi+time.Second).UnixMilli())
		}
	}
	n, err := releaseScript.Run(ctx, g.rdb, g.releaseKeys(host), token, mode, body, at, g.channel(), host).Int64()
	if err != nil {
		return opError("release", host, err)
	}
	if n == 0 {
		return &Error{Op: "release", Host: host, Kind: ErrLeaseLost}
	}
	return nil
}

// listen registers host's wake-up channel.
func (g *Gate) listen(host string) <-chan struct{} {
	ch := make(chan struct{}, 1)
	g.mu.Lock()
	if g.waiters == nil {
		g.waiters = make(map[string]chan struct{})
	}
	g.waiters[host] = ch
	g.mu.Unlock()
	return ch
}

func (g *Gate) unlisten(host string) {
	g.mu.Lock()
	delete(g.waiters, host)
	g.mu.Unlock()
}

// subscribe subscribes the gate to releases unless it already is, and
// reports whether it did so now. Without a subscription (Redis down), waiters
// fall back to MaxWait.
func (g *Gate) subscribe(ctx context.Context) bool {
	g.mu.Lock()
	done := g.ps != nil || g.closed
	g.mu.Unlock()
	if done {
		return false
	}
	// The subscription outlives this call: it must not end with ctx.
	sctx := context.WithoutCancel(ctx)
	ps := g.rdb.Subscribe(sctx, g.channel())
	if _, err := ps.ReceiveTimeout(sctx, g.opTO); err != nil {
		_ = ps.Close()
		g.log.Warn("redisgate: subscribe failed", "err", err)
		return false
	}
	g.mu.Lock()
	if g.ps != nil || g.closed {
		g.mu.Unlock()
		_ = ps.Close()
		return false
	}
	g.ps, g.psDone = ps, make(chan struct{})
	msgs, psDone := ps.Channel(), g.psDone
	g.mu.Unlock()
	go g.dispatch(msgs, psDone)
	return true
}

// dispatch wakes the local waiter of each released host. It ends when the
// subscription is closed.
func (g *Gate) dispatch(msgs <-chan *redis.Message, done chan struct{}) {
	defer close(done)
	for m := range msgs {
		g.mu.Lock()
		if ch := g.waiters[m.Payload]; ch != nil {
			select {
			case ch <- struct{}{}:
			default:
			}
		}
		g.mu.Unlock()
	}
}

func (g *Gate) isClosed() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.closed
}

// Close ends the gate's subscription. Leases already granted can still be
// released; Acquire returns an error matching [ErrClosed].
func (g *Gate) Close() error {
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		return nil
	}
	g.closed = true
	ps, done := g.ps, g.psDone
	g.mu.Unlock()
	if ps == nil {
		return nil
	}
	err := ps.Close()
	<-done
	return err
}

// reply returns a script's reply code and its first argument.
func reply(res []any) (int64, any) {
	code, _ := element(res, 0).(int64)
	return code, element(res, 1)
}

// element returns the i-th element of a script's reply, nil if it has none.
func element(res []any, i int) any {
	if i < len(res) {
		return res[i]
	}
	return nil
}

func msDuration(v any) time.Duration {
	n, _ := v.(int64)
	return time.Duration(n) * time.Millisecond
}

func decodeState(v any) (politeness.State, error) {
	var st politeness.State
	s, ok := v.(string)
	if !ok || s == "" {
		return st, nil
	}
	if err := json.Unmarshal([]byte(s), &st); err != nil {
		return politeness.State{}, fmt.Errorf("state %s: %w", quote.Short(s, 48), err)
	}
	return st, nil
}

func newToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return hex.EncodeToString(b[:])
}
