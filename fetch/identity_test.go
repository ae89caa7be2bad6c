package fetch_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"

	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/fetch/fetchtest"
	"github.com/goodbot-go/goodbot/politeness"
	"github.com/goodbot-go/goodbot/signing"
)

// B1, H1, S1: the User-Agent is sent exactly as configured, on robots.txt
// fetches and pages alike, with From when set; H1: robots token HootyBot.
func TestIdentity_B1_H1_S1_ExactUserAgentAndFrom(t *testing.T) {
	tests := []struct {
		name, ua, token, from string
	}{
		{"B1 BothyBot", "BothyBot/1.0 (+https://bothy.tools/bot)", "", ""},
		{"H1 HootyBot", "Mozilla/5.0 (compatible; HootyBot/1.0; +https://hooty.to/bot)", "HootyBot", "bot@hooty.to"},
		{"S1 SofyaBot", "SofyaBot/1.0 (+https://sofya.co/bot)", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, bot := loopback(t)
			site(w, "a.test", "User-agent: HootyBot\nDisallow: /hooty\n\nUser-agent: *\nDisallow: /all\n").
				Handle("/hooty", fetchtest.HTML("h"))
			bot.UserAgent, bot.Token, bot.From = tt.ua, tt.token, tt.from
			f := mustFetcher(t, bot)
			get(t, f, "http://a.test/", fetch.OK)
			want := fetch.OK
			if tt.token == "HootyBot" {
				want = fetch.Disallowed
			}
			get(t, f, "http://a.test/hooty", want)
			w.Check(t, fetchtest.UserAgent(tt.ua))
			if tt.from != "" {
				w.Check(t, fetchtest.From(tt.from))
			}
			for _, r := range w.Requests() {
				if tt.from == "" && len(r.Header.Values("From")) != 0 {
					t.Errorf("From sent: %q", r.Header.Values("From"))
				}
			}
		})
	}
}

// H1: a browser-style User-Agent needs its robots token spelled out.
func TestIdentity_H1_MozillaNeedsToken(t *testing.T) {
	_, err := fetch.New(fetch.Bot{UserAgent: "Mozilla/5.0 (compatible; HootyBot/1.0)"})
	if !errors.Is(err, fetch.ErrUserAgent) {
		t.Fatalf("err = %v, want ErrUserAgent", err)
	}
	if _, err := fetch.New(fetch.Bot{}); !errors.Is(err, fetch.ErrUserAgent) {
		t.Fatalf("empty UA: err = %v", err)
	}
}

const directoriesUA = "DirectoriesBot/1.0 (+https://directories.prosvita.io/bot; verification for {directory})"

// D1: the last User-Agent field is set per request to the directory whose
// listing is checked; CR, LF and other control characters, and characters
// that would break out of the field, are refused.
func TestIdentity_D1_TemplatedUserAgent(t *testing.T) {
	w, bot := loopback(t)
	site(w, "a.test", "")
	bot.UserAgent = directoriesUA
	f := mustFetcher(t, bot)

	for _, dir := range []string{"one.example", "two.example"} {
		ctx, err := fetch.WithUserAgentVar(context.Background(), "directory", dir)
		if err != nil {
			t.Fatal(err)
		}
		getCtx(t, ctx, f, "http://a.test/", fetch.OK)
		want := strings.Replace(directoriesUA, "{directory}", dir, 1)
		if got := w.Requests()[len(w.Requests())-1].Header.Get("User-Agent"); got != want {
			t.Errorf("UA %q, want %q", got, want)
		}
	}
	// robots.txt was fetched under the first directory's User-Agent.
	if got := w.RequestsTo("a.test", "/robots.txt")[0].Header.Get("User-Agent"); !strings.HasSuffix(got, "verification for one.example)") {
		t.Errorf("robots.txt UA %q", got)
	}

	for _, bad := range []string{"evil.example\r\nX-Injected: 1", "a\nb", "a\x00b", "x) Googlebot/2.1 (", "é.example", "a;b"} {
		if _, err := fetch.WithUserAgentVar(context.Background(), "directory", bad); !errors.Is(err, fetch.ErrUserAgent) {
			t.Errorf("WithUserAgentVar(%q): err = %v, want ErrUserAgent", bad, err)
		}
	}
	// No value for the placeholder: nothing is sent.
	n := len(w.Requests())
	if _, err := f.Get(context.Background(), "http://a.test/"); !errors.Is(err, fetch.ErrUserAgent) {
		t.Errorf("missing var: err = %v", err)
	}
	if _, err := mustClient(t, bot).Get("http://a.test/"); !errors.Is(err, fetch.ErrUserAgent) {
		t.Errorf("client, missing var: err = %v", err)
	}
	if len(w.Requests()) != n {
		t.Error("a request left without its User-Agent value")
	}
	if _, err := fetch.New(fetch.Bot{UserAgent: "Bot/1.0\r\nX: y"}); !errors.Is(err, fetch.ErrUserAgent) {
		t.Errorf("CRLF in UA: err = %v", err)
	}
}

// C5, D5: only GET and HEAD leave the client; no cookie is sent or stored
// unless the bot has a jar; no credentials are sent.
func TestIdentity_C5_D5_NoCookiesNoCredentialsGetHeadOnly(t *testing.T) {
	w, bot := loopback(t)
	site(w, "a.test", "").Handle("/set", fetchtest.SetCookie("sid", "secret", fetchtest.HTML("c"))).
		Handle("/next", fetchtest.Redirect("/", 0)).
		Handle("/form", fetchtest.LoginForm())
	c := mustClient(t, bot)
	for _, u := range []string{"http://a.test/set", "http://a.test/", "http://a.test/next"} {
		req, _ := http.NewRequest(http.MethodGet, u, nil)
		req.Header.Set("Cookie", "sid=forced")
		req.Header.Set("Authorization", "Basic dXNlcjpwYXNz")
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch, http.MethodOptions} {
		req, _ := http.NewRequest(m, "http://a.test/form", strings.NewReader("user=a&pass=b"))
		if _, err := c.Do(req); !errors.Is(err, fetch.ErrMethod) {
			t.Errorf("%s: err = %v, want ErrMethod", m, err)
		}
	}
	resp, err := c.Head("http://a.test/")
	if err != nil {
		t.Fatalf("HEAD: %v", err)
	}
	resp.Body.Close()
	if _, err := c.Get("http://user:pass@a.test/"); !errors.Is(err, fetch.ErrBadURL) {
		t.Errorf("credentials in URL: err = %v", err)
	}
	w.Check(t, fetchtest.NoCookies(), fetchtest.NoCredentials(), fetchtest.OnlyGetHead(), fetchtest.NotFetched("a.test", "/form"))

	// With a jar the user asked for, cookies work.
	w.Reset()
	jar, _ := cookiejar.New(nil)
	bot.Jar = jar
	c = mustClient(t, bot)
	for _, u := range []string{"http://a.test/set", "http://a.test/"} {
		resp, err := c.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	if got := w.RequestsTo("a.test", "/")[0].Header.Get("Cookie"); got != "sid=secret" {
		t.Errorf("with a jar: Cookie %q", got)
	}
}

// D14: a domain on the block list (and its subdomains) is never fetched,
// not even its robots.txt.
func TestIdentity_D14_BlockedDomain(t *testing.T) {
	w, bot := loopback(t)
	site(w, "blocked.test", "")
	site(w, "www.blocked.test", "")
	site(w, "ok.test", "").Handle("/away", fetchtest.Redirect("http://www.blocked.test/", 0))
	w.Host("redir.test").Handle("/robots.txt", fetchtest.Redirect("http://blocked.test/robots.txt", 0)).
		Handle("/", fetchtest.HTML("r"))
	bot.BlockedDomains = []string{"Blocked.Test."}
	f := mustFetcher(t, bot)
	get(t, f, "http://blocked.test/", fetch.BlockedDomain)
	get(t, f, "http://www.blocked.test/x", fetch.BlockedDomain)
	get(t, f, "http://ok.test/away", fetch.BlockedDomain)
	get(t, f, "http://ok.test/", fetch.OK)
	get(t, f, "http://redir.test/", fetch.Unreachable) // its robots.txt lives on a blocked domain
	if n := w.Count("blocked.test", "") + w.Count("www.blocked.test", ""); n != 0 {
		t.Errorf("blocked domains got %d requests", n)
	}
}

// H7, S9: deny words (carts, checkouts, accounts) are never fetched; a
// login page, asked for or redirected to, ends as AuthRequired; 401 and 403
// too.
func TestIdentity_H7_S9_DenyLoginAuth(t *testing.T) {
	w, bot := loopback(t)
	site(w, "a.test", "").
		Handle("/members", fetchtest.LoginRedirect("/login")).
		Handle("/login", fetchtest.LoginForm()).
		Handle("/private", fetchtest.LoginRequired()).
		Handle("/forbidden", fetchtest.Status(http.StatusForbidden)).
		Handle("/cartography", fetchtest.HTML("maps"))
	f := mustFetcher(t, bot)
	tests := []struct {
		url  string
		want fetch.Outcome
	}{
		{"http://a.test/cart", fetch.Disallowed},
		{"http://a.test/shop/checkout/step-1", fetch.Disallowed},
		{"http://a.test/my-account/orders", fetch.Disallowed},
		{"http://a.test/product?add-to-cart=12", fetch.Disallowed},
		{"http://a.test/wp-login.php", fetch.AuthRequired},
		{"http://a.test/members", fetch.AuthRequired},
		{"http://a.test/private", fetch.AuthRequired},
		{"http://a.test/forbidden", fetch.AuthRequired},
		{"http://a.test/cartography", fetch.OK},
	}
	for _, tt := range tests {
		p := get(t, f, tt.url, tt.want)
		if tt.url == "http://a.test/members" && !strings.HasPrefix(p.FinalURL, "http://a.test/login") {
			t.Errorf("members: FinalURL %q", p.FinalURL)
		}
	}
	w.Check(t, fetchtest.NotFetched("a.test", "/cart", "/shop/checkout/step-1", "/my-account/orders", "/product", "/wp-login.php", "/login"))
	_, err := f.Get(context.Background(), "http://a.test/cart")
	if !errors.Is(err, fetch.ErrDenied) || !errors.Is(err, fetch.ErrDisallowed) {
		t.Errorf("deny: err %v", err)
	}
}

// H7: an HTML-only bot asks for HTML and refuses other content types
// without reading them.
func TestIdentity_H7_HTMLOnly(t *testing.T) {
	w, bot := loopback(t)
	site(w, "a.test", "").
		Handle("/doc.pdf", fetchtest.Text("application/pdf", "%PDF-1.7")).
		Handle("/x.xhtml", fetchtest.Text("application/xhtml+xml; charset=utf-8", "<html/>")).
		Handle("/missing", fetchtest.Status(http.StatusNotFound))
	bot.HTMLOnly = true
	f := mustFetcher(t, bot)
	get(t, f, "http://a.test/", fetch.OK)
	p := get(t, f, "http://a.test/doc.pdf", fetch.NotHTML)
	if p.Body != nil || p.Status != 200 {
		t.Errorf("not-HTML page: status %d body %q", p.Status, p.Body)
	}
	get(t, f, "http://a.test/x.xhtml", fetch.OK)
	get(t, f, "http://a.test/missing", fetch.OK) // status 404 is the page's answer
	for _, r := range w.RequestsTo("a.test") {
		if r.Path != "/robots.txt" && r.Header.Get("Accept") != "text/html,application/xhtml+xml;q=0.9" {
			t.Errorf("%s: Accept %q", r.Path, r.Header.Get("Accept"))
		}
	}
}

// H7: an HTML-only bot still reads machine files (sitemaps, /llms.txt)
// under WithMachineFile: it asks for XML and text and takes their content
// type; challenge pages stay Blocked (C6), and without the flag the same
// files are NotHTML.
func TestIdentity_H7_HTMLOnlyMachineFiles(t *testing.T) {
	w, bot := loopback(t)
	site(w, "a.test", "").
		Handle("/sitemap.xml", fetchtest.Sitemap(fetchtest.SitemapURL{Loc: "http://a.test/p"})).
		Handle("/llms.txt", fetchtest.Text("text/plain; charset=utf-8", "# a.test\n")).
		Handle("/shielded.xml", fetchtest.Challenge(http.StatusForbidden))
	bot.HTMLOnly = true
	f := mustFetcher(t, bot)
	machine := fetch.WithMachineFile(context.Background())
	get(t, f, "http://a.test/sitemap.xml", fetch.NotHTML)
	p := getCtx(t, machine, f, "http://a.test/sitemap.xml", fetch.OK)
	if !strings.Contains(string(p.Body), "<urlset") {
		t.Errorf("sitemap body %q", p.Body)
	}
	getCtx(t, machine, f, "http://a.test/llms.txt", fetch.OK)
	getCtx(t, machine, f, "http://a.test/shielded.xml", fetch.Blocked)

	// The plain client honours the flag too (a sitemap walker over it).
	req, _ := http.NewRequestWithContext(machine, http.MethodGet, "http://a.test/sitemap.xml", nil)
	resp, err := f.Client().Do(req)
	if err != nil {
		t.Fatalf("client: %v", err)
	}
	resp.Body.Close()

	rs := w.RequestsTo("a.test", "/sitemap.xml")
	if len(rs) != 3 || rs[0].Header.Get("Accept") != "text/html,application/xhtml+xml;q=0.9" ||
		!strings.Contains(rs[1].Header.Get("Accept"), "application/xml") {
		t.Errorf("sitemap requests %d, Accept %q then %q", len(rs), rs[0].Header.Get("Accept"), rs[1].Header.Get("Accept"))
	}
}

// Wrap builds a new client over an existing one and leaves it untouched.
func TestWrap_DoesNotMutate(t *testing.T) {
	w, bot := loopback(t)
	site(w, "a.test", "User-agent: *\nDisallow: /no\n")
	jar, _ := cookiejar.New(nil)
	existing := &http.Client{Transport: bot.Transport, Jar: jar}
	bot.Transport = nil
	c, err := fetch.Wrap(bot, existing)
	if err != nil {
		t.Fatal(err)
	}
	if c == existing || existing.Jar != jar || existing.CheckRedirect != nil || c.Jar != nil {
		t.Fatal("Wrap mutated or shared the existing client")
	}
	resp, err := c.Get("http://a.test/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if _, err := c.Get("http://a.test/no"); !errors.Is(err, fetch.ErrDisallowed) {
		t.Errorf("err %v", err)
	}
	w.Check(t, fetchtest.UserAgent(testUA), w.ObeysRobots(testAgent))
}

// H7, B10: a bounded number of pages per site.
func TestIdentity_H7_PageBudgetPerSite(t *testing.T) {
	w, bot := loopback(t)
	site(w, "a.test", "").Fallback(fetchtest.HTML("p"))
	site(w, "b.test", "").Fallback(fetchtest.HTML("p"))
	bot.MaxPagesPerSite = 3
	f := mustFetcher(t, bot)
	for i, u := range pages("a.test", 5) {
		want := fetch.OK
		if i >= 3 {
			want = fetch.GaveUp
		}
		if _, err := f.Get(context.Background(), u); fetch.OutcomeOf(err) != want {
			t.Errorf("%s: %v, want %v", u, err, want)
		}
	}
	get(t, f, "http://b.test/", fetch.OK)
	if n := w.Count("a.test", ""); n != 4 {
		t.Errorf("a.test got %d requests, want robots.txt and 3 pages", n)
	}
	_, err := f.Get(context.Background(), "http://a.test/again")
	if !errors.Is(err, fetch.ErrSiteBudget) || !errors.Is(err, fetch.ErrGaveUp) {
		t.Errorf("err %v", err)
	}
}

func TestNew_RejectsBadProfiles(t *testing.T) {
	tests := []struct {
		name string
		bot  fetch.Bot
	}{
		{"no UA", fetch.Bot{}},
		{"unclosed placeholder", fetch.Bot{UserAgent: "Bot/1.0 ({dir"}},
		{"CR in From", fetch.Bot{UserAgent: "Bot/1.0", From: "a@b\r\nX: y"}},
		{"signer without key", fetch.Bot{UserAgent: "Bot/1.0", Signer: &signing.Signer{Agent: "https://bot.example"}}},
	}
	for _, tt := range tests {
		if _, err := fetch.New(tt.bot); err == nil {
			t.Errorf("%s: New accepted it", tt.name)
		}
		if _, err := fetch.NewFetcher(tt.bot); err == nil {
			t.Errorf("%s: NewFetcher accepted it", tt.name)
		}
	}
}

func TestZeroValues(t *testing.T) {
	var f fetch.Fetcher
	if _, err := f.Get(context.Background(), "http://a.test/"); !errors.Is(err, fetch.ErrNoBot) {
		t.Errorf("zero Fetcher: %v", err)
	}
	f.CloseIdleConnections()
	var w fetchtest.Web
	w.Host("a.test").Handle("/", fetchtest.HTML("x"))
	resp, err := (&http.Client{Transport: w.RoundTripper()}).Get("http://a.test/")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("zero Web: %v", err)
	}
	resp.Body.Close()
	w.Close()
}

// New and Wrap never send Authorization or Proxy-Authorization, with or
// without a cookie jar; a jar only brings cookies (its cookie arrives, so
// the request did go out through the jar).
func TestIdentity_C5_CredentialsStrippedWithOrWithoutJar(t *testing.T) {
	for _, wrap := range []bool{false, true} {
		for _, withJar := range []bool{false, true} {
			w, bot := loopback(t)
			site(w, "a.test", "")
			var jar http.CookieJar
			if withJar {
				jar, _ = cookiejar.New(nil)
				jar.SetCookies(&url.URL{Scheme: "http", Host: "a.test"}, []*http.Cookie{{Name: "sid", Value: "j"}})
				bot.Jar = jar
			}
			var c *http.Client
			if wrap {
				var err error
				if c, err = fetch.Wrap(bot, &http.Client{Transport: bot.Transport, Jar: jar}); err != nil {
					t.Fatal(err)
				}
			} else {
				c = mustClient(t, bot)
			}
			req, _ := http.NewRequest(http.MethodGet, "http://a.test/", nil)
			req.Header.Set("Authorization", "Bearer token")
			req.Header.Set("Proxy-Authorization", "Basic dXNlcjpwYXNz")
			resp, err := c.Do(req)
			if err != nil {
				t.Fatalf("wrap %v jar %v: %v", wrap, withJar, err)
			}
			resp.Body.Close()
			got := w.RequestsTo("a.test", "/")
			if len(got) != 1 {
				t.Fatalf("wrap %v jar %v: %d requests", wrap, withJar, len(got))
			}
			h := got[0].Header
			if h.Get("Authorization") != "" || h.Get("Proxy-Authorization") != "" {
				t.Errorf("wrap %v jar %v: credentials sent: %v", wrap, withJar, h)
			}
			if (h.Get("Cookie") == "sid=j") != withJar {
				t.Errorf("wrap %v jar %v: Cookie %q", wrap, withJar, h.Get("Cookie"))
			}
		}
	}
}

// B1, B8, H7: over the base transport fetch builds (Bot.Transport nil),
// every request carries the bot's fields and only what it asks for: a
// plain Get the User-Agent, From and Accept, a refetch its validators, a
// fresh Get Cache-Control, an HTML-only bot's machine file its Accept; and
// what one request carried is not carried by the next.
func TestIdentity_OwnBaseSendsWhatEachRequestAsks(t *testing.T) {
	w := fetchtest.New()
	defer w.Close()
	site(w, "a.test", "").
		Handle("/etag", fetchtest.Page{Body: "<p>e</p>", ETag: `"v1"`}).
		Handle("/plain", fetchtest.HTML("<p>p</p>")).
		Handle("/sitemap.xml", fetchtest.Text("application/xml", "<urlset/>"))
	w.Start()
	bot := fetch.Bot{UserAgent: testUA, From: "bot@test.example", HTMLOnly: true,
		Politeness: politeness.Policy{MinDelay: -1}, AllowInternal: loopbackOnly}
	f, tr, err := fetch.NewFetcherWithLookup(bot, nil, func(t *http.Transport) { t.DialContext = w.DialContext })
	if err != nil {
		t.Fatal(err)
	}
	defer tr.CloseIdleConnections()
	ctx := context.Background()
	steps := []struct {
		url  string
		opts fetch.GetOptions
		want map[string]string // "" for a field that must be absent
	}{
		{"http://a.test/plain", fetch.GetOptions{}, map[string]string{"If-None-Match": "", "Cache-Control": ""}},
		{"http://a.test/etag", fetch.GetOptions{}, map[string]string{"If-None-Match": ""}},
		{"http://a.test/etag", fetch.GetOptions{}, map[string]string{"If-None-Match": `"v1"`}},
		{"http://a.test/plain", fetch.GetOptions{Fresh: true}, map[string]string{"Cache-Control": "no-cache", "If-None-Match": ""}},
		{"http://a.test/sitemap.xml", fetch.GetOptions{MachineFile: true},
			map[string]string{"Accept": "application/xml,text/xml;q=0.9,text/plain;q=0.8,*/*;q=0.5"}},
		{"http://a.test/plain", fetch.GetOptions{}, map[string]string{"If-None-Match": "", "Cache-Control": "",
			"Accept": "text/html,application/xhtml+xml;q=0.9"}},
	}
	for i, st := range steps {
		if _, err := f.Get(ctx, st.url, st.opts); err != nil {
			t.Fatalf("step %d: Get(%s): %v", i, st.url, err)
		}
		reqs := w.RequestsTo("a.test", strings.TrimPrefix(st.url, "http://a.test"))
		r := reqs[len(reqs)-1]
		for name, want := range map[string]string{"User-Agent": testUA, "From": "bot@test.example"} {
			if got := r.Header.Get(name); got != want {
				t.Errorf("step %d (%s): %s %q, want %q", i, st.url, name, got, want)
			}
		}
		for name, want := range st.want {
			if got := strings.Join(r.Header.Values(name), ", "); got != want {
				t.Errorf("step %d (%s): %s %q, want %q", i, st.url, name, got, want)
			}
		}
	}
}
