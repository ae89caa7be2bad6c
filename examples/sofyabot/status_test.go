package main

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/goodbot-go/goodbot/internal/syncbuf"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/goodbot-go/goodbot/examples/internal/botkit"
	"github.com/goodbot-go/goodbot/examples/internal/bottest"
	"github.com/goodbot-go/goodbot/examples/internal/browser"
	"github.com/goodbot-go/goodbot/examples/internal/sofya"
	"github.com/goodbot-go/goodbot/fetch/fetchtest"
)

// watchedCrawl starts sofyabot with -status 127.0.0.1:0 over loopback
// against a web where busy.test answers 429 Retry-After: 600 (the crawl
// then schedules it, with its URL queued, ten minutes later) beside a news
// site, and waits until the status shows busy.test paused. It returns the status page's URL and the web; the crawl stops at
// the end of the test.
func watchedCrawl(t *testing.T) (string, *fetchtest.Web, botkit.Status) {
	t.Helper()
	w := fetchtest.New()
	tr := w.Transport()
	news(w, "slow.test", "", 30)
	w.Host("busy.test").Handle("/robots.txt", fetchtest.Robots("")).
		Handle("/", fetchtest.RetryAfter(http.StatusTooManyRequests, "600"))

	ctx, cancel := context.WithCancel(context.Background())
	urls := make(chan string, 1)
	var stderr syncbuf.Buffer
	env := botkit.Env{Stdout: io.Discard, Stderr: &stderr, Transport: tr, Scale: 0.02,
		StatusListening: func(u string) { urls <- u }}
	done := make(chan int, 1)
	go func() {
		done <- sofya.Run(ctx, bottest.Args(t, nil, "", "-status", "127.0.0.1:0", "http://slow.test/", "http://busy.test/"), env)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Error("the bot did not stop within 30 s of its context's end")
		}
		tr.CloseIdleConnections()
		w.Close()
		if testing.Verbose() {
			t.Logf("stderr:\n%s", stderr.String())
		}
	})
	var base string
	select {
	case base = <-urls:
	case code := <-done:
		t.Fatalf("the bot exited (%d) before its status page listened:\n%s", code, stderr.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("no status page after 30 s:\n%s", stderr.String())
	}
	if !strings.HasPrefix(base, "http://127.0.0.1:") {
		t.Fatalf("status page at %s, want 127.0.0.1 only", base)
	}
	// Wait (bounded) until the crawl has met the 429.
	deadline := time.Now().Add(30 * time.Second)
	for {
		st := statusJSON(t, base)
		for _, h := range st.Hosts {
			if h.Host == "http://busy.test:80" && h.Paused {
				return base, w, st
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("busy.test not paused after 30 s: %+v", st)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func statusJSON(t *testing.T, base string) botkit.Status {
	t.Helper()
	var st botkit.Status
	if err := json.Unmarshal([]byte(httpGet(t, base+"status.json", "application/json")), &st); err != nil {
		t.Fatalf("status.json: %v", err)
	}
	return st
}

func httpGet(t *testing.T, u, wantType string) string {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), wantType) {
		t.Fatalf("GET %s: %d %s %v\n%s", u, resp.StatusCode, resp.Header.Get("Content-Type"), err, b)
	}
	return string(b)
}

// -status serves the hosts' state as JSON and HTML and the metrics for
// Prometheus, during the crawl: the paused host with its reason, status and
// end (the web's 429 plus Retry-After's 600 s), the busy host's robots.txt
// age, the requests counted per host.
func TestSofya_StatusEndpoint(t *testing.T) {
	base, w, st := watchedCrawl(t)
	var busy botkit.HostStatus
	hosts := map[string]bool{}
	for _, h := range st.Hosts {
		hosts[h.Host] = true
		if h.Host == "http://busy.test:80" {
			busy = h
		}
	}
	if !hosts["http://slow.test:80"] || st.Bot != "sofyabot" || st.Paused < 1 {
		t.Errorf("status: %+v", st)
	}
	limited := w.RequestsTo("busy.test", "/")
	if len(limited) == 0 {
		t.Fatal("busy.test / never requested")
	}
	want := limited[0].End.Add(600 * time.Second)
	if busy.PauseReason != "retry-after" || busy.PauseStatus != 429 || busy.LastStatus != 429 ||
		busy.PauseUntil.Before(want.Add(-time.Second)) || busy.PauseUntil.After(want.Add(time.Second)) {
		t.Errorf("busy.test: %+v; want paused for retry-after (429) until %v", busy, want)
	}
	if busy.RobotsAge == "" || busy.Breaker != "closed" || busy.SlowDown != 1 {
		t.Errorf("busy.test robots age %q breaker %q slow-down %d", busy.RobotsAge, busy.Breaker, busy.SlowDown)
	}

	page := httpGet(t, base, "text/html")
	for _, want := range []string{"<title>sofyabot status</title>", "http://busy.test:80", "http://slow.test:80",
		"paused: retry-after (status 429)", "pages done", "1 host paused"} {
		if !strings.Contains(page, want) {
			t.Errorf("status page lacks %q", want)
		}
	}

	metrics := httpGet(t, base+"metrics", "text/plain")
	for _, want := range []string{
		`goodbot_requests_total{host="http://busy.test:80"`,
		`goodbot_pauses_total{host="http://busy.test:80",kind="pause",otel_scope_name=`,
		`goodbot_robots_fetches_total{host="http://slow.test:80"`,
		// No goodbot_wait_duration_seconds: the crawl waits for each
		// site's turn in its schedule, so no request waits in the
		// politeness transport.
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if t.Failed() {
		t.Logf("metrics:\n%s", metrics)
	}
}

// The status page in a real browser, during a crawl: a person sees the
// hosts, and the paused one with its reason and end; the page runs no
// failing script. Set STATUS_SCREENSHOT=file.png to keep a screenshot.
func TestSofya_StatusPageInBrowser(t *testing.T) {
	b := browser.Find(t)
	base, _, _ := watchedCrawl(t)
	p := b.Load(t, base)
	if errs := p.ScriptErrors(); len(errs) > 0 {
		t.Errorf("script errors: %v", errs)
	}
	busy := rowOf(t, p.DOM, "http://busy.test:80")
	if !strings.Contains(busy, `class="paused"`) || !strings.Contains(busy, "paused: retry-after (status 429)") ||
		!strings.Contains(busy, "left)") {
		t.Errorf("busy.test row: %s", busy)
	}
	if slow := rowOf(t, p.DOM, "http://slow.test:80"); strings.Contains(slow, "paused:") {
		t.Errorf("slow.test row shows a pause: %s", slow)
	}
	if !strings.Contains(p.DOM, "pages done") || !strings.Contains(p.DOM, "1 host paused") {
		t.Errorf("no summary line in %s", p.DOM)
	}
	if shot := os.Getenv("STATUS_SCREENSHOT"); shot != "" {
		path, _ := filepath.Abs(shot)
		b.Screenshot(t, base, path, 1100, 500)
		t.Logf("screenshot: %s", path)
	}
}

// rowOf returns the table row of host in dom.
func rowOf(t *testing.T, dom, host string) string {
	t.Helper()
	i := strings.Index(dom, fmt.Sprintf(`data-host="%s"`, host))
	if i < 0 {
		t.Fatalf("host %s not listed on the page:\n%s", host, dom)
	}
	start := strings.LastIndex(dom[:i], "<tr")
	end := strings.Index(dom[i:], "</tr>")
	if start < 0 || end < 0 {
		t.Fatalf("host %s not in a table row", host)
	}
	return dom[start : i+end]
}
