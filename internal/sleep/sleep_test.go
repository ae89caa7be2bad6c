package sleep

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

func TestFor(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		if err := For(t.Context(), 5*time.Second); err != nil || time.Since(start) != 5*time.Second {
			t.Errorf("For(5s) = %v after %v, want nil after 5s", err, time.Since(start))
		}
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
		defer cancel()
		start = time.Now()
		if err := For(ctx, time.Hour); err != context.DeadlineExceeded || time.Since(start) != 2*time.Second {
			t.Errorf("For(1h) with a 2 s deadline = %v after %v", err, time.Since(start))
		}
		if err := For(ctx, -time.Second); err != context.DeadlineExceeded {
			t.Errorf("For(-1s) on an ended context = %v", err)
		}
		start = time.Now()
		if err := For(t.Context(), 0); err != nil || time.Since(start) != 0 {
			t.Errorf("For(0) = %v after %v", err, time.Since(start))
		}
	})
}
