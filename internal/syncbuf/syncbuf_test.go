package syncbuf

import (
	"strings"
	"sync"
	"testing"
)

// Concurrent writes all arrive, each whole, and reads meanwhile are safe
// (run with -race).
func TestBuffer_ConcurrentWrites(t *testing.T) {
	var b Buffer
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				b.Write([]byte("line\n"))
				_ = b.String()
			}
		})
	}
	wg.Wait()
	if got := strings.Count(b.String(), "line\n"); got != 800 {
		t.Errorf("%d lines, want 800", got)
	}
}
