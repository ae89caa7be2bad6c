package botkit

import (
	"github.com/goodbot-go/goodbot/internal/syncbuf"
	"strings"
	"testing"
	"time"
)

// The progress line shows pages done, queued, hosts paused and the rate
// since the start.
func TestProgress_LineShowsPausedAndRate(t *testing.T) {
	cases := []struct {
		done, queued, paused int
		after                time.Duration
		want                 string
	}{
		{done: 30, queued: 12, paused: 1, after: 10 * time.Second, want: "progress: 30 done, 12 queued, 1 host paused, 3.00 pages/s"},
		{done: 0, queued: 5, paused: 2, after: time.Second, want: "progress: 0 done, 5 queued, 2 hosts paused, 0.00 pages/s"},
		{done: 7, queued: 0, paused: 0, after: 2 * time.Second, want: "progress: 7 done, 0 queued, 0 hosts paused, 3.50 pages/s"},
	}
	for _, tc := range cases {
		var b syncbuf.Buffer
		p := &Progress{W: &b, Counts: func() (int, int) { return tc.done, tc.queued }, Paused: func() int { return tc.paused }}
		start := time.Now()
		p.start = start
		p.print(start.Add(tc.after))
		if got := strings.TrimSpace(b.String()); got != tc.want {
			t.Errorf("got  %q\nwant %q", got, tc.want)
		}
	}
}
