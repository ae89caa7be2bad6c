package politeness_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/goodbot-go/goodbot/politeness"
)

func TestRetryAfter_B6_H4_S6(t *testing.T) {
	now := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	date := func(t time.Time) string { return t.Format(http.TimeFormat) }
	tests := []struct {
		name, value, date string
		want              time.Duration
		ok                bool
	}{
		{"seconds", "120", "", 120 * time.Second, true},
		{"spaces", " 30 ", "", 30 * time.Second, true},
		{"zero", "0", "", 0, true},
		{"huge saturates", "99999999999999999999", "", time.Duration(1<<63 - 1), true},
		{"beyond a Duration saturates", "10000000000", "", time.Duration(1<<63 - 1), true}, // fits an int64, not in nanoseconds
		// 9223372036 s is the longest whole number of seconds a Duration holds.
		{"largest that fits", "9223372036", "", 9223372036 * time.Second, true},
		{"one more saturates", "9223372037", "", time.Duration(1<<63 - 1), true},
		{"now", date(now), "", 0, true},
		{"negative", "-5", "", 0, false},
		{"fraction", "1.5", "", 0, false},
		{"garbage", "tomorrow", "", 0, false},
		{"empty", "", "", 0, false},
		{"date vs now", date(now.Add(90 * time.Second)), "", 90 * time.Second, true},
		{"date vs Date header", date(now.Add(time.Hour)), date(now.Add(59 * time.Minute)), time.Minute, true},
		{"bad Date header falls back to now", date(now.Add(time.Hour)), "yesterday", time.Hour, true},
		{"RFC 850 date", now.Add(time.Minute).Format("Monday, 02-Jan-06 15:04:05 GMT"), "", time.Minute, true},
		{"asctime date", now.Add(time.Minute).Format(time.ANSIC), "", time.Minute, true},
		{"past date", date(now.Add(-time.Minute)), "", 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := politeness.RetryAfter(tc.value, tc.date, now)
			if got != tc.want || ok != tc.ok {
				t.Errorf("RetryAfter(%q, %q) = %v, %v; want %v, %v", tc.value, tc.date, got, ok, tc.want, tc.ok)
			}
		})
	}
}

func FuzzRetryAfter(f *testing.F) {
	for _, s := range []string{"120", "0", "-1", "Wed, 21 Oct 2015 07:28:00 GMT", "garbage", "99999999999999999999999"} {
		f.Add(s, "Wed, 21 Oct 2015 07:20:00 GMT")
	}
	now := time.Date(2015, 10, 21, 7, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, value, date string) {
		d, ok := politeness.RetryAfter(value, date, now)
		if d < 0 {
			t.Errorf("RetryAfter(%q, %q) = %v: negative", value, date, d)
		}
		if !ok && d != 0 {
			t.Errorf("RetryAfter(%q, %q) = %v, false: want 0 when not usable", value, date, d)
		}
	})
}

func TestRetryAfterMode_String(t *testing.T) {
	if politeness.Clamp.String() != "clamp" || politeness.GiveUp.String() != "give_up" {
		t.Error("RetryAfterMode names")
	}
	for k, want := range map[politeness.EventKind]string{politeness.EventWait: "wait", politeness.EventPause: "pause",
		politeness.EventGiveUp: "give_up", politeness.EventBreakerTrip: "breaker_trip", politeness.EventRefused: "refused",
		0: "", politeness.EventRefused + 1: "event(6)", -1: "event(-1)", 42: "event(42)"} {
		if k.String() != want {
			t.Errorf("EventKind(%d) = %q, want %q", int(k), k.String(), want)
		}
	}
}

func TestPolicy_LongestGap(t *testing.T) {
	tests := []struct {
		name string
		p    politeness.Policy
		want time.Duration
	}{
		{"defaults: 60 s Crawl-delay cap, slowed down 8 times", politeness.Policy{}, 8 * time.Minute},
		{"MinDelay above the Crawl-delay cap", politeness.Policy{MinDelay: 2 * time.Minute}, 16 * time.Minute},
		{"smaller cap", politeness.Policy{MinDelay: 100 * time.Millisecond, MaxCrawlDelay: time.Second}, 8 * time.Second},
		{"no slow-down", politeness.Policy{MaxSlowdown: -1}, time.Minute},
		{"slow-down level 1", politeness.Policy{MaxSlowdown: 1}, 2 * time.Minute},
		{"slow-down capped at 16", politeness.Policy{MaxSlowdown: 40, MaxCrawlDelay: time.Second}, 65536 * time.Second},
		{"jitter adds", politeness.Policy{MaxSlowdown: -1, Jitter: 5 * time.Second}, 65 * time.Second},
		{"no delay at all", politeness.Policy{MinDelay: -1, MaxCrawlDelay: time.Second, MaxSlowdown: -1}, time.Second},
		{"saturates", politeness.Policy{MaxCrawlDelay: 1 << 61, MaxSlowdown: 16, Jitter: time.Hour}, time.Duration(1<<63 - 1)},
		// Exact products and sums that fit in a Duration do not saturate.
		{"doubled to one below the largest Duration", politeness.Policy{MaxCrawlDelay: (1<<63 - 1) / 2, MaxSlowdown: 1}, 1<<63 - 2},
		{"jitter up to the largest Duration", politeness.Policy{MaxCrawlDelay: 1<<63 - 1 - 5*time.Second, MaxSlowdown: -1, Jitter: 5 * time.Second}, 1<<63 - 1},
		{"jitter past the largest Duration saturates", politeness.Policy{MaxCrawlDelay: 1 << 62, MaxSlowdown: -1, Jitter: 1 << 62}, 1<<63 - 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.p.LongestGap(); got != tt.want {
				t.Errorf("LongestGap() = %v, want %v", got, tt.want)
			}
		})
	}
}
