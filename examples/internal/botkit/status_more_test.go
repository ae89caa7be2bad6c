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
		bot := testBot()
		bot.Transport = w.RoundTripper()
		f, err := fetch.NewFetcher(bot)
		if err != nil {
			t.Fatal(err)
		}
		defer f.CloseIdleConnections()
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
		if after := now.Add(2 * time.Hour); pausedHosts(f, after) != 0 {
			t.Errorf("still paused after the Retry-After")
		}
	})
}

// Begin with -status serves the status page, its JSON and the metrics on
// the address given, and Close stops it.
func TestBegin_StatusEndpoint(t *testing.T) {
	w := statusWeb()
	var listening string
	var stderr syncbuf.Buffer
	env := Env{Stdout: io.Discard, Stderr: &stderr, Transport: w.RoundTripper(), StatusListening: func(u string) { listening = u }}
	f := &Flags{Name: "kit", State: filepath.Join(t.TempDir(), "s.db"), Status: "127.0.0.1:0"}
	s, fetcher, code, done := Begin(f, env, "", func(ed25519.PrivateKey) fetch.Bot { return testBot() })
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
