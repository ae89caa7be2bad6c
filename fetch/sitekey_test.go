package fetch_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/fetch/fetchtest"
	"github.com/goodbot-go/goodbot/politeness"
	"github.com/goodbot-go/goodbot/politeness/sitekeytest"
)

// keyParts splits a site key into its host (no brackets) and the URL that
// names the site in canonical form ("scheme://host[:port]", default port
// dropped).
func keyParts(t *testing.T, key string) (host, base string) {
	t.Helper()
	scheme, hostport, _ := strings.Cut(key, "://")
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		t.Fatalf("key %s: %v", key, err)
	}
	base = key
	if scheme == "http" && port == "80" || scheme == "https" && port == "443" {
		base = strings.TrimSuffix(key, ":"+port)
	}
	return host, base
}

// withPath returns the URL s with its path replaced by p and without user
// information (which fetch refuses).
func withPath(t *testing.T, s, p string) string {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	u.Path, u.RawPath, u.User = p, "", nil
	return u.String()
}

// subdomain returns the URL s with "sub." before its host.
func subdomain(t *testing.T, s string) string {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	u.Host = "sub." + u.Host
	return u.String()
}

// D14: a blocked domain is refused in every spelling of its name (case,
// trailing dots, zero-padded ports, the IDNA full stops, full-width
// letters, Unicode and punycode), and so are its subdomains, whichever
// spelling the block list uses. Nothing reaches the web, not even
// robots.txt.
func TestIdentity_D14_BlockedDomainEverySpelling(t *testing.T) {
	groups := sitekeytest.Spellings(t)
	tried := 0
	for key, spellings := range groups {
		host, _ := keyParts(t, key)
		_, ipErr := netip.ParseAddr(host)
		// The block list names the site in its canonical and in its last
		// listed spelling.
		last, _ := url.Parse(spellings[len(spellings)-1])
		for _, entry := range []string{host, last.Hostname()} {
			w, bot := loopback(t)
			site(w, host, "")
			bot.BlockedDomains = []string{entry}
			f := mustFetcher(t, bot)
			var urls []string
			for _, s := range spellings {
				urls = append(urls, withPath(t, s, "/page"))
				if ipErr != nil {
					urls = append(urls, subdomain(t, withPath(t, s, "/page")))
				}
			}
			for _, u := range urls {
				tried++
				p, err := f.Get(context.Background(), u)
				if p == nil || p.Outcome != fetch.BlockedDomain || !errIs(err, fetch.ErrBlockedDomain) {
					t.Errorf("block list %q: Get(%s) = %v, %v; want BlockedDomain", entry, u, p, err)
				}
			}
			if rs := w.Requests(); len(rs) != 0 {
				t.Errorf("block list %q: the web got %d requests, first %s%s", entry, len(rs), rs[0].Host, rs[0].Path)
			}
		}
	}
	if tried < 100 {
		t.Errorf("%d URLs tried, want at least 100", tried)
	}
}

// S8: with Once, every spelling of a site names the same URL: after the
// canonical spelling is fetched, every other one is a duplicate, and the
// page is requested once.
func TestState_S8_SpellingsAreOneURL(t *testing.T) {
	for key, spellings := range sitekeytest.Spellings(t) {
		t.Run(key, func(t *testing.T) {
			host, base := keyParts(t, key)
			w, bot := loopback(t)
			// The table's IPv6 site is [::1]: the in-memory web reaches it
			// without dialling, and the bot must be told it may.
			bot.AllowInternal = append(bot.AllowInternal, netip.MustParsePrefix("::1/128"))
			site(w, host, "").Handle("/page", fetchtest.HTML("page"))
			bot.Once = true
			f := mustFetcher(t, bot)
			get(t, f, base+"/page", fetch.OK)
			for _, s := range spellings {
				get(t, f, withPath(t, s, "/page"), fetch.Duplicate)
			}
			if n := w.Count(host, "/page"); n != 1 {
				t.Errorf("/page fetched %d times, want 1", n)
			}
		})
	}
}

// B8: validators are kept under the normalised URL, so a zero-padded port
// or the Unicode spelling of an IDN makes the same conditional request.
func TestState_B8_ValidatorsAcrossSpellings(t *testing.T) {
	w, bot := loopback(t)
	site(w, "a.test", "").Handle("/page", fetchtest.Page{Body: "v1", ETag: `"v1"`})
	site(w, "xn--bcher-kva.example", "").Handle("/page", fetchtest.Page{Body: "b1", ETag: `"b1"`})
	f := mustFetcher(t, bot)
	get(t, f, "http://a.test/page", fetch.OK)
	get(t, f, "http://a.test:080/page", fetch.NotModified)
	get(t, f, "http://a.test:0080/page", fetch.NotModified)
	get(t, f, "http://xn--bcher-kva.example/page", fetch.OK)
	get(t, f, "http://bücher.example/page", fetch.NotModified)
	if n := w.Count("a.test", "/page") + w.Count("xn--bcher-kva.example", "/page"); n != 5 {
		t.Errorf("%d requests, want 5", n)
	}
}

// S8: Normalize gives every spelling of a site one host, keeps the site
// key, and is idempotent.
func TestNormalize_S8_SpellingsAndIdempotence(t *testing.T) {
	for _, r := range sitekeytest.Rows(t) {
		if !r.HTTP() {
			continue
		}
		_, base := keyParts(t, r.Key)
		in := withPath(t, r.URL, "/a/./b/../p")
		got, err := fetch.Normalize(in)
		want := strings.ReplaceAll(base, "%", "%25") + "/a/p"
		if err != nil || got != want {
			t.Errorf("line %d: Normalize(%s) = %q, %v; want %q", r.Line, in, got, err, want)
			continue
		}
		u, _ := url.Parse(got)
		if k := politeness.HostKey(u); k != r.Key {
			t.Errorf("line %d: Normalize(%s) = %s has site key %s, want %s", r.Line, in, got, k, r.Key)
		}
	}
	for in, want := range map[string]string{
		"http://h.example/?a #top":        "http://h.example/?a%20",
		"http://h.example/?a%20":          "http://h.example/?a%20",
		"http://h.example/?q=caf\u00e9":   "http://h.example/?q=caf%C3%A9",
		"http://h.example/?q=\u00a0#x":    "http://h.example/?q=%C2%A0",
		"http://h.example/a%2fb?x=%7e%2f": "http://h.example/a%2Fb?x=~%2F",
	} {
		got, err := fetch.Normalize(in)
		if err != nil || got != want {
			t.Errorf("Normalize(%q) = %q, %v; want %q", in, got, err, want)
			continue
		}
		if again, err := fetch.Normalize(got); err != nil || again != got {
			t.Errorf("Normalize(Normalize(%q)) = %q, %v; want %q", in, again, err, got)
		}
	}
}

// C3, C1: concurrent fetches of one host under six spellings go through one
// politeness turn: robots.txt is read once, requests never overlap, and
// every gap is the 2 s delay.
func TestPacing_C3_SpellingsOfOneHost(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := fetchtest.New()
		defer w.Close()
		site(w, "a.test", "User-agent: *\nAllow: /\n").Fallback(fetchtest.HTML("p"))
		bot := memBot(w)
		bot.Politeness.MinDelay = 2 * time.Second
		f := mustFetcher(t, bot)
		urls := []string{"http://a.test/p0", "http://A.TEST./p1", "http://a.test:080/p2", "http://a\u3002test/p3",
			"http://\uff41.test/p4", "http://a\uff0etest./p5"}
		start := time.Now()
		out := getAll(f, urls)
		for _, u := range urls {
			if out[u] != fetch.OK {
				t.Errorf("%s: %v", u, out[u])
			}
		}
		if n, r := w.Count("a.test", ""), w.Count("a.test", "/robots.txt"); n != 7 || r != 1 {
			t.Errorf("a.test got %d requests (%d for robots.txt), want 7 (1)", n, r)
		}
		// robots.txt and six pages: six gaps of exactly 2 s.
		if d := time.Since(start); d != 12*time.Second {
			t.Errorf("took %v, want 12s", d)
		}
		w.Check(t, fetchtest.NoOverlap(), fetchtest.MinGapOn("a.test", 2*time.Second))
	})
}

// C3, D14: a request is sent to the site key's spelling of its host, so the
// connection goes to the one host that pacing, robots.txt and the block list
// count (net/http would dial a full-width or ideographic spelling as
// another name). Every spelling of the table is sent as its canonical form.
func TestIdentity_SentToTheSiteKeysHost(t *testing.T) {
	for key, spellings := range sitekeytest.Spellings(t) {
		_, base := keyParts(t, key)
		want, err := url.Parse(base)
		if err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		var sent []string
		bot := fetch.Bot{
			UserAgent:     testUA,
			Politeness:    politeness.Policy{MinDelay: -1},
			AllowInternal: []netip.Prefix{netip.MustParsePrefix("0.0.0.0/0"), netip.MustParsePrefix("::/0")},
			Transport: rtFunc(func(r *http.Request) (*http.Response, error) {
				mu.Lock()
				sent = append(sent, r.URL.Host+" "+r.Host)
				mu.Unlock()
				body := "<p>ok</p>"
				status := http.StatusOK
				if r.URL.Path == "/robots.txt" {
					status, body = http.StatusNotFound, ""
				}
				return &http.Response{StatusCode: status, Header: http.Header{"Content-Type": {"text/html"}},
					Body: io.NopCloser(strings.NewReader(body)), Request: r}, nil
			}),
		}
		f := mustFetcher(t, bot)
		for _, s := range spellings {
			get(t, f, withPath(t, s, "/page"), fetch.OK)
		}
		if len(sent) < len(spellings) {
			t.Fatalf("%s: %d requests sent for %d spellings", key, len(sent), len(spellings))
		}
		for _, s := range sent {
			host, header, _ := strings.Cut(s, " ")
			if host != want.Host || (header != "" && header != want.Host) {
				t.Errorf("%s: sent to URL host %q, Host %q; want %q", key, host, header, want.Host)
			}
		}
	}
}
