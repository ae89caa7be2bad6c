package main

import (
	"net/http"
	"testing"
	"testing/synctest"

	"github.com/goodbot-go/goodbot/examples/internal/bottest"
	"github.com/goodbot-go/goodbot/examples/internal/directories"
	"github.com/goodbot-go/goodbot/fetch/fetchtest"
	"github.com/goodbot-go/goodbot/signing/signingtest"
)

// DirectoriesBot declares no purpose (it checks one link and keeps nothing
// of the page): a site that refuses every use, in robots.txt and in the
// header, still has its listing checked.
func TestDirectories_UsagePreferencesDoNotStopTheCheck(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := fetchtest.New()
		w.Host("refuser.test").
			Handle("/robots.txt", fetchtest.Robots("Content-Signal: search=no, ai-input=no, ai-train=no\n\nUser-agent: *\nAllow: /\nContent-Usage: search=n, ai-use=n, train-ai=n\n")).
			Handle("/partners", fetchtest.Page{Body: `<a href="` + backlink + `refuser">us</a>`,
				Header: http.Header{"Content-Usage": {"search=n, ai-use=n, train-ai=n"}, "Tdm-Reservation": {"1"}}})
		file := writeListings(t, []row{{"http://refuser.test/partners", "citydir.test", "weekly"}}, "")
		out := bottest.Run(t, directories.Run, w, 0, bottest.Args(t, signingtest.DirectoriesKey(), "", "-listings", file)...)
		if n := w.Count("refuser.test", "/partners"); n != 1 {
			t.Errorf("/partners requested %d times, want 1", n)
		}
		if r, _ := out.Result("http://refuser.test/partners"); r.Outcome != "verified" {
			t.Errorf("%+v, want verified", r)
		}
	})
}
