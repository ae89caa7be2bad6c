package fetch_test

import (
	"testing"

	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/fetch/oncetest"
)

func TestMemorySet_Conformance(t *testing.T) {
	oncetest.Run(t, func(*testing.T) fetch.FetchedSet { return &fetch.MemorySet{} })
}
