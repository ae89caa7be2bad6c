package redisgate

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
	"testing"

	"github.com/redis/go-redis/v9"
)

// A timeout (after which a script may have run unseen) is told from the
// other failures, and Classify sorts client errors into the two kinds.
func TestErrors_TimeoutAndClassify(t *testing.T) {
	netTimeout := &net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded}
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	for _, c := range []struct {
		name    string
		err     error
		timeout bool
		kind    error
	}{
		{"nil", nil, false, nil},
		{"context deadline", fmt.Errorf("run: %w", context.DeadlineExceeded), true, ErrUnavailable},
		{"network timeout", netTimeout, true, ErrUnavailable},
		{"connection refused", refused, false, ErrUnavailable},
		{"redis error", redis.Nil, false, ErrRedis},
		{"plain error", errors.New("EOF-ish"), false, ErrUnavailable},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := Classify(c.err); got != c.kind {
				t.Errorf("Classify = %v, want %v", got, c.kind)
			}
			if c.err == nil {
				return
			}
			if got := isTimeout(c.err); got != c.timeout {
				t.Errorf("isTimeout = %v, want %v", got, c.timeout)
			}
		})
	}
}
