package politeness_test

import (
	"net/http"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/goodbot-go/goodbot/politeness"
)

// The pre-standard pairs of fields, in a response without RateLimit or
// RateLimit-Policy: RateLimit-Remaining/-Reset (the draft before -08) and
// X-RateLimit-Remaining/-Reset (API gateways, GitHub, Reddit). A reset
// below 10^9 is seconds from now; from 10^9 a Unix time in seconds, from
// 10^12 in milliseconds, read against the response's Date.
func TestParseQuota_PreStandardFields(t *testing.T) {
	s := time.Second
	const date = "Sun, 09 Sep 2001 01:45:40 GMT"  // Unix 999999940, 60 s before 10^9
	const later = "Sun, 09 Sep 2001 01:47:40 GMT" // Unix 1000000060
	unix := func(sec int64) string { return strconv.FormatInt(sec, 10) }
	for _, tt := range []struct {
		name string
		h    http.Header
		want politeness.Quota
	}{
		{"X-, exhausted, seconds", http.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {"30"}}, politeness.Quota{Pause: 30 * s}},
		{"draft -07, exhausted", http.Header{"Ratelimit-Remaining": {"0"}, "Ratelimit-Reset": {"30"}}, politeness.Quota{Pause: 30 * s}},
		{"X-, low", http.Header{"X-Ratelimit-Remaining": {"5"}, "X-Ratelimit-Reset": {"10"}}, politeness.Quota{Gap: 2 * s, GapFor: 10 * s}},
		{"draft -07, low", http.Header{"Ratelimit-Remaining": {"5"}, "Ratelimit-Reset": {"10"}}, politeness.Quota{Gap: 2 * s, GapFor: 10 * s}},
		{"one left is a gap, not a pause", http.Header{"X-Ratelimit-Remaining": {"1"}, "X-Ratelimit-Reset": {"10"}}, politeness.Quota{Gap: 10 * s, GapFor: 10 * s}},
		{"decimal remaining (Reddit)", http.Header{"X-Ratelimit-Remaining": {"4.0"}, "X-Ratelimit-Reset": {"10"}}, politeness.Quota{Gap: 2500 * time.Millisecond, GapFor: 10 * s}},
		{"decimal zero", http.Header{"X-Ratelimit-Remaining": {"0.0"}, "X-Ratelimit-Reset": {"12"}}, politeness.Quota{Pause: 12 * s}},
		{"a fraction left is none", http.Header{"X-Ratelimit-Remaining": {"0.5"}, "X-Ratelimit-Reset": {"12"}}, politeness.Quota{Pause: 12 * s}},
		{"white space", http.Header{"X-Ratelimit-Remaining": {" 0 "}, "X-Ratelimit-Reset": {" 7 "}}, politeness.Quota{Pause: 7 * s}},
		{"decimal reset", http.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {"1.5"}}, politeness.Quota{Pause: 1500 * time.Millisecond}},
		{"Unix seconds against Date", http.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {unix(1e9)}, "Date": {date}}, politeness.Quota{Pause: 60 * s}},
		{"Unix milliseconds against Date", http.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {unix(1e12)}, "Date": {date}}, politeness.Quota{Pause: 60 * s}},
		{"Unix seconds, low", http.Header{"X-Ratelimit-Remaining": {"3"}, "X-Ratelimit-Reset": {unix(1e9)}, "Date": {date}}, politeness.Quota{Gap: 20 * s, GapFor: 60 * s}},
		{"just below 10^9 is seconds from now", http.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {unix(1e9 - 1)}, "Date": {date}}, politeness.Quota{Pause: (1e9 - 1) * s}},
		{"just below 10^12 is Unix seconds", http.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {unix(1e12 - 1)}, "Date": {date}}, politeness.Quota{Pause: 1<<63 - 1}},
		{"Unix time without Date", http.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {unix(1e9)}}, politeness.Quota{}},
		{"Unix time in the past", http.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {unix(1e9)}, "Date": {later}}, politeness.Quota{}},
		{"Unix time now", http.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {unix(1e9 + 60)}, "Date": {later}}, politeness.Quota{}},
		{"Unix time a second on", http.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {unix(1e9 + 61)}, "Date": {later}}, politeness.Quota{Pause: s}},
		{"reset now", http.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {"0"}}, politeness.Quota{}},
		{"remaining alone", http.Header{"X-Ratelimit-Remaining": {"0"}}, politeness.Quota{}},
		{"reset alone", http.Header{"X-Ratelimit-Reset": {"30"}}, politeness.Quota{}},
		{"halves of two pairs", http.Header{"X-Ratelimit-Remaining": {"0"}, "Ratelimit-Reset": {"30"}}, politeness.Quota{}},
		{"not a number", http.Header{"X-Ratelimit-Remaining": {"none"}, "X-Ratelimit-Reset": {"30"}}, politeness.Quota{}},
		{"reset not a number", http.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {"soon"}}, politeness.Quota{}},
		{"negative remaining", http.Header{"X-Ratelimit-Remaining": {"-1"}, "X-Ratelimit-Reset": {"30"}}, politeness.Quota{}},
		{"negative reset", http.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {"-30"}}, politeness.Quota{}},
		{"NaN", http.Header{"X-Ratelimit-Remaining": {"NaN"}, "X-Ratelimit-Reset": {"30"}}, politeness.Quota{}},
		{"infinite reset", http.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {"Inf"}}, politeness.Quota{}},
		{"huge reset saturates", http.Header{"X-Ratelimit-Remaining": {"1"}, "X-Ratelimit-Reset": {"999999999"}}, politeness.Quota{Gap: 999999999 * s, GapFor: 999999999 * s}},
		{"the longer pause of two pairs", http.Header{"Ratelimit-Remaining": {"0"}, "Ratelimit-Reset": {"10"}, "X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {"40"}}, politeness.Quota{Pause: 40 * s}},
		{"the longer pause of two pairs, longer first", http.Header{"Ratelimit-Remaining": {"0"}, "Ratelimit-Reset": {"40"}, "X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {"10"}}, politeness.Quota{Pause: 40 * s}},
		{"a reset of 2^63 ns saturates", http.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {"9223372036.854775808"}, "Date": {"Thu, 01 Jan 1970 00:00:00 GMT"}}, politeness.Quota{Pause: 1<<63 - 1}},
		{"an unusable pair does not hide the other", http.Header{"Ratelimit-Remaining": {"none"}, "Ratelimit-Reset": {"30"}, "X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {"40"}}, politeness.Quota{Pause: 40 * s}},
		{"an unusable reset does not hide the other pair", http.Header{"Ratelimit-Remaining": {"0"}, "Ratelimit-Reset": {"soon"}, "X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {"40"}}, politeness.Quota{Pause: 40 * s}},
		{"the wider gap of two pairs", http.Header{"Ratelimit-Remaining": {"10"}, "Ratelimit-Reset": {"10"}, "X-Ratelimit-Remaining": {"2"}, "X-Ratelimit-Reset": {"10"}}, politeness.Quota{Gap: 5 * s, GapFor: 10 * s}},
		{"the standard fields win", http.Header{"Ratelimit": {`"d";r=50;t=30`}, "X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {"60"}}, politeness.Quota{Gap: 600 * time.Millisecond, GapFor: 30 * s}},
		{"a standard policy alone wins too", http.Header{"Ratelimit-Policy": {`"d";q=100;w=10`}, "Ratelimit-Remaining": {"0"}, "Ratelimit-Reset": {"60"}}, politeness.Quota{Gap: 100 * time.Millisecond, GapFor: 10 * s}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := politeness.ParseQuota(tt.h); got != tt.want {
				t.Errorf("ParseQuota(%v) = %+v, want %+v", tt.h, got, tt.want)
			}
		})
	}
}

func TestParseQuota_PreStandardNoAllocation(t *testing.T) {
	h := http.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {"30"}}
	if n := testing.AllocsPerRun(100, func() { politeness.ParseQuota(h) }); n != 0 {
		t.Errorf("ParseQuota allocates %v times on the pre-standard fields", n)
	}
}

// A page answered with X-RateLimit-Remaining: 0 and a reset 30 s on pauses
// the host for 30 s before the next request, as the standard field would:
// a pause, not a strike (no slow-down after it).
func TestTransport_PreStandardQuotaPauses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := quotaWeb(200, http.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {"30"}})
		tr := &politeness.Transport{Base: w, Policy: politeness.Policy{MinDelay: time.Second}}
		c := &http.Client{Transport: tr}
		for range 3 {
			mustGet(t, c, hostA+"/p")
		}
		g := gaps(w, hostA)
		want := []time.Duration{30 * time.Second, time.Second}
		if len(g) != len(want) || g[0] != want[0] || g[1] != want[1] {
			t.Fatalf("gaps = %v, want exactly %v", g, want)
		}
	})
}

func FuzzParseQuotaPreStandard(f *testing.F) {
	f.Add("0", "30", "")
	f.Add("4.0", "1000000000", "Sun, 09 Sep 2001 01:45:40 GMT")
	f.Add("1", "999999999999", "")
	f.Fuzz(func(t *testing.T, remaining, reset, date string) {
		q := politeness.ParseQuota(http.Header{"X-Ratelimit-Remaining": {remaining}, "X-Ratelimit-Reset": {reset}, "Date": {date}})
		if q.Pause < 0 || q.Gap < 0 || q.GapFor < 0 || q.Gap > q.GapFor {
			t.Errorf("ParseQuota(%q, %q, %q) = %+v", remaining, reset, date, q)
		}
	})
}
