package redisgate_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"time"

	"github.com/goodbot-go/goodbot/politeness"
	"github.com/goodbot-go/goodbot/politeness/redisgate"
	"github.com/redis/go-redis/v9"
)

// Every process of a fleet builds its politeness.Transport on a Gate over the
// same Redis (and Prefix): together they put at most one request at a time on
// each host, with the host's delay between them.
func ExampleNew() {
	addr := os.Getenv("GOODBOT_REDIS_ADDR") // for example "127.0.0.1:6379"
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()
	gate := redisgate.New(rdb, &redisgate.Options{
		Prefix: "{goodbot-example}:",
		Fence:  time.Second, // this Redis may have just started: wait at most 1 s
	})
	defer gate.Close()

	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "hello")
	}))
	defer site.Close()
	client := &http.Client{Transport: &politeness.Transport{
		Gate:   gate,
		Policy: politeness.Policy{MinDelay: 50 * time.Millisecond},
	}}
	defer client.CloseIdleConnections()

	start := time.Now()
	for range 3 {
		resp, err := client.Get(site.URL)
		if err != nil {
			fmt.Println(err) // with Redis down: "redisgate: redis unavailable (acquire ...)"
			return
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		fmt.Println(resp.Status)
	}
	fmt.Println("two gaps of 50ms kept:", time.Since(start) >= 100*time.Millisecond)
	// Output:
	// 200 OK
	// 200 OK
	// 200 OK
	// two gaps of 50ms kept: true
}
