package fetch_test

import (
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/fetch/fetchtest"
)

// Page.Rules: the header's and the HTML head's directives for the bot's
// names, evaluated when the answer came.
func TestPageRules_OnPage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		now := time.Now()
		tests := []struct {
			name   string
			page   fetchtest.Page
			former []string
			want   string
		}{
			{"none", fetchtest.Page{Body: "<p>x</p>"}, nil, ""},
			{"X-Robots-Tag noindex", fetchtest.Page{Body: "<p>x</p>", Header: http.Header{"X-Robots-Tag": {"noindex"}}}, nil, "noindex"},
			{"other bot", fetchtest.Page{Body: "<p>x</p>", Header: http.Header{"X-Robots-Tag": {"otherbot: noindex"}}}, nil, ""},
			{"own token", fetchtest.Page{Body: "<p>x</p>", Header: http.Header{"X-Robots-Tag": {"testbot: nofollow"}}}, nil, "nofollow"},
			{"former name", fetchtest.Page{Body: "<p>x</p>", Header: http.Header{"X-Robots-Tag": {"cleatbot: noai"}}}, []string{"CleatBot"}, "noai"},
			{"meta in head", fetchtest.Page{Body: `<html><head><meta name="robots" content="noindex, nofollow"></head><body>x</body></html>`}, nil, "noindex, nofollow"},
			{"meta for token", fetchtest.Page{Body: `<head><meta name="TestBot" content="noai"></head>`}, nil, "noai"},
			{"meta in body ignored", fetchtest.Page{Body: `<html><body><p>x</p><meta name="robots" content="noindex"></body></html>`}, nil, ""},
			{"meta in a text body ignored", fetchtest.Page{ContentType: "text/plain", Body: `<head><meta name="robots" content="noindex"></head>`}, nil, ""},
			{"header and meta combine", fetchtest.Page{Body: `<head><meta name="robots" content="noai"></head>`, Header: http.Header{"X-Robots-Tag": {"nofollow"}}}, nil, "nofollow, noai"},
			{"unavailable_after past", fetchtest.Page{Body: "x", Header: http.Header{"X-Robots-Tag": {"unavailable_after: " + now.Add(-time.Hour).UTC().Format(time.RFC850)}}}, nil, "noindex"},
		}
		for _, tt := range tests {
			w := fetchtest.New()
			site(w, "a.test", "User-agent: *\nAllow: /\n").Handle("/p", tt.page)
			bot := memBot(w)
			bot.FormerTokens = tt.former
			f := mustFetcher(t, bot)
			p := get(t, f, "http://a.test/p", fetch.OK)
			if len(w.RequestsTo("a.test", "/p")) != 1 {
				t.Fatalf("%s: page not requested", tt.name)
			}
			got := p.Rules
			got.UnavailableAfter = time.Time{}
			if got.String() != tt.want {
				t.Errorf("%s: Rules %q, want %q", tt.name, got, tt.want)
			}
			w.Close()
		}
	})
}
