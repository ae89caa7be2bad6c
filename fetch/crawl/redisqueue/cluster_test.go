package redisqueue

import (
	"context"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/goodbot-go/goodbot/fetch/crawl"
	"github.com/goodbot-go/goodbot/fetch/crawl/queuetest"
	"github.com/goodbot-go/goodbot/internal/testenv"
	"github.com/goodbot-go/goodbot/politeness/redisgate/redistest"
	"github.com/redis/go-redis/v9"
)

// On a Redis Cluster of three masters the queue keeps its promises: each
// crawl's keys hash to one slot (the scripts, which reach the site lists
// they pick, run there), and crawls spread over the shards.
func TestQueue_Cluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-node Redis Cluster")
	}
	for _, bin := range []string{"redis-server", "redis-cli"} {
		if _, err := exec.LookPath(bin); err != nil {
			testenv.Missing(t, "no %s for a local Redis Cluster: %v", bin, err)
		}
	}
	cl, err := redistest.StartCluster(3)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Kill()
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: cl.Addrs})
	defer c.Close()
	ctx := context.Background()

	queuetest.Run(t, func(t *testing.T) crawl.Queue { return open(t, c, crawlName()) })

	// A crawl through every operation, then its keys: one slot.
	q := open(t, c, crawlName())
	if _, err := q.Add(ctx, items("http://a.test/1", "http://b.test/1", "http://a.test/2"), 0); err != nil {
		t.Fatal(err)
	}
	it, _, ok, err := q.Lease(ctx, t0, time.Minute)
	if !ok || err != nil {
		t.Fatal(ok, err)
	}
	if err := q.Finish(ctx, it, crawl.Step{Done: []string{it.Key}}, t0); err != nil {
		t.Fatal(err)
	}
	var keys []string
	var mu sync.Mutex // ForEachMaster calls concurrently
	err = c.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
		ks, err := m.Keys(ctx, q.Prefix()+"*").Result()
		mu.Lock()
		keys = append(keys, ks...)
		mu.Unlock()
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) < 8 {
		t.Fatalf("crawl keys %v; want its sets, hashes and site lists", keys)
	}
	slots := map[int64]bool{}
	for _, k := range keys {
		s, err := c.ClusterKeySlot(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		slots[s] = true
	}
	if len(slots) != 1 {
		t.Errorf("one crawl's keys span slots %v", slots)
	}
	// Crawls of different names land on different shards.
	shards := map[string]bool{}
	for _, name := range []string{"a", "b", "c", "d", "e", "f", "g", "h"} {
		k := New(c, name, nil).Prefix() + "items"
		m, err := c.MasterForKey(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		shards[m.Options().Addr] = true
	}
	if len(shards) < 2 {
		t.Errorf("eight crawls all on one shard %v", shards)
	}
}
