package queuetest_test

import (
	"testing"

	"github.com/goodbot-go/goodbot/fetch/crawl"
	"github.com/goodbot-go/goodbot/fetch/crawl/queuetest"
)

// The Frontier's in-memory queue passes the kit.
func TestMemoryQueue(t *testing.T) {
	queuetest.Run(t, func(*testing.T) crawl.Queue { return crawl.NewMemoryQueue() })
}
