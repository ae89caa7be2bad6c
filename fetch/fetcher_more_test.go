package fetch_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"slices"
	"sync"
	"testing"
	"testing/iotest"
	"testing/synctest"
	"time"

	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/fetch/fetchtest"
	"github.com/goodbot-go/goodbot/politeness"
)

// recordingSet is a MemorySet that records every key added to it, and
// fails every Add with addErr when that is set.
type recordingSet struct {
	fetch.MemorySet
	addErr error

	mu   sync.Mutex
	adds []string
}

func (s *recordingSet) Add(ctx context.Context, url string) (bool, error) {
	s.mu.Lock()
	s.adds = append(s.adds, url)
	s.mu.Unlock()
	if s.addErr != nil {
		return false, s.addErr
	}
	return s.MemorySet.Add(ctx, url)
}

func (s *recordingSet) added() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.adds)
}

// recordingValidators is a MemoryValidators that records the URL of every
// Save.
type recordingValidators struct {
	fetch.MemoryValidators

	mu    sync.Mutex
	saves []string
}

func (s *recordingValidators) Save(ctx context.Context, url string, v fetch.Validator) error {
	s.mu.Lock()
	s.saves = append(s.saves, url)
	s.mu.Unlock()
	return s.MemoryValidators.Save(ctx, url, v)
}

func (s *recordingValidators) saved() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.saves)
}

// A zero Fetcher has no client and no robots cache (both nil, no panic),
// and closing its idle connections does nothing.
func TestFetcher_ZeroHasNoClientNorRobots(t *testing.T) {
	var f fetch.Fetcher
	if c := f.Client(); c != nil {
		t.Errorf("zero Fetcher: Client() = %v, want nil", c)
	}
	if r := f.Robots(); r != nil {
		t.Errorf("zero Fetcher: Robots() = %v, want nil", r)
	}
	f.CloseIdleConnections()
}

// A Get that cannot be made at all (a URL that parses but is not absolute
// http(s), a User-Agent placeholder without a value, a fetched set that
// fails under Once) returns no page and sends nothing, robots.txt
// included.
func TestFetcher_GetThatCannotBeMadeHasNoPage(t *testing.T) {
	setErr := errors.New("set down")
	for _, tt := range []struct {
		name string
		bot  func(*fetch.Bot)
		url  string
		want error
	}{
		{"not http(s)", func(*fetch.Bot) {}, "ftp://a.test/p", fetch.ErrBadURL},
		{"relative", func(*fetch.Bot) {}, "/p", fetch.ErrBadURL},
		{"placeholder without a value", func(b *fetch.Bot) { b.Token = "TestBot"; b.UserAgent = "TestBot/1.0 ({dir})" },
			"http://a.test/p", fetch.ErrUserAgent},
		{"fetched set fails", func(b *fetch.Bot) { b.Once = true; b.Fetched = &recordingSet{addErr: setErr} },
			"http://a.test/p", setErr},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w, bot := loopback(t)
			site(w, "a.test", "").Handle("/p", fetchtest.HTML("p"))
			tt.bot(&bot)
			f := mustFetcher(t, bot)
			p, err := f.Get(context.Background(), tt.url)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Get(%s): err %v, want %v", tt.url, err, tt.want)
			}
			if p != nil {
				t.Errorf("Get(%s): page %+v, want nil", tt.url, p)
			}
			if rs := w.Requests(); len(rs) != 0 {
				t.Errorf("Get(%s) sent %d requests (first %s), want none", tt.url, len(rs), rs[0].URL())
			}
		})
	}
}

// An empty non-nil Politeness.RateLimitStatuses limits nothing, as it does
// for the pacing: 429 is an ordinary answer (OK, check Page.Status) and 503
// one more 5xx (Unreachable), never RateLimited.
func TestFetcher_EmptyRateLimitStatusesLimitNothing(t *testing.T) {
	w, bot := loopback(t)
	site(w, "a.test", "").
		Handle("/busy", fetchtest.Status(http.StatusTooManyRequests)).
		Handle("/down", fetchtest.Status(http.StatusServiceUnavailable))
	bot.Politeness.RateLimitStatuses = []int{}
	f := mustFetcher(t, bot)
	for _, tt := range []struct {
		path   string
		status int
		want   fetch.Outcome
	}{
		{"/busy", http.StatusTooManyRequests, fetch.OK},
		{"/down", http.StatusServiceUnavailable, fetch.Unreachable},
	} {
		p := get(t, f, "http://a.test"+tt.path, tt.want)
		if n := w.Count("a.test", tt.path); n != 1 {
			t.Fatalf("%s: %d requests, want 1", tt.path, n)
		}
		if p.Status != tt.status {
			t.Errorf("%s: status %d, want %d", tt.path, p.Status, tt.status)
		}
	}
}

// S8: with Once, a Get that is redirected marks the URL it ended at too: a
// later Get of that URL is a Duplicate, and the page is asked for once.
func TestOnce_RedirectMarksTheFinalURL(t *testing.T) {
	w, bot := loopback(t)
	site(w, "a.test", "").
		Handle("/old", fetchtest.Redirect("/new", 0)).
		Handle("/new", fetchtest.HTML("new"))
	bot.Once = true
	f := mustFetcher(t, bot)
	p := get(t, f, "http://a.test/old", fetch.OK)
	if n := w.Count("a.test", "/new"); n != 1 {
		t.Fatalf("/new: %d requests after the redirect, want 1", n)
	}
	if p.FinalURL != "http://a.test/new" {
		t.Errorf("FinalURL %q, want http://a.test/new", p.FinalURL)
	}
	get(t, f, "http://A.test/new", fetch.Duplicate)
	if n := w.Count("a.test", "/new"); n != 1 {
		t.Errorf("/new: %d requests, want 1 (the redirect's)", n)
	}
}

// S8: with Once, a URL that got no answer (refused by robots.txt, by a
// Deny word on a redirect hop: both Disallowed) marks only the key of the URL asked for:
// no empty key and no hop that was never fetched reaches the set, so a
// direct Get of the refused hop is refused again, not a Duplicate.
func TestOnce_NoAnswerMarksOnlyTheURLAskedFor(t *testing.T) {
	w, bot := loopback(t)
	site(w, "a.test", "User-agent: *\nDisallow: /no\n").
		Handle("/moved", fetchtest.Redirect("/cart", 0))
	set := &recordingSet{}
	bot.Once = true
	bot.Fetched = set
	f := mustFetcher(t, bot)
	get(t, f, "http://a.test/no", fetch.Disallowed)
	get(t, f, "http://a.test/moved", fetch.Disallowed)
	if n := w.Count("a.test", "/moved"); n != 1 {
		t.Fatalf("/moved: %d requests, want 1", n)
	}
	get(t, f, "http://a.test/cart", fetch.Disallowed)
	want := []string{"http://a.test/no", "http://a.test/moved", "http://a.test/cart"}
	if got := set.added(); !slices.Equal(got, want) {
		t.Errorf("keys added to the fetched set: %q, want %q", got, want)
	}
}

// A Get whose context ends while it waits for the host's gap ends as a
// fetch the caller's context ended (Timeout, for a deadline as for a
// cancel), not as a politeness give-up, and sends nothing.
func TestFetcher_ContextEndsDuringTheWait(t *testing.T) {
	for _, tt := range []struct {
		name string
		ctx  func() (context.Context, context.CancelFunc)
		want fetch.Outcome
	}{
		{"deadline", func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 100*time.Millisecond)
		}, fetch.Timeout},
		{"cancel", func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(100*time.Millisecond, cancel)
			return ctx, cancel
		}, fetch.Timeout},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := fetchtest.New()
				defer w.Close()
				site(w, "a.test", "").Fallback(fetchtest.HTML("p"))
				f := mustFetcher(t, memBot(w))
				get(t, f, "http://a.test/first", fetch.OK)
				if n := w.Count("a.test", "/first"); n != 1 {
					t.Fatalf("/first: %d requests, want 1", n)
				}
				ctx, cancel := tt.ctx()
				defer cancel()
				getCtx(t, ctx, f, "http://a.test/second", tt.want)
				if n := w.Count("a.test", "/second"); n != 0 {
					t.Errorf("/second: %d requests, want none", n)
				}
			})
		})
	}
}

// A page's FinalURL is the URL its answer came from as net/url writes it:
// without a redirect that is the URL asked for, in that spelling when it
// is already its own normal form, and in net/url's (scheme lowered, bytes
// escaped) when it is not; Page.URL stays as given.
func TestFetcher_FinalURLWithoutRedirect(t *testing.T) {
	w, bot := loopback(t)
	site(w, "a.test", "").Fallback(fetchtest.HTML("p"))
	f := mustFetcher(t, bot)
	for _, tt := range []struct{ url, path, want string }{
		{"http://a.test/p", "/p", "http://a.test/p"},
		{"HTTP://a.test/q", "/q", "http://a.test/q"},
		{"http://a.test/a b", "/a b", "http://a.test/a%20b"},
	} {
		p := get(t, f, tt.url, fetch.OK)
		if n := w.Count("a.test", tt.path); n != 1 {
			t.Fatalf("%s: %d requests for %q, want 1", tt.url, n, tt.path)
		}
		if p.URL != tt.url || p.FinalURL != tt.want {
			t.Errorf("%s: URL %q, FinalURL %q; want %q, %q", tt.url, p.URL, p.FinalURL, tt.url, tt.want)
		}
	}
}

// B8: validators are saved from 2xx answers only (200 to 299, not 300 or
// 404), only when the answer has some (no write of nothing), and under the
// URL the answer came from: after a redirect that is the target, whose own
// Get then sends them, not the URL asked for.
func TestFetcher_ValidatorsSavedFor2xxUnderTheFinalURL(t *testing.T) {
	w, bot := loopback(t)
	site(w, "a.test", "").
		Handle("/ok", fetchtest.Page{Body: "ok", ETag: `"ok"`}).
		Handle("/last", fetchtest.Page{Body: "last", ETag: `"last"`, Status: 299}).
		Handle("/choices", fetchtest.Page{Body: "choices", ETag: `"choices"`, Status: http.StatusMultipleChoices}).
		Handle("/gone", fetchtest.Page{Body: "gone", ETag: `"gone"`, Status: http.StatusNotFound}).
		Handle("/plain", fetchtest.HTML("plain")).
		Handle("/moved", fetchtest.Redirect("/target", 0)).
		Handle("/target", fetchtest.Page{Body: "target", ETag: `"target"`})
	store := &recordingValidators{}
	bot.Validators = store
	f := mustFetcher(t, bot)
	for _, path := range []string{"/ok", "/last", "/choices", "/gone", "/plain", "/moved"} {
		get(t, f, "http://a.test"+path, fetch.OK)
	}
	if n := len(w.RequestsTo("a.test")); n != 8 {
		t.Fatalf("%d requests, want 8 (robots.txt, 6 pages, the redirect's target)", n)
	}
	want := []string{"http://a.test/ok", "http://a.test/last", "http://a.test/target"}
	if got := store.saved(); !slices.Equal(got, want) {
		t.Errorf("validators saved for %q, want %q", got, want)
	}
	get(t, f, "http://a.test/target", fetch.NotModified)
	get(t, f, "http://a.test/moved", fetch.OK)
	rs := w.RequestsTo("a.test", "/target", "/moved")
	if len(rs) != 5 {
		t.Fatalf("%d requests for /moved and /target, want 5", len(rs))
	}
	for i, want := range []string{"", "", `"target"`, "", ""} {
		if got := rs[i].Header.Get("If-None-Match"); got != want {
			t.Errorf("request %d (%s): If-None-Match %q, want %q", i, rs[i].URL(), got, want)
		}
	}
}

// A Get that fails below the Fetcher keeps the URL asked for as the page's
// FinalURL, and its error is an [*fetch.Error]: a new one naming the URL for
// an error that is not one (a body that breaks off), the chain's for a
// connection reset, the transport's own as it came for one that is one
// (here without a URL). Each case is on its own host, so that no host-down
// pause of one shows in another.
func TestFetcher_FailureNamesTheURL(t *testing.T) {
	w := fetchtest.New()
	defer w.Close()
	site(w, "a.test", "").Handle("/reset", fetchtest.Reset())
	site(w, "b.test", "").Handle("/broken", fetchtest.HTML("<p>broken"))
	site(w, "c.test", "")
	mem := w.RoundTripper()
	var sent []string // the Fetcher's Gets run one at a time
	base := rtFunc(func(r *http.Request) (*http.Response, error) {
		sent = append(sent, r.URL.String())
		if r.URL.Path == "/bare" {
			return nil, &fetch.Error{Outcome: fetch.Unreachable, Err: errors.New("bare")}
		}
		resp, err := mem.RoundTrip(r)
		if err == nil && r.URL.Path == "/broken" {
			resp.ContentLength = -1
			resp.Body = struct {
				io.Reader
				io.Closer
			}{io.MultiReader(resp.Body, iotest.ErrReader(errors.New("broken off"))), resp.Body}
		}
		return resp, err
	})
	f := mustFetcher(t, fetch.Bot{UserAgent: testUA, Transport: base, Politeness: politeness.Policy{MinDelay: -1}})
	for _, tt := range []struct{ url, errURL string }{
		{"http://a.test/reset", "http://a.test/reset"},
		{"http://b.test/broken", "http://b.test/broken"},
		{"http://c.test/bare", ""},
	} {
		p, err := f.Get(context.Background(), tt.url)
		if !slices.Contains(sent, tt.url) {
			t.Fatalf("%s: no request reached the transport (sent %q)", tt.url, sent)
		}
		if p == nil || p.Outcome != fetch.Unreachable {
			t.Fatalf("%s: page %+v (err %v), want outcome Unreachable", tt.url, p, err)
		}
		if p.FinalURL != tt.url {
			t.Errorf("%s: FinalURL %q, want %q", tt.url, p.FinalURL, tt.url)
		}
		if fe := (*fetch.Error)(nil); !errors.As(err, &fe) || fe.URL != tt.errURL {
			t.Errorf("%s: error %#v, want an *fetch.Error with URL %q", tt.url, err, tt.errURL)
		}
	}
}

// H7, B10: the page budget (Bot.MaxPagesPerSite) is per site as site keys
// compare: the host in any case is one site, another port or scheme is
// another.
func TestFetcher_PageBudgetSiteKey(t *testing.T) {
	for _, tt := range []struct {
		name          string
		first, second string
		want          fetch.Outcome
		sent          int // requests for the second page
	}{
		{"host in another case", "http://a.test/1", "http://A.TEST/2", fetch.GaveUp, 0},
		{"another port", "http://a.test/1", "http://a.test:8080/2", fetch.OK, 1},
		{"another scheme", "http://a.test/1", "https://a.test/2", fetch.OK, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w, bot := loopback(t)
			site(w, "a.test", "").Fallback(fetchtest.HTML("p"))
			bot.MaxPagesPerSite = 1
			f := mustFetcher(t, bot)
			get(t, f, tt.first, fetch.OK)
			if n := w.Count("a.test", "/1"); n != 1 {
				t.Fatalf("%s: %d requests, want 1", tt.first, n)
			}
			get(t, f, tt.second, tt.want)
			if n := w.Count("a.test", "/2"); n != tt.sent {
				t.Errorf("%s: %d requests, want %d", tt.second, n, tt.sent)
			}
		})
	}
}
