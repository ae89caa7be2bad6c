package main

import (
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/goodbot-go/goodbot/internal/manyhosts"
)

func TestMain(m *testing.M) {
	manyhosts.Main() // serves the many-host web when this process is one (scale_bench_test.go)
	if os.Getenv(childEnv) != "" {
		os.Exit(childMain())
	}
	goleak.VerifyTestMain(m)
}
