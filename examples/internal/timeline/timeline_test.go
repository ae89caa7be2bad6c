package timeline

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestOverlapsAndHTML(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	run := Run{Title: "bot", Spans: []Span{
		{Host: "a.test", Path: "/robots.txt", Start: ms(0), End: ms(10), Status: 200},
		{Host: "a.test", Path: "/", Start: ms(20), End: ms(30), Status: 429},
		{Host: "b.test", Path: "/", Start: ms(5), End: ms(50), Status: 200},
	}, Pauses: []Pause{{Host: "a.test", Start: ms(30), Dur: 100 * time.Millisecond, Reason: "Retry-After <2s>"},
		{Host: "a.test", Start: ms(10), Dur: 10 * time.Millisecond, Reason: "wait: delay", Routine: true}}}
	if o := run.Overlaps(); len(o) != 0 {
		t.Errorf("overlaps %v", o)
	}
	var b bytes.Buffer
	if err := WriteHTML(&b, "demo", []Run{run}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"No host ever had two requests", "a.test (2)", `class="limit"`, "Retry-After &lt;2s&gt;",
		// The pause is listed with its reason under the chart, the routine gap only counted.
		"<td>a.test</td><td>+30ms</td><td>100ms</td><td>Retry-After &lt;2s&gt;</td>", "and 1 routine gap(s)"} {
		if !strings.Contains(out, want) {
			t.Errorf("html lacks %q", want)
		}
	}
	if strings.Contains(out, "<script") {
		t.Error("html has a script")
	}
	run.Spans = append(run.Spans, Span{Host: "b.test", Path: "/x", Start: ms(40), End: ms(60), Status: 200})
	if o := run.Overlaps(); len(o) != 1 || !strings.Contains(o[0], "b.test: /x started before / ended") {
		t.Errorf("overlaps %v", o)
	}
}

func TestHostOf(t *testing.T) {
	for in, want := range map[string]string{"http://A.test:80": "a.test", "a.test:8080": "a.test", "a.test": "a.test", "https://[::1]:443": "::1",
		"A.TEST.": "a.test", "a.test:080": "a.test", "a。test": "a.test", "ａ.test": "a.test", "bücher.test": "xn--bcher-kva.test",
		"http://XN--BCHER-KVA.test./": "xn--bcher-kva.test", "http://[0:0::1]:80": "::1"} {
		if got := HostOf(in); got != want {
			t.Errorf("HostOf(%q) = %q, want %q", in, got, want)
		}
	}
}

// C3 as the picture checks it: two spellings of one host are one lane, so
// requests to them that overlap are reported.
func TestOverlaps_C3_SpellingsOfOneHost(t *testing.T) {
	ms := func(n int) time.Time { return time.Unix(0, 0).Add(time.Duration(n) * time.Millisecond) }
	for _, pair := range [][2]string{{"a.test", "A.TEST."}, {"a.test", "a.test:080"}, {"a.test", "a。test"}, {"xn--bcher-kva.test", "bücher.test"}} {
		run := Run{Spans: []Span{
			{Host: pair[0], Path: "/1", Start: ms(0), End: ms(20), Status: 200},
			{Host: pair[1], Path: "/2", Start: ms(10), End: ms(30), Status: 200},
		}}
		if o := run.Overlaps(); len(o) != 1 || !strings.Contains(o[0], "/2 started before /1 ended") {
			t.Errorf("%q and %q: overlaps %q, want one", pair[0], pair[1], o)
		}
		var b strings.Builder
		if err := WriteHTML(&b, "t", []Run{run}); err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(b.String(), `class="lbl"`); n != 1 {
			t.Errorf("%q and %q: %d lanes, want 1", pair[0], pair[1], n)
		}
	}
}
