package fetch_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/fetch/fetchtest"
	"github.com/goodbot-go/goodbot/politeness"
	"github.com/goodbot-go/goodbot/robots"
)

func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		"http://user:secret@host/":          "http://user:xxxxx@host/",
		"http://user:secret@host/%zz":       "http://user:xxxxx@host/%zz",
		"https://u:p@ss@host:8080/a?b#c":    "https://u:xxxxx@host:8080/a?b#c",
		"https://a:b@c?x=y@z":               "https://a:xxxxx@c?x=y@z",
		"//user:pw@h/":                      "//user:xxxxx@h/",
		"http://user@host/":                 "http://user@host/",
		"http://host/a:b@c":                 "http://host/a:b@c",
		"http:///a:b@c":                     "http:///a:b@c", // no authority: "a:b@c" is path
		"http://host/":                      "http://host/",
		"mailto:someone@example.org":        "mailto:someone@example.org",
		"":                                  "",
		"http://:secret@host/":              "http://:xxxxx@host/",
		"HTTP://User:Se%20cret@Example.COM": "HTTP://User:xxxxx@Example.COM",
	} {
		if got := fetch.Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzRedact: for every URL that parses with a password, Redact agrees with
// url.URL.Redacted; text without "@" is never changed.
func FuzzRedact(f *testing.F) {
	for _, s := range []string{"http://user:secret@host/", "http://u:p@ss@h/x?y@z#@", "//a:b@c", "http://host/", "x:y@z", "http://a:b@[::1]:80/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r := fetch.Redact(s)
		if !strings.Contains(s, "@") && r != s {
			t.Fatalf("Redact(%q) = %q changed a URL without userinfo", s, r)
		}
		u, err := url.Parse(s)
		if err != nil || u.User == nil {
			return
		}
		if _, has := u.User.Password(); !has {
			if r != s {
				t.Fatalf("Redact(%q) = %q changed a URL without a password", s, r)
			}
			return
		}
		ru, err := url.Parse(r)
		if err != nil {
			t.Fatalf("Redact(%q) = %q does not parse: %v", s, r, err)
		}
		if ru.Redacted() != u.Redacted() {
			t.Fatalf("Redact(%q) = %q, parsed %q, want %q", s, r, ru.Redacted(), u.Redacted())
		}
		if p, _ := ru.User.Password(); p != "xxxxx" {
			t.Fatalf("Redact(%q) = %q keeps password %q", s, r, p)
		}
	})
}

// No error or log line about a URL with a password contains the password:
// asked for directly, by a client, through a redirect, in a URL that does
// not parse, or normalised.
func TestNoPasswordInErrorsOrLogs(t *testing.T) {
	w := fetchtest.New()
	site(w, "a.test", "User-agent: *\nDisallow: /private\n").
		Handle("/go", fetchtest.Redirect("http://user:secret@a.test/x", 0))
	var logs bytes.Buffer
	bot := memBot(w)
	bot.Politeness = politeness.Policy{MinDelay: -1}
	bot.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	f := mustFetcher(t, bot)
	c := mustClient(t, bot)
	ctx := context.Background()
	cache := &robots.Cache{Transport: w.RoundTripper(), Logger: bot.Logger}
	for _, tt := range []struct {
		name string
		do   func() error
	}{
		{"Fetcher.Get", func() error { _, err := f.Get(ctx, "http://user:secret@a.test/"); return err }},
		{"Fetcher.Get, bad escape", func() error { _, err := f.Get(ctx, "http://user:secret@a.test/%zz"); return err }},
		{"Fetcher.Get, redirect", func() error { _, err := f.Get(ctx, "http://a.test/go"); return err }},
		{"Client.Get", func() error { _, err := c.Get("http://user:secret@a.test/"); return err }},
		{"Client.Get, redirect", func() error { _, err := c.Get("http://a.test/go"); return err }},
		{"Transport.RoundTrip", func() error {
			u, _ := url.Parse("http://user:secret@a.test/")
			req := (&http.Request{Method: http.MethodGet, URL: u, Header: http.Header{}}).WithContext(ctx)
			_, err := c.Transport.RoundTrip(req)
			return err
		}},
		{"Normalize", func() error { _, err := fetch.Normalize("http://user:secret@a.test/"); return err }},
		{"Normalize, bad escape", func() error { _, err := fetch.Normalize("http://user:secret@a.test/%zz"); return err }},
		{"robots.Cache.Check", func() error {
			u, _ := url.Parse("http://user:secret@a.test/private")
			return cache.Check(ctx, testAgent, u)
		}},
	} {
		logs.Reset()
		err := tt.do()
		if err == nil {
			t.Errorf("%s: no error", tt.name)
			continue
		}
		if strings.Contains(err.Error(), "secret") {
			t.Errorf("%s: error shows the password: %v", tt.name, err)
		}
		if strings.Contains(logs.String(), "secret") {
			t.Errorf("%s: log shows the password:\n%s", tt.name, logs.String())
		}
	}
	if n := w.Count("a.test", "/go"); n != 2 {
		t.Errorf("/go asked %d times, want 2: the redirect cases did not run", n)
	}
	for _, r := range w.Requests() {
		if r.Header.Get("Authorization") != "" || r.Path == "/x" {
			t.Errorf("credentials reached the server: %s %v", r.Path, r.Header)
		}
	}
}

// A URL the chain refuses as bad (not absolute http(s), or with userinfo)
// is named in the ErrBadURL error, with its password redacted.
func TestBadURLErrorNamesRedactedURL(t *testing.T) {
	c := mustClient(t, memBot(fetchtest.New()))
	for _, tt := range []struct{ raw, want string }{
		{"http://user:secret@a.test/x", "http://user:xxxxx@a.test/x"},
		{"ftp://a.test/file", "ftp://a.test/file"},
		{"https://user@a.test/", "https://user@a.test/"},
	} {
		u, err := url.Parse(tt.raw)
		if err != nil {
			t.Fatal(err)
		}
		req := (&http.Request{Method: http.MethodGet, URL: u, Header: http.Header{}}).WithContext(context.Background())
		_, err = c.Transport.RoundTrip(req)
		if !errors.Is(err, fetch.ErrBadURL) {
			t.Errorf("%s: %v; want ErrBadURL", tt.raw, err)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, tt.want) || strings.Contains(msg, "secret") {
			t.Errorf("%s: error %q; want it to name %s", tt.raw, msg, tt.want)
		}
	}
}
