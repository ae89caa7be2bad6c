package main

import (
	"fmt"
	"net"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/goodbot-go/goodbot/examples/internal/bottest"
	"github.com/goodbot-go/goodbot/examples/internal/profiles"
	"github.com/goodbot-go/goodbot/examples/internal/sofya"
	"github.com/goodbot-go/goodbot/fetch/fetchtest"
	"github.com/goodbot-go/goodbot/internal/testenv"
)

// news adds a site of n linked stories to w.
func news(w *fetchtest.Web, host, robots string, n int) {
	h := w.Host(host)
	h.Handle("/robots.txt", fetchtest.Robots(robots))
	var home strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&home, `<a href="/story/%d">s%d</a> <a href="/story/%d#c">again</a> `, i, i, i)
		h.Handle(fmt.Sprintf("/story/%d", i), fetchtest.HTML(fmt.Sprintf(`<a href="/">home</a><a href="/story/%d">next</a><a href="/STORY/../story/%d">same</a>`, i%n+1, i)))
	}
	home.WriteString(`<a href="/private/x">private</a> <a href="/members">members</a> <a href="/premium">premium</a> <a href="/app.js">js</a>`)
	h.Handle("/", fetchtest.HTML(home.String()))
	h.Handle("/private/x", fetchtest.HTML("private"))
	h.Handle("/members", fetchtest.LoginRequired())
	h.Handle("/premium", fetchtest.LoginRedirect("/login"))
	h.Handle("/login", fetchtest.LoginForm())
}

func args(t *testing.T, state string, extra ...string) []string {
	return bottest.Args(t, nil, state, extra...)
}

// -h documents the flags, with sane defaults.
func TestSofya_Help(t *testing.T) {
	bottest.CheckHelp(t, sofya.Run, "-max-pages", "-source")
}

// S1 S3 S4 S5 S7 S8 S9: identity, robots groups, pacing, each URL once,
// logins and paywalls skipped.
func TestSofya_S1_S3_S4_S5_S7_S8_S9_Crawl(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := fetchtest.New()
		news(w, "a.test", "User-agent: SofyaBot\nDisallow: /private/\n\nUser-agent: *\nDisallow: /\n", 4)
		news(w, "b.test", "User-agent: *\nDisallow: /private/\nCrawl-delay: 3\n", 4)
		out := bottest.Run(t, sofya.Run, w, 0, args(t, "", "http://a.test/", "http://b.test/")...)
		w.Check(t,
			fetchtest.AtLeast("a.test", 8), fetchtest.AtLeast("b.test", 8), // robots, /, 4 stories, /members, /premium
			fetchtest.UserAgent(profiles.SofyaUA),                                 // S1
			fetchtest.NotFetched("a.test", "/private/x"),                          // S3: its group, not *
			fetchtest.NotFetched("b.test", "/private/x"),                          // S3: * when it has none
			fetchtest.MinGapOn("a.test", time.Second),                             // S5
			fetchtest.MinGapOn("b.test", 3*time.Second),                           // S4
			fetchtest.NoOverlap(), fetchtest.OnlyGetHead(), fetchtest.NoCookies(), // S7
			fetchtest.NotFetched("a.test", "/app.js", "/login"), // S7, S9
		)
		if w.Count("a.test", "/story/1") != 1 || w.Count("a.test", "/") != 1 {
			t.Error("S8: a URL fetched more than once (or not at all)")
		}
		if w.Count("a.test", "/STORY/../story/1") != 0 {
			t.Error("S8: URLs not normalised")
		}
		if r, _ := out.Result("http://a.test/members"); r.Outcome != "auth_required" {
			t.Errorf("S9: 401 page: %+v", r)
		}
		if r, _ := out.Result("http://a.test/premium"); r.Outcome != "auth_required" {
			t.Errorf("S9: redirect to login: %+v", r)
		}
		// S5: at most one request a second, with jitter: every gap on a.test
		// is 1 s plus up to the profile's half second, and not all the same.
		// The floor is the promise and is exact. Above it: /private/x, which
		// robots.txt disallows, is taken at the site's turn between
		// /story/4 and /members and costs no request, but recording its
		// outcome goes through the state file's group commit (bbolt's batch
		// delay, 10 ms of fake time), so /members may start up to 10 ms
		// after the turn that ended /story/4's gap: 1.5 s plus 20 ms still
		// shows the jitter bounded.
		reqs := w.RequestsTo("a.test")
		gaps := map[time.Duration]bool{}
		for i := 1; i < len(reqs); i++ {
			gap := reqs[i].Start.Sub(reqs[i-1].End)
			if gap < time.Second || gap > 1520*time.Millisecond {
				t.Errorf("S5: gap before %s was %v, want 1s to 1.5s (+20 ms)", reqs[i].Path, gap)
			}
			gaps[gap] = true
		}
		if len(gaps) < 2 {
			t.Errorf("S5: no jitter in the gaps %v", gaps)
		}
	})
}

// S6: 429, 503 and 509 slow the whole site down; Retry-After honoured.
func TestSofya_S6_RateLimitSlowsSite(t *testing.T) {
	for _, code := range []int{429, 503, 509} {
		t.Run(fmt.Sprint(code), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := fetchtest.New()
				news(w, "a.test", "User-agent: *\nAllow: /\n", 5)
				w.Host("a.test").Handle("/story/2", fetchtest.Sequence(fetchtest.RetryAfter(code, "20"), fetchtest.HTML("s2")))
				bottest.Run(t, sofya.Run, w, 0, args(t, "", "http://a.test/")...)
				w.Check(t, fetchtest.HonoursRetryAfter(), fetchtest.NoOverlap())
				reqs := w.RequestsTo("a.test")
				slowedSeen := false
				for i, r := range reqs {
					if r.Status == code && i+2 < len(reqs) {
						slowedSeen = true
						if gap := reqs[i+2].Start.Sub(reqs[i+1].End); gap < 2*time.Second {
							t.Errorf("S6: after %d the site was not slowed: gap %v", code, gap)
						}
					}
				}
				if !slowedSeen {
					t.Errorf("S6: no %d answer followed by two more requests to check the slow-down (%d requests)", code, len(reqs))
				}
			})
		})
	}
}

// S8: each URL once, across runs too (the fetched set is in the state file);
// S10: robots.txt changes picked up within 24 hours.
func TestSofya_S8_OnceAcrossRuns_S10(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := fetchtest.New()
		news(w, "a.test", "User-agent: *\nAllow: /\n", 3)
		state := bottest.StatePath(t)
		bottest.Run(t, sofya.Run, w, 0, args(t, state, "http://a.test/")...)
		if w.Count("a.test", "/story/1") != 1 {
			t.Fatal("S8: the first run did not fetch /story/1")
		}
		w.Reset()
		time.Sleep(time.Hour)
		out := bottest.Run(t, sofya.Run, w, 0, args(t, state, "http://a.test/", "http://a.test/story/1")...)
		if n := len(w.Requests()); n != 0 {
			t.Errorf("S8: %d requests on a second run over fetched URLs", n)
		}
		if r, _ := out.Result("http://a.test/"); r.Outcome != "duplicate" {
			t.Errorf("S8: %+v", r)
		}
		time.Sleep(24 * time.Hour)
		w.Host("a.test").Handle("/robots.txt", fetchtest.Robots("User-agent: SofyaBot\nDisallow: /new\n"))
		w.Host("a.test").Handle("/new", fetchtest.HTML("new"))
		out = bottest.Run(t, sofya.Run, w, 0, args(t, state, "http://a.test/new")...)
		if w.Count("a.test", "/robots.txt") != 1 || w.Count("a.test", "/new") != 0 {
			t.Errorf("S10: robots.txt change not picked up after 24 h")
		}
		if r, _ := out.Result("http://a.test/new"); r.Outcome != "disallowed" {
			t.Errorf("S10: %+v", r)
		}
	})
}

// S11: throughput grows with the number of hosts while each host stays
// within its limits.
func TestSofya_S11_ThroughputGrowsWithHosts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		elapsed := func(hosts int) (time.Duration, int) {
			w := fetchtest.New()
			var urls []string
			for i := range hosts {
				h := fmt.Sprintf("h%d.test", i)
				news(w, h, "User-agent: *\nAllow: /\n", 5)
				urls = append(urls, "http://"+h+"/")
			}
			start := time.Now()
			bottest.Run(t, sofya.Run, w, 0, args(t, "", urls...)...)
			w.Check(t, fetchtest.MinGap(time.Second), fetchtest.NoOverlap())
			return time.Since(start), len(w.Requests())
		}
		t1, n1 := elapsed(1)
		t8, n8 := elapsed(8)
		// The same work on every host (robots, /, 5 stories, /private/x,
		// /members, /premium: the login page is not followed), or the rates
		// compare nothing.
		if n1 != 10 || n8 != 8*n1 || t1 <= 0 {
			t.Fatalf("S11: 1 host: %d requests in %v, 8 hosts: %d requests; want 10 and 80", n1, t1, n8)
		}
		rate1 := float64(n1) / t1.Seconds()
		rate8 := float64(n8) / t8.Seconds()
		if rate8 < 5*rate1 {
			t.Errorf("S11: 1 host %d req in %v (%.2f/s); 8 hosts %d req in %v (%.2f/s): want ~8x", n1, t1, rate1, n8, t8, rate8)
		}
	})
}

// S2: outgoing connections are bound to the configured source address.
func TestSofya_S2_SourceAddress(t *testing.T) {
	if ln, err := net.Listen("tcp", "127.0.0.2:0"); err != nil {
		testenv.Missing(t, "cannot bind 127.0.0.2 here: %v", err) // loopback is 127.0.0.1 only on some systems
	} else {
		ln.Close()
	}
	w := fetchtest.New()
	addr := w.Start()
	defer w.Close()
	host, _, _ := net.SplitHostPort(addr)
	w.Host(host).Handle("/robots.txt", fetchtest.Robots("User-agent: *\nAllow: /\n"))
	w.Host(host).Handle("/", fetchtest.HTML("home"))
	bottest.RunScaled(t, sofya.Run, nil, 0.01, 0, args(t, "", "-source", "127.0.0.2", "-allow-internal", "127.0.0.0/8", "http://"+addr+"/")...)
	reqs := w.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	for _, r := range reqs {
		if h, _, _ := net.SplitHostPort(r.RemoteAddr); h != "127.0.0.2" {
			t.Errorf("S2: %s came from %s, want 127.0.0.2", r.Path, r.RemoteAddr)
		}
	}
	if out := bottest.RunWith(t, sofya.Run, nil, 1, "-source", "not-an-ip", "http://"+addr+"/"); !strings.Contains(out.Stderr, `-source "not-an-ip" is not an IP address`) {
		t.Errorf("bad -source: no clear message:\n%s", out.Stderr)
	}
}

// Bad input and interrupted runs: the documented exit status (1 could not
// run, 3 some work failed), one clear line, the rest of the work done.
func TestSofya_ExitStatus(t *testing.T) {
	bottest.CheckExitStatus(t, sofya.Run, nil, bottest.CrawlCases("-out"))
}
