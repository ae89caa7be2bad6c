package crawl

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/goodbot-go/goodbot/internal/manyhosts"
)

func TestMain(m *testing.M) {
	manyhosts.Main() // serves the many-host web when this process is one (scale_bench_test.go)
	goleak.VerifyTestMain(m)
}
