package fetch_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/fetch/fetchtest"
	"github.com/goodbot-go/goodbot/signing"
)

// eventLog collects a bot's events.
type eventLog struct {
	mu  sync.Mutex
	evs []fetch.Event
}

func (l *eventLog) add(ev fetch.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.evs = append(l.evs, ev)
}

// of returns the events of kind k whose URL ends with suffix.
func (l *eventLog) of(k fetch.EventKind, suffix string) []fetch.Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []fetch.Event
	for _, ev := range l.evs {
		if ev.Kind == k && strings.HasSuffix(ev.URL, suffix) {
			out = append(out, ev)
		}
	}
	return out
}

// EventKind's String is the documented name of each kind, "" for the zero
// kind, and event(n) for any other value.
func TestEventKind_String(t *testing.T) {
	for _, tt := range []struct {
		k    fetch.EventKind
		want string
	}{
		{0, ""},
		{fetch.EventSend, "send"},
		{fetch.EventDone, "done"},
		{fetch.EventGet, "get"},
		{4, "event(4)"},
		{-1, "event(-1)"},
		{1 << 20, "event(1048576)"},
	} {
		if got := tt.k.String(); got != tt.want {
			t.Errorf("EventKind(%d).String() = %q, want %q", int(tt.k), got, tt.want)
		}
	}
}

// Event.Signed marks exactly the requests that left with a Signature
// header: all of a signing bot's (robots.txt included), none of another's.
func TestEvents_SignedMarksSignedRequests(t *testing.T) {
	for _, tt := range []struct {
		name   string
		signer *signing.Signer
	}{
		{"no signer", nil},
		{"signer", bothySigner(time.Minute)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := fetchtest.New()
				defer w.Close()
				site(w, "a.test", "")
				var log eventLog
				bot := memBot(w)
				bot.UserAgent = bothyUA
				bot.Signer = tt.signer
				bot.Events = log.add
				f := mustFetcher(t, bot)
				get(t, f, "http://a.test/", fetch.OK)
				sends := log.of(fetch.EventSend, "")
				reqs := w.Requests()
				if len(reqs) != 2 || len(sends) != len(reqs) {
					t.Fatalf("%d sends, %d requests on the web, want 2 each", len(sends), len(reqs))
				}
				for i, ev := range sends {
					signed := reqs[i].Header.Get("Signature") != ""
					if signed != (tt.signer != nil) {
						t.Fatalf("%s arrived signed %v", reqs[i].URL(), signed)
					}
					if ev.Signed != signed {
						t.Errorf("send %s: Signed %v, the request arrived signed %v", ev.URL, ev.Signed, signed)
					}
				}
			})
		})
	}
}

// EventDone comes once per EventSend: when a client's body is read to its
// end (before the caller closes it), when it is closed before its end, and
// when the request fails without an answer (Err set, Status 0). Bytes is
// what was read of the body: the whole page, or what the web handed over
// before the close.
func TestEvents_DoneOncePerSendForClientBodies(t *testing.T) {
	const size = 200 << 10
	tests := []struct {
		name    string
		path    string
		readAll bool // read the body to its end before closing it
	}{
		{name: "read to the end", path: "/big", readAll: true},
		{name: "closed before the end", path: "/big"},
		{name: "no answer", path: "/reset"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := fetchtest.New()
				defer w.Close()
				site(w, "a.test", "").Handle("/big", fetchtest.Huge(size)).Handle("/reset", fetchtest.Reset())
				var log eventLog
				bot := memBot(w)
				bot.Events = log.add
				c := mustClient(t, bot)
				resp, err := c.Get("http://a.test" + tt.path)
				if n := w.Count("a.test", tt.path); n != 1 {
					t.Fatalf("%d requests for %s, want 1", n, tt.path)
				}
				if len(log.of(fetch.EventSend, tt.path)) != 1 {
					t.Fatalf("sends %+v, want one", log.of(fetch.EventSend, tt.path))
				}
				if tt.path == "/reset" {
					if err == nil {
						resp.Body.Close()
						t.Fatal("a reset connection answered")
					}
					done := log.of(fetch.EventDone, tt.path)
					if len(done) != 1 || done[0].Err == nil || done[0].Status != 0 || !errors.Is(done[0].Err, fetchtest.ErrConnReset) {
						t.Errorf("done events %+v, want one with the reset as Err and Status 0", done)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if tt.readAll {
					b, err := io.ReadAll(resp.Body)
					if err != nil || len(b) != size {
						t.Fatalf("read %d bytes, err %v; want %d", len(b), err, size)
					}
					done := log.of(fetch.EventDone, tt.path)
					if len(done) != 1 || done[0].Bytes != size || done[0].Status != http.StatusOK {
						t.Errorf("done events at the end of the body, before Close: %+v, want one of %d bytes, status 200", done, size)
					}
				} else {
					var p [10]byte
					if _, err := io.ReadFull(resp.Body, p[:]); err != nil {
						t.Fatal(err)
					}
					if done := log.of(fetch.EventDone, tt.path); len(done) != 0 {
						t.Errorf("done events before the end or the close of the body: %+v", done)
					}
				}
				resp.Body.Close()
				synctest.Wait() // the handler has seen the close
				done := log.of(fetch.EventDone, tt.path)
				if len(done) != 1 {
					t.Fatalf("done events after Close: %+v, want one", done)
				}
				if web := w.RequestsTo("a.test", tt.path)[0].BytesWritten; done[0].Bytes != web || web == 0 {
					t.Errorf("done Bytes %d, the web handed over %d", done[0].Bytes, web)
				}
				if done[0].Err != nil || done[0].Status != http.StatusOK {
					t.Errorf("done event %+v, want status 200 and no error", done[0])
				}
			})
		})
	}
}

// EventGet names the site (Host, its site key), for a Get that fetched a
// page and for one refused before any request (robots.txt disallows it);
// a Get of a URL that does not parse is not reported (and does not stop
// the Fetcher).
func TestEvents_GetNamesTheSite(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := fetchtest.New()
		defer w.Close()
		site(w, "a.test", "User-agent: *\nDisallow: /no\n").Handle("/x", fetchtest.HTML("x"))
		var log eventLog
		bot := memBot(w)
		bot.Events = log.add
		f := mustFetcher(t, bot)
		if _, err := f.Get(context.Background(), "http://a.test/%zz"); err == nil {
			t.Fatal("Get of a URL that does not parse succeeded")
		}
		get(t, f, "http://A.test/x", fetch.OK)
		get(t, f, "http://a.test:80/no", fetch.Disallowed)
		if n, m := w.Count("a.test", "/x"), w.Count("a.test", "/no"); n != 1 || m != 0 {
			t.Fatalf("%d requests for /x, %d for /no, want 1 and 0", n, m)
		}
		gets := log.of(fetch.EventGet, "")
		if len(gets) != 2 {
			t.Fatalf("get events %+v, want two (the URL that does not parse is not reported)", gets)
		}
		for i, want := range []string{"http://A.test/x", "http://a.test:80/no"} {
			if gets[i].URL != want || gets[i].Host != "http://a.test:80" {
				t.Errorf("get event %d: URL %q, Host %q; want %q, http://a.test:80", i, gets[i].URL, gets[i].Host, want)
			}
		}
	})
}

// A nil or zero Fetcher knows no site: Hosts is nil, NextTurn the zero
// time, Refuses false.
func TestFetcher_ZeroKnowsNothing(t *testing.T) {
	for _, tt := range []struct {
		name string
		f    *fetch.Fetcher
	}{
		{"nil", nil},
		{"zero", &fetch.Fetcher{}},
	} {
		if hs := tt.f.Hosts(); hs != nil {
			t.Errorf("%s Fetcher: Hosts() = %+v, want nil", tt.name, hs)
		}
		if nt := tt.f.NextTurn("http://a.test/"); !nt.IsZero() {
			t.Errorf("%s Fetcher: NextTurn = %v, want zero", tt.name, nt)
		}
		if tt.f.Refuses("ftp://a.test/") {
			t.Errorf("%s Fetcher refuses", tt.name)
		}
	}
}

// NextTurn is the zero time for a URL that does not parse or has no host,
// even once the Fetcher knows sites; a known site's turn is not zero.
func TestFetcher_NextTurnOfBadURLs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := fetchtest.New()
		defer w.Close()
		site(w, "a.test", "")
		f := mustFetcher(t, memBot(w))
		get(t, f, "http://a.test/", fetch.OK)
		if nt := f.NextTurn("http://a.test/next"); !nt.After(time.Now()) {
			t.Fatalf("NextTurn of the site just fetched = %v, want after now (%v)", nt, time.Now())
		}
		for _, raw := range []string{"http://a.test/%zz", "::", "a.test/next", "/next", ""} {
			if nt := f.NextTurn(raw); !nt.IsZero() {
				t.Errorf("NextTurn(%q) = %v, want zero", raw, nt)
			}
		}
	})
}

// RobotsAge is the age of the robots.txt copy, and (0, false) without one.
func TestHostStatus_RobotsAge(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tt := range []struct {
		fetched time.Time
		age     time.Duration
		ok      bool
	}{
		{time.Time{}, 0, false},
		{now.Add(-90 * time.Second), 90 * time.Second, true},
		{now, 0, true},
	} {
		age, ok := fetch.HostStatus{RobotsFetched: tt.fetched}.RobotsAge(now)
		if age != tt.age || ok != tt.ok {
			t.Errorf("RobotsAge with RobotsFetched %v = %v, %v; want %v, %v", tt.fetched, age, ok, tt.age, tt.ok)
		}
	}
}
