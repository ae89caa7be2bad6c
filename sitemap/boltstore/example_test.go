package boltstore_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"go.etcd.io/bbolt"

	"github.com/goodbot-go/goodbot/sitemap"
	"github.com/goodbot-go/goodbot/sitemap/boltstore"
)

func ExampleNew() {
	dir, _ := os.MkdirTemp("", "bot")
	defer os.RemoveAll(dir)
	// The bot opens its one state file once and hands buckets to each package.
	db, err := bbolt.Open(filepath.Join(dir, "bot.db"), 0o600, &bbolt.Options{Timeout: time.Second})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer db.Close()
	store, err := boltstore.New(db, "sitemap")
	if err != nil {
		fmt.Println(err)
		return
	}
	w := &sitemap.Walker{Store: store} // plus the bot's Client
	_ = w

	ctx := context.Background()
	_ = store.Save(ctx, "https://example.com", &sitemap.State{Sitemaps: map[string]*sitemap.SitemapState{
		"https://example.com/sitemap.xml": {ETag: `"abc"`},
	}})
	st, _ := store.Load(ctx, "https://example.com")
	fmt.Println(st.Sitemaps["https://example.com/sitemap.xml"].ETag)
	// Output:
	// "abc"
}
