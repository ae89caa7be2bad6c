// Package sleep holds the one way this module waits for a duration: on a
// timer that a context can end, so that no wait outlives its caller.
package sleep

import (
	"context"
	"time"
)

// For waits d, or until ctx ends, and then returns ctx.Err() (nil when
// the whole of d passed first). A d of zero or less returns at once with
// ctx.Err().
func For(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
