package main

import (
	"crypto"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/goodbot-go/goodbot/fetch/fetchtest"
	"github.com/goodbot-go/goodbot/signing"
	"github.com/goodbot-go/goodbot/signing/signingtest"
)

// llms.txt and llms-full.txt count as found only when a 200 carries text
// (text/plain, text/markdown); an HTML page answering 200 for a missing file
// (a soft 404) is missing, and the report says why.
func TestReadiness_AIFilesOnlyText(t *testing.T) {
	tests := []struct {
		name, ct, body string
		found          bool
	}{
		{"plain", "text/plain; charset=utf-8", "# School\n", true},
		{"markdown", "text/markdown", "# School\n", true},
		{"html soft 404", "text/html; charset=utf-8", "<html><body>Page not found</body></html>", false},
		{"json", "application/json", "{}", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := fetchtest.New()
				w.Host("school.test").
					Handle("/robots.txt", fetchtest.Robots("User-agent: *\nAllow: /\n")).
					Handle("/", fetchtest.HTML("home")).
					Handle("/llms.txt", fetchtest.Text(tt.ct, tt.body))
				_, md := report(t, w)
				if n := w.Count("school.test", "/llms.txt"); n != 1 {
					t.Fatalf("/llms.txt requested %d times, want 1", n)
				}
				found := strings.Contains(md, "| http://school.test/llms.txt | 200 | found |")
				soft := strings.Contains(md, "| http://school.test/llms.txt | 200 | missing | answered 200 with Content-Type")
				if found != tt.found || soft == tt.found {
					t.Errorf("found %v, soft 404 %v; want found %v:\n%s", found, soft, tt.found, md)
				}
				// home, robots.txt, and llms.txt when text.
				want := "| 2 | 3 | 0 | 0 | 0 |"
				if tt.found {
					want = "| 3 | 2 | 0 | 0 | 0 |"
				}
				if !strings.Contains(md, want) {
					t.Errorf("summary is not %q:\n%s", want, md)
				}
			})
		})
	}
}

// The report lists the page directives BothyBot sees (header or robots
// meta, its former names included) and what they mean for its crawl.
func TestReadiness_PageDirectives(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := fetchtest.New()
		w.Host("school.test").
			Handle("/robots.txt", fetchtest.Robots("User-agent: *\nAllow: /\n")).
			Handle("/", fetchtest.HTML(`<head><meta name="robots" content="nofollow"></head><a href="/about">About</a>`)).
			Handle("/about", fetchtest.Page{Body: "about", Header: http.Header{"X-Robots-Tag": {"cleatbot: noai", "otherbot: noindex"}}})
		_, md := report(t, w)
		if n := w.Count("school.test", "/about"); n != 1 {
			t.Fatalf("/about requested %d times, want 1", n)
		}
		for _, want := range []string{
			"| http://school.test/ | 200 | stated | page directives for BothyBot (X-Robots-Tag, Robots-Tag, robots meta): nofollow; its links are not followed |",
			"| http://school.test/about | 200 | stated | page directives for BothyBot (X-Robots-Tag, Robots-Tag, robots meta): noai; BothyBot's crawl will not keep this page |",
		} {
			if !strings.Contains(md, want) {
				t.Errorf("report lacks %q:\n%s", want, md)
			}
		}
	})
}

// The report says whether a site checking Web Bot Auth would verify
// BothyBot: its own key directory is fetched as a verifier fetches it, and
// a request signed as BothyBot checked against it.
func TestReadiness_KeyDirectoryVerifies(t *testing.T) {
	tests := []struct {
		name string
		dir  http.Handler // nil: bothy.tools has no directory
		want string
	}{
		{"own key", &signing.Directory{Keys: []crypto.Signer{signingtest.BothyKey()}}, "| https://bothy.tools/.well-known/http-message-signatures-directory | - | verified | a site checking Web Bot Auth would verify BothyBot: key "},
		{"other key", &signing.Directory{Keys: []crypto.Signer{signingtest.OtherKey()}}, "| - | unverified | a site checking Web Bot Auth would NOT verify BothyBot: "},
		{"no directory", nil, "| - | unknown | BothyBot's key directory could not be read"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := fetchtest.New()
				w.Host("school.test").
					Handle("/robots.txt", fetchtest.Robots("User-agent: *\nAllow: /\n")).
					Handle("/", fetchtest.HTML("home"))
				bothy := w.Host("bothy.tools").Handle("/robots.txt", fetchtest.Robots("User-agent: *\nAllow: /\n"))
				if tt.dir != nil {
					bothy.Handle("/.well-known/http-message-signatures-directory", tt.dir)
				}
				_, md := report(t, w)
				if n := w.Count("bothy.tools", "/.well-known/http-message-signatures-directory"); n != 1 {
					t.Fatalf("the key directory was requested %d times, want 1", n)
				}
				if !strings.Contains(md, "## Web Bot Auth: would a site verify the bot's signature") || !strings.Contains(md, tt.want) {
					t.Errorf("report lacks %q:\n%s", tt.want, md)
				}
			})
		})
	}
}
