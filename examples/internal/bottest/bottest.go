// Package bottest runs an example bot's Run function against a fetchtest
// web in a test, and reads back what it printed. It is used by the bots'
// main_test.go files.
package bottest

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"github.com/goodbot-go/goodbot/internal/syncbuf"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/goodbot-go/goodbot/examples/internal/botkit"
	"github.com/goodbot-go/goodbot/fetch/fetchtest"
	"github.com/goodbot-go/goodbot/signing"
)

// RunFunc is a bot's run function.
type RunFunc = botkit.RunFunc

// Output is what one run printed and returned.
type Output struct {
	Code    int
	Stdout  string
	Stderr  string
	Events  []botkit.Event
	Results []botkit.Result // parsed from Stdout when -json was given
}

// Result returns the result line for url (by URL), if any.
func (o *Output) Result(url string) (botkit.Result, bool) {
	for _, r := range o.Results {
		if r.URL == url {
			return r, true
		}
	}
	return botkit.Result{}, false
}

// Run runs run with args against web's in-memory transport (usable inside a
// synctest bubble). The test fails, showing stderr, unless the bot exits with
// status want (0 all done, 1 could not run, 3 some work failed: the table of
// examples/README.md).
func Run(t testing.TB, run RunFunc, web *fetchtest.Web, want int, args ...string) *Output {
	t.Helper()
	return RunWith(t, run, web.RoundTripper(), want, args...)
}

// RunWith is [Run] over transport tr (nil: the bot's own).
func RunWith(t testing.TB, run RunFunc, tr http.RoundTripper, want int, args ...string) *Output {
	t.Helper()
	return RunContext(t, context.Background(), run, tr, 1, want, args...)
}

// RunScaled is [RunWith] with the bot's durations multiplied by scale (for
// tests over real sockets, where time is not fake).
func RunScaled(t testing.TB, run RunFunc, tr http.RoundTripper, scale float64, want int, args ...string) *Output {
	t.Helper()
	return RunContext(t, context.Background(), run, tr, scale, want, args...)
}

// RunContext is [RunScaled] under ctx: canceling ctx is the operator's
// interrupt (Ctrl-C).
func RunContext(t testing.TB, ctx context.Context, run RunFunc, tr http.RoundTripper, scale float64, want int, args ...string) *Output {
	t.Helper()
	return runIn(t, ctx, run, tr, scale, want, nil, args...)
}

// runIn is [RunContext] with the bot's stdout going to w instead of
// Output.Stdout (nil: captured in Output.Stdout).
func runIn(t testing.TB, ctx context.Context, run RunFunc, tr http.RoundTripper, scale float64, want int, w io.Writer, args ...string) *Output {
	t.Helper()
	var stdout, stderr syncbuf.Buffer
	var sout io.Writer = &stdout
	if w != nil {
		sout = w
	}
	out := &Output{}
	var mu sync.Mutex
	env := botkit.Env{Stdout: sout, Stderr: &stderr, Transport: tr, Scale: scale, Observe: func(e botkit.Event) {
		mu.Lock()
		out.Events = append(out.Events, e)
		mu.Unlock()
	}}
	out.Code = run(ctx, args, env)
	out.Stdout, out.Stderr = stdout.String(), stderr.String()
	out.Results = botkit.ParseResults(out.Stdout)
	if out.Code != want {
		t.Errorf("%q: exit %d, want %d; stderr:\n%s", args, out.Code, want, out.Stderr)
	} else if testing.Verbose() {
		t.Logf("exit %d\nstderr:\n%s", out.Code, out.Stderr)
	}
	return out
}

// KeyFile writes key as a PKCS#8 PEM file in a temp dir and returns its path.
func KeyFile(t testing.TB, key ed25519.PrivateKey) string {
	t.Helper()
	b, err := signing.MarshalPrivateKeyPEM(key)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "key.pem")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// Verifier returns a signature check for fetchtest.Signed that trusts only
// key (no directory fetch).
func Verifier(t testing.TB, key ed25519.PrivateKey) func(*http.Request) error {
	t.Helper()
	ks, err := signing.NewKeySet(key.Public().(ed25519.PublicKey))
	if err != nil {
		t.Fatal(err)
	}
	v := &signing.Verifier{Keys: ks}
	return func(r *http.Request) error {
		_, err := v.Verify(r)
		return err
	}
}

// StatePath returns a state file path in a new temporary directory.
func StatePath(t testing.TB) string {
	t.Helper()
	return filepath.Join(t.TempDir(), "state.db")
}

// Args returns the arguments most test runs share, followed by extra:
// -json, -state state (a new temporary file when state is ""), and, when key
// is not nil, -key with a file holding key.
func Args(t testing.TB, key ed25519.PrivateKey, state string, extra ...string) []string {
	t.Helper()
	if state == "" {
		state = StatePath(t)
	}
	args := []string{"-json", "-state", state}
	if key != nil {
		args = append(args, "-key", KeyFile(t, key))
	}
	return append(args, extra...)
}

// CheckHelp checks the bot's -h: exit status 0, a usage line, the common
// flags and each of flags, and a default -state file in the user's cache
// directory (not the working directory).
func CheckHelp(t *testing.T, run RunFunc, flags ...string) {
	t.Helper()
	out := RunWith(t, run, nil, 0, "-h")
	if !strings.HasPrefix(out.Stderr, "usage: ") {
		t.Errorf("-h: no usage line:\n%s", out.Stderr)
	}
	for _, f := range append([]string{"-state", "-json", "-v", "-allow-internal"}, flags...) {
		if !strings.Contains(out.Stderr, "  "+f) {
			t.Errorf("-h does not document %s:\n%s", f, out.Stderr)
		}
	}
	if dir, err := os.UserCacheDir(); err == nil && !strings.Contains(out.Stderr, filepath.Join(dir, "goodbot")) {
		t.Errorf("-h: default -state not in %s:\n%s", dir, out.Stderr)
	}
}

// CheckKeyRequired checks a signing bot's key handling: run over web with
// args but no -key, it refuses (exit 1), says how to make a key and sends
// nothing; with -genkey it writes a key, prints the JWKS and names keyDir,
// where the JWKS is to be published.
func CheckKeyRequired(t *testing.T, run RunFunc, web *fetchtest.Web, keyDir string, args ...string) {
	t.Helper()
	out := Run(t, run, web, 1, append([]string{"-state", StatePath(t)}, args...)...)
	if !strings.Contains(out.Stderr, "-genkey") || len(web.Requests()) != 0 {
		t.Errorf("no key: %d requests\n%s", len(web.Requests()), out.Stderr)
	}
	keyPath := filepath.Join(t.TempDir(), "new.pem")
	out = Run(t, run, web, 0, "-genkey", keyPath)
	if !strings.Contains(out.Stdout, `"keys"`) || !strings.Contains(out.Stderr, keyDir) {
		t.Errorf("genkey:\n%s\n%s", out.Stdout, out.Stderr)
	}
	if _, err := os.Stat(keyPath); err != nil {
		t.Errorf("genkey wrote no key: %v", err)
	}
}

// CheckJSONFields checks the -json wire format (issue 8's fixed surface) of
// the line for url in out.Stdout, as a script reads it: the keys of want are
// present with those values (compared as JSON: numbers are float64; a nil
// value only asks for the key).
func CheckJSONFields(t testing.TB, out *Output, url string, want map[string]any) {
	t.Helper()
	for line := range strings.Lines(out.Stdout) {
		var got map[string]any
		if err := json.Unmarshal([]byte(line), &got); err != nil {
			t.Errorf("-json: not a JSON object: %q", line)
			continue
		}
		if got["url"] != url {
			continue
		}
		for k, v := range want {
			if g, ok := got[k]; !ok || v != nil && g != v {
				t.Errorf("-json %s: %q = %v (present %v), want %v\nline: %s", url, k, g, ok, v, line)
			}
		}
		return
	}
	t.Errorf("-json: no line with \"url\": %q in\n%s", url, out.Stdout)
}

// CheckSiteRefused runs a bot whose purpose site's robots.txt refuses
// (w serves site; purpose is the name its refusal reason gives) beside
// open.test, a site that says nothing: args are followed by the two home
// pages. The refused site gets its robots.txt request and no other, its
// home page is reported usage_refused, and open.test's home page is
// fetched (the crawl ran). The run must exit want.
func CheckSiteRefused(t *testing.T, run RunFunc, w *fetchtest.Web, want int, site, purpose string, args ...string) {
	t.Helper()
	open := w.Host("open.test")
	open.Handle("/robots.txt", fetchtest.Robots("User-agent: *\nAllow: /\n"))
	open.Handle("/", fetchtest.HTML(`<p>A site that says nothing</p>`))
	out := Run(t, run, w, want, append(args, "http://"+site+"/", "http://open.test/")...)

	if n := w.Count("open.test", "/"); n != 1 {
		t.Fatalf("open.test/ requested %d times, want 1: the crawl did not run", n)
	}
	if n := w.Count(site, "/robots.txt"); n != 1 {
		t.Errorf("%s's robots.txt requested %d times, want 1", site, n)
	}
	if n := w.Count(site, ""); n != 1 {
		t.Errorf("%s got %d requests, want only its robots.txt: it refuses the site for %s", site, n, purpose)
	}
	if r, _ := out.Result("http://" + site + "/"); r.Outcome != "usage_refused" || !strings.Contains(r.Reason, "refuses "+purpose) {
		t.Errorf("%s/: %+v, want usage_refused for %s", site, r, purpose)
	}
	if r, _ := out.Result("http://open.test/"); r.Outcome != "ok" {
		t.Errorf("open.test/: %+v, want ok", r)
	}
}
