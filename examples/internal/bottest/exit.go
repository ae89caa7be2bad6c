package bottest

import (
	"context"
	"crypto/ed25519"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/goodbot-go/goodbot/fetch/fetchtest"
)

// An ExitCase is one run of a bot over bad input, for [CheckExitStatus]:
// the documented exit status (examples/README.md: 0 all done, 1 could not
// run, 3 some work failed), the clear line that names the problem, and the
// work that must still have been done.
type ExitCase struct {
	Name string
	// Args follow the common ones (-json, a fresh -state, -key when the bot
	// signs). The sites of [ExitWeb] are reachable.
	Args []string
	Code int
	// Line must appear on stderr. For status 1 it must be all of stderr:
	// one line, not the usage.
	Line string
	// Done lists requests ("host/path") that must still have been made: the
	// rest of the work.
	Done []string
	// FullStdout makes every write to stdout fail, as on a full disk.
	FullStdout bool
	// Interrupt cancels the run's context, as Ctrl-C does, when stop.test's
	// home page is asked for.
	Interrupt bool
}

// ExitWeb is the web of the exit cases: ok.test (a home page linking to /a
// and /b), dead.test (every connection reset, robots.txt included),
// hang.test (robots.txt, then a home page that never answers) and stop.test
// (like ok.test).
func ExitWeb() *fetchtest.Web {
	w := fetchtest.New()
	allow := fetchtest.Robots("User-agent: *\nAllow: /\n")
	for _, h := range []string{"ok.test", "stop.test", "hang.test"} {
		w.Host(h).Handle("/robots.txt", allow).
			Handle("/", fetchtest.HTML(`<a href="/a">a</a> <a href="/b">b</a>`)).
			Handle("/a", fetchtest.HTML("a")).
			Handle("/b", fetchtest.HTML("b"))
	}
	w.Host("hang.test").Handle("/", fetchtest.Hang())
	w.Host("dead.test").Fallback(fetchtest.Reset())
	return w
}

// CrawlCases are the exit cases every bot that takes sites on its command
// line shares (outFlag: its flag writing files, "" for none).
func CrawlCases(outFlag string) []ExitCase {
	cases := []ExitCase{
		{Name: "unknown flag", Args: []string{"-nope", "http://ok.test/"}, Code: 1, Line: "flag provided but not defined: -nope"},
		{Name: "bad flag value", Args: []string{"-max-pages", "many", "http://ok.test/"}, Code: 1, Line: `invalid value "many" for flag -max-pages`},
		{Name: "no site", Code: 1, Line: "no site given"},
		{Name: "bad URL", Args: []string{"ftp://x", "http://ok.test/"}, Code: 3, Line: `"ftp://x" is not an http(s) URL`, Done: []string{"ok.test/"}},
		{Name: "unreachable site", Args: []string{"http://dead.test/", "http://ok.test/"}, Code: 3, Done: []string{"dead.test/robots.txt", "ok.test/"}},
		{Name: "timeout", Args: []string{"http://hang.test/", "http://ok.test/"}, Code: 3, Done: []string{"hang.test/", "ok.test/"}},
		{Name: "stdout full", Args: []string{"http://ok.test/"}, FullStdout: true, Code: 3, Line: "results not written", Done: []string{"ok.test/"}},
		{Name: "interrupted", Args: []string{"http://stop.test/"}, Interrupt: true, Code: 3, Line: "interrupted", Done: []string{"stop.test/"}},
		{Name: "all well", Args: []string{"http://ok.test/"}, Code: 0, Done: []string{"ok.test/"}},
	}
	if outFlag != "" {
		// /dev/full is not a directory: nothing can be written under it.
		cases = append(cases, ExitCase{Name: "write failure", Args: []string{outFlag, "/dev/full/out", "http://ok.test/"}, Code: 3,
			Line: "/dev/full", Done: []string{"ok.test/"}})
	}
	return cases
}

// CheckExitStatus runs run over each case, in fake time over a fresh
// [ExitWeb], and checks the exit status, the line on stderr and that the
// rest of the work was done. key is the bot's signing key (nil: it does not
// sign).
func CheckExitStatus(t *testing.T, run RunFunc, key ed25519.PrivateKey, cases []ExitCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := ExitWeb()
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				if c.Interrupt {
					w.Host("stop.test").Handle("/", http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
						cancel()
						fetchtest.HTML(`<a href="/a">a</a> <a href="/b">b</a>`).ServeHTTP(rw, r)
					}))
				}
				var stdout io.Writer
				if c.FullStdout {
					stdout = FullDisk{}
				}
				out := runIn(t, ctx, run, w.RoundTripper(), 1, c.Code, stdout, Args(t, key, "", c.Args...)...)
				if c.Line != "" && !strings.Contains(out.Stderr, c.Line) {
					t.Errorf("stderr does not say %q:\n%s", c.Line, out.Stderr)
				}
				if c.Code == 1 && strings.Count(out.Stderr, "\n") != 1 {
					t.Errorf("want one line on stderr, got:\n%s", out.Stderr)
				}
				if c.Code == 1 && len(w.Requests()) != 0 {
					t.Errorf("could not run, yet made %d requests", len(w.Requests()))
				}
				for _, d := range c.Done {
					host, path, _ := strings.Cut(d, "/")
					if w.Count(host, "/"+path) == 0 {
						t.Errorf("%s was not requested: the rest of the work was not done", d)
					}
				}
				if c.Interrupt && w.Count("stop.test", "/b") != 0 {
					t.Error("went on crawling after the interrupt")
				}
			})
		})
	}
}

// FullDisk is a writer that fails every write, as a full disk does.
type FullDisk struct{}

// Write returns an error, writing nothing.
func (FullDisk) Write([]byte) (int, error) { return 0, errNoSpace }

var errNoSpace = errors.New("no space left on device")
