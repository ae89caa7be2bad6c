package botkit

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/fetch/fetchtest"
	"github.com/goodbot-go/goodbot/internal/syncbuf"
)

// statusWeb: a.test and c.test answer, b.test rate-limits for an hour.
func statusWeb() *fetchtest.Web {
	w := fetchtest.New()
	allow := fetchtest.Robots("User-agent: *\nAllow: /\n")
	w.Host("a.test").Handle("/robots.txt", allow).Handle("/", fetchtest.HTML("a"))
	w.Host("b.test").Handle("/robots.txt", allow).Handle("/", fetchtest.RetryAfter(429, "3600"))
	w.Host("c.test").Handle("/robots.txt", allow).Handle("/", fetchtest.HTML("c"))
	return w
}

// The status lists every host contacted, paused hosts first with their
// reason, status and end; it counts the paused hosts, as pausedHosts does.
func TestStatusOf_PausedFirst(t *testing.T) {
	w := statusWeb()
	synctest.Test(t, func(t *testing.T) {
		f := webFetcher(t, w)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		for _, u := range []string{"http://a.test/", "http://b.test/", "http://c.test/"} {
			f.Get(ctx, u, fetch.GetOptions{})
		}
		if w.Count("b.test", "/") == 0 || w.Count("a.test", "/") == 0 {
			t.Fatalf("pages not fetched: %v", w.Hosts())
		}
		now := time.Now()
		prog := &Progress{Counts: func() (int, int) { return 3, 7 }}
		prog.start = now.Add(-time.Second)
		st := statusOf("kit", f, prog, now)
		var hosts []string
		for _, h := range st.Hosts {
			hosts = append(hosts, h.Host)
		}
		if len(st.Hosts) != 3 {
			t.Fatalf("hosts %v", hosts)
		}
		if st.Bot != "kit" || st.Done != 3 || st.Queued != 7 || st.Rate != 3 || !st.Time.Equal(now) {
			t.Errorf("counters %+v", st)
		}
		b := st.Hosts[0]
		if !b.Paused || !strings.Contains(b.Host, "b.test") || b.PauseStatus != 429 || !b.PauseUntil.After(now) || b.PauseReason == "" {
			t.Errorf("first host %+v, want b.test paused (429)", b)
		}
		if !strings.Contains(st.Hosts[1].Host, "a.test") || !strings.Contains(st.Hosts[2].Host, "c.test") || st.Hosts[1].Paused || st.Hosts[2].Paused {
			t.Errorf("running hosts not in key order after the paused one: %v", hosts)
		}
		if st.Paused != 1 || pausedHosts(f, now) != 1 {
			t.Errorf("paused %d, pausedHosts %d, want 1", st.Paused, pausedHosts(f, now))
		}
		if st.Hosts[1].LastStatus != 200 || st.Hosts[1].RobotsAge == "" || st.Hosts[1].Breaker != "closed" {
			t.Errorf("a.test %+v", st.Hosts[1])
		}
		if b.SlowDown != 1 || st.Hosts[1].SlowDown != 0 {
			t.Errorf("slow-down levels b.test %d, a.test %d; want 1 after its 429, 0", b.SlowDown, st.Hosts[1].SlowDown)
		}
		// Two looks 1.5 s apart: at least one raw age is not whole seconds,
		// and both are shown to the second.
		a0, err0 := time.ParseDuration(st.Hosts[1].RobotsAge)
		time.Sleep(1500 * time.Millisecond)
		a1, err1 := time.ParseDuration(statusOf("kit", f, prog, time.Now()).Hosts[1].RobotsAge)
		if err0 != nil || err1 != nil || a0%time.Second != 0 || a1%time.Second != 0 || a1-a0 < time.Second || a1-a0 > 2*time.Second {
			t.Errorf("a.test's robots.txt age %v, then %v 1.5 s later (%v, %v); want each to the second", a0, a1, err0, err1)
		}
		if after := now.Add(2 * time.Hour); pausedHosts(f, after) != 0 {
			t.Errorf("still paused after the Retry-After")
		}
	})
}

// A host's row says which URL is in flight and since when, and how many
// requests wait for the host's turn.
func TestStatusOf_InFlightAndQueued(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{}) // made in the bubble: the handler's wait is durable
		in := make(chan time.Time, 1)  // when /slow's handler was entered
		w := fetchtest.New()
		w.Host("a.test").Handle("/robots.txt", fetchtest.Robots("User-agent: *\nAllow: /\n")).
			Handle("/slow", http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
				in <- time.Now()
				<-release
				fetchtest.HTML("slow").ServeHTTP(rw, r)
			})).
			Handle("/next", fetchtest.HTML("next"))
		f := webFetcher(t, w)
		done := make(chan struct{}, 2)
		go func() { f.Get(context.Background(), "http://a.test/slow"); done <- struct{}{} }()
		entered := <-in // /slow holds the host's turn
		go func() { f.Get(context.Background(), "http://a.test/next"); done <- struct{}{} }()
		time.Sleep(3 * time.Second)
		synctest.Wait()
		st := statusOf("kit", f, nil, time.Now())
		if len(st.Hosts) != 1 {
			t.Fatalf("hosts %+v, want a.test", st.Hosts)
		}
		h := st.Hosts[0]
		if !strings.Contains(h.InFlight, "/slow") || h.Queued != 1 || !h.InFlightSince.Equal(entered) {
			t.Errorf("a.test %+v; want /slow in flight since %v and 1 request queued", h, entered)
		}
		close(release)
		<-done
		<-done
		if w.Count("a.test", "/next") != 1 {
			t.Fatalf("/next fetched %d times, want 1", w.Count("a.test", "/next"))
		}
	})
}

// The status page says each host's state: a paused host's reason, status
// and time left; the URL in flight and for how long; the slow-down level;
// "host" or "hosts" by the count.
func TestStatusPage_ShowsEachHostsState(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		paused int
		want   string
	}{{1, "1 host paused"}, {2, "2 hosts paused"}, {0, "0 hosts paused"}} {
		st := Status{Bot: "kit", Time: now, Done: 5, Queued: 2, Paused: tt.paused, Rate: 1.5, Hosts: []HostStatus{
			{Host: "http://b.test:80", Paused: true, PauseReason: "retry-after", PauseStatus: 429, PauseUntil: now.Add(time.Hour), SlowDown: 2, Breaker: "closed"},
			{Host: "http://a.test:80", Queued: 4, InFlight: "http://a.test/x", InFlightSince: now.Add(-3 * time.Second), LastStatus: 200, Breaker: "closed", RobotsAge: "5s"},
		}}
		var b strings.Builder
		if err := statusPage.Execute(&b, st); err != nil {
			t.Fatal(err)
		}
		page := b.String()
		for _, want := range []string{
			"5 pages done · 2 queued · " + tt.want + " · 1.50 pages/s · at 12:00:00 UTC",
			`<tr class="paused" data-host="http://b.test:80">`,
			"paused: retry-after (status 429)</span> until 13:00:00 UTC (1h0m0s left)",
			"level 2",
			`<tr class="running" data-host="http://a.test:80">`,
			"<code>http://a.test/x</code> for 3s",
			`<td class="num">4</td>`,
		} {
			if !strings.Contains(page, want) {
				t.Errorf("paused=%d: the page lacks %q:\n%s", tt.paused, want, page)
			}
		}
	}
}

// Begin with -status serves the status page, its JSON and the metrics on
// the address given, and Close stops it.
func TestBegin_StatusEndpoint(t *testing.T) {
	w := statusWeb()
	var listening string
	var stderr syncbuf.Buffer
	env := Env{Stdout: io.Discard, Stderr: &stderr, Transport: w.RoundTripper(), StatusListening: func(u string) { listening = u }}
	f := &Flags{Name: "kit", State: filepath.Join(t.TempDir(), "s.db"), Status: "127.0.0.1:0"}
	s, fetcher, code, done := Begin(context.Background(), f, env, "", func(ed25519.PrivateKey) fetch.Bot { return testBot() })
	if done {
		t.Fatalf("Begin: %d: %s", code, stderr.String())
	}
	if _, err := fetcher.Get(context.Background(), "http://a.test/", fetch.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	if s.Robots == nil || s.Prog == nil || s.Prog.Paused == nil || s.Prog.Paused() != 0 {
		t.Errorf("session parts: robots %v, progress %+v", s.Robots, s.Prog)
	}
	if !strings.HasPrefix(listening, "http://127.0.0.1:") {
		t.Fatalf("status URL %q", listening)
	}
	get := func(path string) (*http.Response, string) {
		t.Helper()
		resp, err := http.Get(listening + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	resp, body := get("status.json")
	var st Status
	if err := json.Unmarshal([]byte(body), &st); err != nil || resp.StatusCode != 200 || st.Bot != "kit" || len(st.Hosts) != 1 {
		t.Errorf("status.json %d %q: %v", resp.StatusCode, body, err)
	}
	if cc := resp.Header.Get("Cache-Control"); cc != "no-store" {
		t.Errorf("status.json Cache-Control %q", cc)
	}
	resp, body = get("")
	if resp.StatusCode != 200 || !strings.Contains(body, "<h1>kit</h1>") || !strings.Contains(body, `data-host="`) ||
		!strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") || resp.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("status page %d %v:\n%s", resp.StatusCode, resp.Header, body)
	}
	resp, body = get("metrics")
	if resp.StatusCode != 200 || !strings.Contains(body, "# TYPE") {
		t.Errorf("metrics %d:\n%.300s", resp.StatusCode, body)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := http.Get(listening + "status.json"); err == nil {
		t.Error("status endpoint still serving after Close")
	}
}
