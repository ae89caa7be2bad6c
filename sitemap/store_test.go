package sitemap_test

import (
	"testing"

	"github.com/goodbot-go/goodbot/sitemap"
	"github.com/goodbot-go/goodbot/sitemap/storetest"
)

func TestMemoryStore(t *testing.T) {
	storetest.Run(t, func(*testing.T) sitemap.Store { return new(sitemap.MemoryStore) })
}
