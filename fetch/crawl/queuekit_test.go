package crawl_test

import (
	"fmt"
	"testing"

	"github.com/goodbot-go/goodbot/fetch/crawl"
	"github.com/goodbot-go/goodbot/fetch/crawl/queuetest"
)

// The Frontier's in-memory queue passes the queue kit with a Spill too,
// its items spilled beyond MaxInMemory and brought back in batches.
func TestSpillingMemoryQueue(t *testing.T) {
	for _, maxInMem := range []int{1, 2, 3, 100} {
		t.Run(fmt.Sprint("MaxInMemory ", maxInMem), func(t *testing.T) {
			queuetest.Run(t, func(*testing.T) crawl.Queue { return crawl.NewSpillingQueue(maxInMem) })
		})
	}
}
