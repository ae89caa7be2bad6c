package botkit

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/fetch/crawl/redisqueue"
	"github.com/goodbot-go/goodbot/politeness/redisgate"
	"github.com/goodbot-go/goodbot/robots/redisstore"
	"github.com/redis/go-redis/v9"
)

// Fleet is what the workers of one crawl share in Redis (-redis): the
// politeness gate (each host paced across the fleet), robots.txt copies, the
// frontier (per-site queues, the schedule of sites, leased items) and the
// fetched-once set. Made by [Start] when Flags.Redis is set; closed with the
// session.
type Fleet struct {
	Redis *redis.Client
	Gate  *redisgate.Gate
	Queue *redisqueue.Queue
	// LeaseTTL is how long a worker's leased item (and its fetch claim)
	// outlives the worker: twice the bot's fetch deadline, so longer than
	// any fetch; a live worker renews its leases every third of it. Set by
	// [Begin] from the bot's profile.
	LeaseTTL time.Duration
	// Recheck is how often an idle worker asks the queue for work that
	// other workers queued ([crawl.Crawler.Recheck]).
	Recheck time.Duration
}

// RegisterFleet adds -redis and -crawl to fs, for a bot that can run as one
// worker of a fleet.
func (f *Flags) RegisterFleet(fs *flag.FlagSet) {
	fs.StringVar(&f.Redis, "redis", "", "run as one worker of a fleet sharing the crawl in the Redis at `addr` "+
		"(host:port, or a redis:// or rediss:// URL with a user, database or TLS; a password is read from $"+RedisPasswordEnv+" "+
		"rather than the command line, which other local users can read): "+
		"politeness, robots.txt copies, the frontier and the fetched set; start any number of workers, anywhere, any time "+
		"(-state is then not used; site arguments are optional: a worker without them joins the crawl)")
	fs.StringVar(&f.Crawl, "crawl", f.Name, "with -redis, the `name` of the shared crawl: workers of one name run one crawl")
}

// RedisPasswordEnv names the environment variable a fleet worker reads its
// Redis password from, when -redis gives none.
const RedisPasswordEnv = "GOODBOT_REDIS_PASSWORD"

// redisOptions reads -redis: host:port, or a redis:// or rediss:// URL as
// go-redis parses it (user, password, database, TLS). A password not in
// it comes from $GOODBOT_REDIS_PASSWORD (getenv). name is how messages
// show the address: never with its password.
func redisOptions(addr string, getenv func(string) string) (opt *redis.Options, name string, err error) {
	if !strings.HasPrefix(addr, "redis://") && !strings.HasPrefix(addr, "rediss://") {
		opt, name = &redis.Options{Addr: addr}, addr
	} else {
		u, err := url.Parse(addr)
		if err != nil {
			// url's error quotes the whole URL, password and all.
			return nil, "the -redis URL", errors.New("the -redis URL does not parse")
		}
		name = u.Redacted()
		if opt, err = redis.ParseURL(addr); err != nil {
			return nil, name, errors.New(strings.ReplaceAll(err.Error(), addr, name))
		}
	}
	if opt.Password == "" {
		opt.Password = getenv(RedisPasswordEnv)
	}
	opt.DialTimeout = 2 * time.Second
	return opt, name, nil
}

// openFleet connects to the fleet's Redis (failing fast when it does not
// answer) and opens the crawl's shared state; it waits no longer than ctx.
func openFleet(ctx context.Context, f *Flags, env Env, log *slog.Logger) (*Fleet, error) {
	opt, name, err := redisOptions(f.Redis, os.Getenv)
	if err != nil {
		return nil, fmt.Errorf("redis %s: %w", name, err)
	}
	rdb := redis.NewClient(opt)
	pingCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := rdb.Ping(pingCtx).Err(); err != nil {
		rdb.Close()
		return nil, fmt.Errorf("redis %s: %w", name, classified(err))
	}
	fence := env.ScaleDur(10*time.Second + time.Minute)
	if err := waitFence(ctx, rdb, fence, log); err != nil {
		rdb.Close()
		return nil, fmt.Errorf("redis %s: %w", name, err)
	}
	gate := redisgate.New(rdb, &redisgate.Options{
		LeaseTTL: env.ScaleDur(10 * time.Second),
		Fence:    fence,
		MaxWait:  env.ScaleDur(2 * time.Second),
		Logger:   log,
	})
	return &Fleet{
		Redis:   rdb,
		Gate:    gate,
		Queue:   redisqueue.New(rdb, f.Crawl, &redisqueue.Options{Owner: Owner(), Logger: log}),
		Recheck: env.ScaleDur(time.Second),
	}, nil
}

// apply puts the fleet's shared parts into bot: the gate, robots.txt copies
// and the fetched-once set.
func (fl *Fleet) apply(bot *fetch.Bot) {
	timeout := bot.Limits.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Second // fetch's default
	}
	fl.LeaseTTL = 2 * timeout
	bot.Gate = fl.Gate
	bot.RobotsStore = &redisstore.Store{Client: fl.Redis}
	bot.Fetched = fl.Queue.Fetched(fl.LeaseTTL)
}

// Close ends the worker's part: its leases run out for the others to take.
func (fl *Fleet) Close() error {
	fl.Queue.Close()
	fl.Gate.Close()
	return fl.Redis.Close()
}

// Owner names this worker in the fleet's lease tokens: host name and
// process id.
func Owner() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s/%d", host, os.Getpid())
}

// classified is a Redis client's error with what it means for the fleet
// (redisgate.Classify) and the server's own words (a refused password
// says so; no password is ever in them).
func classified(err error) error {
	return fmt.Errorf("%w: %w", redisgate.Classify(err), err)
}

// waitFence waits until the Redis server has been up for fence: before
// then the gate grants no lease on a Redis that may have lost its data
// (see redisgate.Options.Fence), and a worker would give up sites whose
// robots.txt it could not fetch meanwhile. It returns at once on a Redis
// that has run long enough, and when ctx ends (an interrupt).
func waitFence(ctx context.Context, rdb *redis.Client, fence time.Duration, log *slog.Logger) error {
	infoCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	info, err := rdb.Info(infoCtx, "server").Result()
	cancel()
	if err != nil {
		return classified(err)
	}
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "uptime_in_seconds:"); ok {
			up, err := strconv.Atoi(v)
			if wait := fence - time.Duration(up)*time.Second; err == nil && wait > 0 {
				log.Info("redis started recently: waiting out the politeness gate's fence", "wait", wait)
				t := time.NewTimer(wait) // the gate would refuse every host until then
				select {
				case <-t.C:
				case <-ctx.Done():
					t.Stop()
					return fmt.Errorf("waiting out the fence: %w", context.Cause(ctx))
				}
			}
		}
	}
	return nil
}
