package redisqueue_test

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"time"

	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/fetch/crawl"
	"github.com/goodbot-go/goodbot/fetch/crawl/redisqueue"
	"github.com/goodbot-go/goodbot/politeness/redisgate"
	"github.com/redis/go-redis/v9"
)

// Every worker of a fleet, on any machine, runs this: the same crawl name on
// the same Redis makes one crawl. The Redis gate keeps each host's pacing
// across the fleet; the fetched set makes each URL fetched once. A worker
// returns when nothing is queued or leased any more; one that dies leaves
// its leased item to the others once its lease runs out.
func ExampleNew() {
	rdb := redis.NewClient(&redis.Options{Addr: os.Getenv("GOODBOT_REDIS_ADDR")})
	defer rdb.Close()
	gate := redisgate.New(rdb, nil)
	defer gate.Close()

	fetcher, err := fetch.NewFetcher(fetch.Bot{
		UserAgent: "ExampleBot/1.0 (+https://example.com/bot)",
		Token:     "ExampleBot",
		Gate:      gate,
		Fetched:   &redisgate.FetchedSet{Client: rdb, Key: "goodbot:crawl:{example}:fetched"},
		Once:      true,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	q := redisqueue.New(rdb, "example", nil)
	front := &crawl.Frontier{Queue: q, MaxPerSite: 100}
	seed, _ := url.Parse("https://example.com/")
	front.AddAll([]*url.URL{seed}, "seed") // every worker may add the seeds: each is queued once
	c := &crawl.Crawler{
		Frontier:    front,
		Fetcher:     fetcher,
		FollowLinks: true,
		LeaseTTL:    2 * time.Minute,        // longer than any fetch holds an item
		Recheck:     200 * time.Millisecond, // see the other workers' new links
	}
	if err := c.Run(context.Background()); err != nil {
		fmt.Println(err)
	}
	fmt.Println(c.Done(), "pages fetched by this worker")
}
