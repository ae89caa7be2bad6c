package fetch_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/fetch/fetchtest"
	"github.com/goodbot-go/goodbot/politeness"
)

func hostOf(t *testing.T, hs []fetch.HostStatus, key string) fetch.HostStatus {
	t.Helper()
	for _, h := range hs {
		if h.Host == key {
			return h
		}
	}
	t.Fatalf("no host %s in %+v", key, hs)
	return fetch.HostStatus{}
}

// The inspector, in fake time: a host that answered 429 Retry-After shows
// the reason and the exact end of the pause; a slow host shows the URL in
// flight and the requests queued behind it; both show their robots.txt age.
func TestHosts_PausedQueuedInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := fetchtest.New()
		defer w.Close()
		site(w, "paused.test", "").Handle("/", fetchtest.RetryAfter(http.StatusTooManyRequests, "120"))
		site(w, "slow.test", "").Fallback(fetchtest.Slow(10*time.Second, fetchtest.HTML("slow")))
		bot := memBot(w)
		bot.Politeness = politeness.Policy{MinDelay: 2 * time.Second, MaxRetryAfter: time.Hour}
		f := mustFetcher(t, bot)
		if hs := f.Hosts(); len(hs) != 0 {
			t.Fatalf("hosts before any request: %+v", hs)
		}
		start := time.Now()
		var wg sync.WaitGroup
		wg.Go(func() { get(t, f, "http://paused.test/", fetch.RateLimited) })
		for _, p := range pages("slow.test", 4) {
			wg.Go(func() { _, _ = f.Get(context.Background(), p) })
		}
		// robots.txt at start, the first page 2 s later, still in flight 3 s later.
		time.Sleep(5 * time.Second)
		synctest.Wait()
		if n := len(w.Requests()); n != 4 {
			t.Fatalf("%d requests reached the web, want 4 (two robots.txt, two pages)", n)
		}
		hs := f.Hosts()
		if len(hs) != 2 {
			t.Fatalf("Hosts() = %+v, want two sites", hs)
		}

		p := hostOf(t, hs, "http://paused.test:80")
		answered := w.RequestsTo("paused.test", "/")[0].Start
		reason, until, paused := p.Paused(time.Now())
		if !paused || reason != "retry-after" || !until.Equal(answered.Add(120*time.Second)) || p.PauseStatus != 429 {
			t.Errorf("paused.test: paused %v reason %q status %d until +%v; want retry-after 429 until 120 s after the answer",
				paused, reason, p.PauseStatus, until.Sub(answered))
		}
		if p.LastStatus != 429 || p.Queued != 0 || p.InFlight != "" || p.State.Slow != 1 {
			t.Errorf("paused.test: %+v", p.HostStatus)
		}

		s := hostOf(t, hs, "http://slow.test:80")
		if s.Queued != 3 || s.InFlight == "" || !s.InFlightSince.Equal(start.Add(2*time.Second)) {
			t.Errorf("slow.test: queued %d, in flight %q since +%v; want 3 queued, one in flight since +2s",
				s.Queued, s.InFlight, s.InFlightSince.Sub(start))
		}
		if got := w.RequestsTo("slow.test", "/p0", "/p1", "/p2", "/p3"); len(got) != 1 || "http://"+got[0].URL() != s.InFlight {
			t.Errorf("in flight %q, web saw %v", s.InFlight, got)
		}
		for _, h := range hs {
			if age, ok := h.RobotsAge(time.Now()); !ok || age != 5*time.Second {
				t.Errorf("%s: robots.txt age %v %v, want 5s", h.Host, age, ok)
			}
		}
		if _, _, paused := s.Paused(time.Now()); paused {
			t.Errorf("slow.test paused")
		}
		wg.Wait()
		s = hostOf(t, f.Hosts(), "http://slow.test:80")
		if s.Queued != 0 || s.InFlight != "" || s.LastStatus != 200 {
			t.Errorf("slow.test after the crawl: %+v", s.HostStatus)
		}
	})
}

// Events reports every request the web received (robots.txt marked as
// such), each request's end with its status and bytes, and every Get.
func TestEvents_MatchTheWeb(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := fetchtest.New()
		defer w.Close()
		site(w, "a.test", "User-agent: *\nDisallow: /no\n").Fallback(fetchtest.HTML("<p>page</p>"))
		site(w, "b.test", "").Handle("/limited", fetchtest.RetryAfter(http.StatusTooManyRequests, "5"))
		var mu sync.Mutex
		var evs []fetch.Event
		bot := memBot(w)
		bot.Events = func(ev fetch.Event) {
			mu.Lock()
			evs = append(evs, ev)
			mu.Unlock()
		}
		f := mustFetcher(t, bot)
		want := map[string]fetch.Outcome{
			"http://a.test/":        fetch.OK,
			"http://a.test/x":       fetch.OK,
			"http://a.test/no":      fetch.Disallowed,
			"http://b.test/limited": fetch.RateLimited,
			"http://b.test/":        fetch.OK,
		}
		for _, u := range []string{"http://a.test/", "http://a.test/x", "http://a.test/no", "http://b.test/limited", "http://b.test/"} {
			get(t, f, u, want[u])
		}
		reqs := w.Requests()
		if len(reqs) != 6 {
			t.Fatalf("web saw %d requests, want 6", len(reqs))
		}
		sends, robotsSends := map[string]int{}, 0
		gets := map[string]fetch.Outcome{}
		var bytesDone, bytesWeb int64
		done := 0
		for _, ev := range evs {
			switch ev.Kind {
			case fetch.EventSend:
				sends[ev.Host]++
				if ev.Robots {
					robotsSends++
				}
			case fetch.EventDone:
				done++
				bytesDone += ev.Bytes
			case fetch.EventGet:
				gets[ev.URL] = ev.Outcome
			}
		}
		for _, r := range reqs {
			bytesWeb += r.BytesWritten
		}
		if sends["http://a.test:80"] != w.Count("a.test", "") || sends["http://b.test:80"] != w.Count("b.test", "") {
			t.Errorf("sends %v, web a.test %d b.test %d", sends, w.Count("a.test", ""), w.Count("b.test", ""))
		}
		if robotsSends != w.Count("a.test", "/robots.txt")+w.Count("b.test", "/robots.txt") || robotsSends != 2 {
			t.Errorf("robots sends %d, want 2", robotsSends)
		}
		if done != len(reqs) || bytesDone != bytesWeb {
			t.Errorf("done %d (%d bytes), web %d requests (%d bytes)", done, bytesDone, len(reqs), bytesWeb)
		}
		if len(gets) != len(want) {
			t.Errorf("gets %v", gets)
		}
		for u, o := range want {
			if gets[u] != o {
				t.Errorf("get %s: event outcome %v, want %v", u, gets[u], o)
			}
		}
	})
}
