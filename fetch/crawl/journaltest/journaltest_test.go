package journaltest_test

import (
	"testing"

	"github.com/goodbot-go/goodbot/fetch/crawl"
	"github.com/goodbot-go/goodbot/fetch/crawl/journaltest"
)

func TestMemoryJournal(t *testing.T) {
	journaltest.Run(t, func(*testing.T) (crawl.Journal, journaltest.Claim) { return &crawl.MemoryJournal{}, nil })
}
