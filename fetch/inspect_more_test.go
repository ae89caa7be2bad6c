package fetch_test

import (
	"errors"
	"io"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/goodbot-go/goodbot/challenge"
	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/fetch/fetchtest"
)

// wallDetector blocks any answer that carries the header X-Test-Wall,
// whatever its status: a vendor's documented challenge header.
func wallDetector() *challenge.Detector {
	return &challenge.Detector{Rules: []challenge.Rule{{
		Name: "test/wall", Vendor: "test", Kind: challenge.Block,
		Header: []challenge.HeaderMatch{{Name: "X-Test-Wall"}},
	}}}
}

// statusAnswer serves status with the given content type, header lines and a
// small body.
func statusAnswer(status int, contentType string, header ...string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i+1 < len(header); i += 2 {
			w.Header().Set(header[i], header[i+1])
		}
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(status)
		_, _ = w.Write([]byte("<p>status " + strconv.Itoa(status) + "</p>"))
	})
}

// C6, H8: a challenge page is Blocked whatever its status, 2xx, 4xx or 5xx
// (the statuses around the redirects' 3xx included); its body is not
// returned.
func TestInspect_C6_ChallengeAtAnyStatus(t *testing.T) {
	for _, status := range []int{200, 204, 299, 400, 403, 404, 500} {
		t.Run(strconv.Itoa(status), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := fetchtest.New()
				defer w.Close()
				site(w, "a.test", "").Handle("/p", statusAnswer(status, "text/html", "X-Test-Wall", "1"))
				bot := memBot(w)
				bot.Challenge = wallDetector()
				f := mustFetcher(t, bot)
				p := get(t, f, "http://a.test/p", fetch.Blocked)
				if n := w.Count("a.test", "/p"); n != 1 {
					t.Fatalf("%d requests for /p, want 1", n)
				}
				if p.Status != status || len(p.Body) != 0 {
					t.Errorf("page status %d with %d body bytes, want %d and none", p.Status, len(p.Body), status)
				}
			})
		})
	}
}

// H7: an HTML-only bot refuses a 2xx answer of another content type
// (NotHTML, 200 to 299), and takes a non-2xx answer of any type as it comes
// (a 404 or a 500 error page in text/plain), as Bot.HTMLOnly says.
func TestInspect_H7_HTMLOnlyRefusesOnly2xx(t *testing.T) {
	for _, tt := range []struct {
		status      int
		contentType string
		want        fetch.Outcome
	}{
		{200, "application/pdf", fetch.NotHTML},
		{200, "text/html; charset=utf-8", fetch.OK},
		{200, "application/xhtml+xml", fetch.OK},
		{206, "text/plain", fetch.NotHTML},
		{299, "application/json", fetch.NotHTML},
		{299, "text/html", fetch.OK},
		{404, "text/plain", fetch.OK},
		{410, "application/json", fetch.OK},
		{500, "text/plain", fetch.Unreachable},
	} {
		t.Run(strconv.Itoa(tt.status)+" "+tt.contentType, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := fetchtest.New()
				defer w.Close()
				site(w, "a.test", "").Handle("/p", statusAnswer(tt.status, tt.contentType))
				bot := memBot(w)
				bot.HTMLOnly = true
				f := mustFetcher(t, bot)
				p := get(t, f, "http://a.test/p", tt.want)
				if n := w.Count("a.test", "/p"); n != 1 {
					t.Fatalf("%d requests for /p, want 1", n)
				}
				if p.Status != tt.status {
					t.Errorf("page status %d, want %d", p.Status, tt.status)
				}
			})
		})
	}
}

// C6, C7: a challenge shown by the answer's status and header alone
// (Cloudflare's documented Cf-Mitigated: challenge, which a HEAD answer
// carries too) comes back from the bot's client as Blocked, with the
// *challenge.ChallengeError, for a HEAD as for a GET: a link checker that
// sends HEAD through the bot must not take the challenge for the site's
// answer ("Answers that come back as errors" in the package documentation).
func TestInspect_C6_HeaderChallengeOnHEAD(t *testing.T) {
	for _, method := range []string{http.MethodGet, http.MethodHead} {
		t.Run(method, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := fetchtest.New()
				defer w.Close()
				site(w, "a.test", "").Handle("/p", statusAnswer(http.StatusForbidden, "text/html", "Cf-Mitigated", "challenge"))
				c := mustClient(t, memBot(w))
				req, err := http.NewRequest(method, "http://a.test/p", nil)
				if err != nil {
					t.Fatal(err)
				}
				resp, err := c.Do(req)
				if rs := w.RequestsTo("a.test", "/p"); len(rs) != 1 || rs[0].Method != method {
					t.Fatalf("requests for /p: %+v, want one %s", rs, method)
				}
				if err == nil {
					resp.Body.Close()
					t.Fatalf("%s answered %d with Cf-Mitigated: challenge: a response and no error, want Blocked", method, resp.StatusCode)
				}
				var ce *challenge.ChallengeError
				if fetch.OutcomeOf(err) != fetch.Blocked || !errors.As(err, &ce) {
					t.Errorf("err %v (outcome %v), want Blocked with a *challenge.ChallengeError", err, fetch.OutcomeOf(err))
				}
			})
		})
	}
}

// The bytes a client's body replays after the challenge sniff are its
// own: bodies of several sites held open at once (the client's caller reads
// them later, in any order) each read back exactly what its site sent,
// whatever other answers (robots.txt, pages) were sniffed meanwhile, for
// bodies of one byte as for a few hundred. (The sniff's buffers are pooled:
// with one P, a buffer given back is the one the next sniff gets, so a
// buffer given back while a body still replays from it shows here.)
func TestInspect_HeldClientBodiesKeepTheirBytes(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	for _, size := range []int{1, 300} {
		t.Run(strconv.Itoa(size), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := fetchtest.New()
				defer w.Close()
				hosts := []string{"a.test", "b.test", "c.test"}
				want := map[string]string{}
				for _, h := range hosts {
					body := strings.Repeat(h[:1], size)
					want[h] = body
					site(w, h, "User-agent: *\nAllow: /\n").Handle("/p", http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
						rw.Header().Set("Content-Type", "text/html")
						_, _ = io.WriteString(rw, body) // no Content-Length
					}))
				}
				c := mustClient(t, memBot(w))
				var resps []*http.Response
				for _, h := range hosts {
					resp, err := c.Get("http://" + h + "/p")
					if err != nil {
						t.Fatal(err)
					}
					defer resp.Body.Close()
					resps = append(resps, resp)
				}
				for i, h := range hosts {
					if n := w.Count(h, "/p"); n != 1 {
						t.Fatalf("%d requests for %s/p, want 1", n, h)
					}
					b, err := io.ReadAll(resps[i].Body)
					if err != nil {
						t.Fatal(err)
					}
					if string(b) != want[h] {
						t.Errorf("%s/p read back %q, the site sent %q", h, b, want[h])
					}
				}
			})
		})
	}
}
