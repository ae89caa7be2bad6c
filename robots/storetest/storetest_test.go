package storetest_test

import (
	"testing"

	"github.com/goodbot-go/goodbot/robots"
	"github.com/goodbot-go/goodbot/robots/storetest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestMemoryStore(t *testing.T) {
	storetest.Run(t, func(*testing.T) robots.Store { return &robots.MemoryStore{} })
}
