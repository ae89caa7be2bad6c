package boltstore_test

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/goodbot-go/goodbot/robots"
	"github.com/goodbot-go/goodbot/robots/boltstore"
	"github.com/goodbot-go/goodbot/robots/robotstest"
	bolt "go.etcd.io/bbolt"
)

func ExampleNew() {
	dir, _ := os.MkdirTemp("", "boltstore-example")
	defer os.RemoveAll(dir)
	db, err := bolt.Open(filepath.Join(dir, "bot.db"), 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer db.Close()
	store, err := boltstore.New(db, "robots")
	if err != nil {
		fmt.Println(err)
		return
	}
	c := &robots.Cache{
		Transport: robotstest.Transport(robotstest.Handler("User-agent: *\nDisallow: /tmp/\n")),
		Store:     store, // copies survive a restart of the bot
	}
	u, _ := url.Parse("https://example.com/tmp/x")
	fmt.Println(c.Check(context.Background(), robots.Agent{Token: "ExampleBot"}, u))
	// Output: robots: https://example.com/tmp/x disallowed for ExampleBot by "Disallow: /tmp/"
}
