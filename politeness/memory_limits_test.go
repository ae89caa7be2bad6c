package politeness_test

import (
	"context"
	"testing"
	"time"

	"github.com/goodbot-go/goodbot/politeness"
)

// The MemoryGate keeps each instant of a State in 64 bits of nanoseconds.
// An instant beyond what they hold (past the year 2262, before 1677) is
// clamped to the nearest one they do, never wrapped round to the other
// side: a pause that ends that far ahead still lies ahead. Within the
// range, an instant reads back exactly, the second next to each limit
// included; the Unix epoch itself stays a set instant.
func TestMemoryGate_InstantsAtTheLimits(t *testing.T) {
	last := time.Unix(0, 1<<63-1) // the latest instant the gate holds
	first := time.Unix(0, -1<<63)
	for _, tc := range []struct {
		name string
		at   time.Time
		want time.Time // zero: the same as at
	}{
		{"a second inside the latest", time.Unix(9223372035, 999_999_999), time.Time{}},
		{"past the latest", time.Unix(9223372036, 900_000_000), last},
		{"a second past the latest", time.Unix(9223372037, 0), last},
		{"a second inside the earliest", time.Unix(-9223372035, 0), time.Time{}},
		{"before the earliest", time.Unix(-9223372037, 0), first},
		{"the Unix epoch", time.Unix(0, 0), time.Unix(0, 1)},
	} {
		g := politeness.NewMemoryGate()
		ctx := context.Background()
		ready := func(politeness.State) (time.Duration, error) { return 0, nil }
		l, err := g.Acquire(ctx, "http://a.test:80", ready)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Release(politeness.State{NotBefore: tc.at, Strikes: 1}); err != nil {
			t.Fatal(err)
		}
		l, err = g.Acquire(ctx, "http://a.test:80", ready)
		if err != nil {
			t.Fatal(err)
		}
		got := l.State().NotBefore
		l.Release(politeness.State{})
		want := tc.want
		if want.IsZero() {
			want = tc.at
		}
		if !got.Equal(want) {
			t.Errorf("%s: NotBefore %v read back as %v, want %v", tc.name, tc.at, got, want)
		}
	}
}
