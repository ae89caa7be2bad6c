package botkit

import (
	"context"
	"crypto/ed25519"
	"errors"
	"flag"
	"io"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/goodbot-go/goodbot/examples/internal/profiles"
	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/internal/syncbuf"
	"github.com/goodbot-go/goodbot/politeness"
	"github.com/goodbot-go/goodbot/robots"
	"github.com/goodbot-go/goodbot/signing/identity"
)

// A pacing event's duration is its Duration, else the time left until
// Until; its reason names the status and the error, or falls back to the
// event's kind.
func TestEventDurAndReason(t *testing.T) {
	now := time.Now()
	for _, tc := range []struct {
		name     string
		e        politeness.Event
		min, max time.Duration
		reason   string
	}{
		{"duration", politeness.Event{Kind: politeness.EventWait, Reason: "delay", Duration: 2 * time.Second}, 2 * time.Second, 2 * time.Second, "delay"},
		{"until", politeness.Event{Kind: politeness.EventPause, Reason: "retry-after", Until: now.Add(time.Hour), Status: 429}, 59 * time.Minute, time.Hour, "retry-after (status 429)"},
		{"nothing", politeness.Event{Kind: politeness.EventPause, Err: errors.New("boom")}, 0, 0, ": boom"},
		{"kind only", politeness.Event{Kind: politeness.EventWait}, 0, 0, "wait"},
		{"status and error", politeness.Event{Kind: politeness.EventPause, Reason: "backoff", Status: 503, Err: errors.New("x")}, 0, 0, "backoff (status 503): x"},
	} {
		if d := eventDur(tc.e); d < tc.min || d > tc.max {
			t.Errorf("%s: eventDur = %v, want in [%v, %v]", tc.name, d, tc.min, tc.max)
		}
		if r := eventReason(tc.e); r != tc.reason {
			t.Errorf("%s: eventReason = %q, want %q", tc.name, r, tc.reason)
		}
	}
}

// SiteURL takes an absolute http(s) URL or a bare host (https), and refuses
// anything else.
func TestSiteURL_More(t *testing.T) {
	for _, tc := range []struct {
		arg, want string // want "" means refused
	}{
		{"example.com", "https://example.com/"},
		{"  example.com/x  ", "https://example.com/x"},
		{"http://example.com", "http://example.com/"},
		{"https://example.com/a#frag", "https://example.com/a"},
		{"ftp://example.com/", ""},
		{"http://user:pw@example.com/", ""},
		{"http:///nohost", ""},
		{"http://exa mple.com/", ""},
	} {
		u, err := SiteURL(tc.arg)
		switch {
		case tc.want == "" && err == nil:
			t.Errorf("SiteURL(%q) = %v, want an error", tc.arg, u)
		case tc.want != "" && err != nil:
			t.Errorf("SiteURL(%q): %v", tc.arg, err)
		case tc.want != "" && u.String() != tc.want:
			t.Errorf("SiteURL(%q) = %q, want %q", tc.arg, u, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "pw") {
			t.Errorf("SiteURL(%q): password in %q", tc.arg, err)
		}
	}
}

// Sites keeps the good site arguments, says why each bad one is skipped and
// gives ExitPartial when one was; an internal address needs -allow-internal.
func TestSites(t *testing.T) {
	for _, tc := range []struct {
		name  string
		args  []string
		allow []netip.Prefix
		want  []string
		code  int
		msg   string
	}{
		{"good", []string{"a.test", "http://b.test/x"}, nil, []string{"https://a.test/", "http://b.test/x"}, ExitOK, ""},
		{"bad one", []string{"a.test", "ftp://b.test/"}, nil, []string{"https://a.test/"}, ExitPartial, "skipped"},
		{"internal", []string{"http://127.0.0.1:8080/"}, nil, nil, ExitPartial, "-allow-internal 127.0.0.1/32"},
		{"internal allowed", []string{"http://127.0.0.1:8080/"}, []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, []string{"http://127.0.0.1:8080/"}, ExitOK, ""},
	} {
		var stderr syncbuf.Buffer
		fs := flag.NewFlagSet("bot", flag.ContinueOnError)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		f := &Flags{Name: "bot", AllowInternal: tc.allow}
		sites, code := f.Sites(fs, Env{Stderr: &stderr})
		var got []string
		for _, u := range sites {
			got = append(got, u.String())
		}
		if strings.Join(got, " ") != strings.Join(tc.want, " ") || code != tc.code {
			t.Errorf("%s: sites %v code %d, want %v and %d", tc.name, got, code, tc.want, tc.code)
		}
		if !strings.Contains(stderr.String(), tc.msg) || (tc.msg == "" && stderr.String() != "") {
			t.Errorf("%s: stderr %q, want %q", tc.name, stderr.String(), tc.msg)
		}
	}
}

// Start opens the state file; with Resume the session has a journal and a
// spill, without it neither; Close releases the file.
func TestStart_StateAndJournal(t *testing.T) {
	for _, resume := range []bool{false, true} {
		path := filepath.Join(t.TempDir(), "s.db")
		var stderr syncbuf.Buffer
		s, code, done := Start(context.Background(), &Flags{Name: "bot", State: path, Resume: resume}, Env{Stdout: io.Discard, Stderr: &stderr}, "")
		if done || code != 0 || s == nil {
			t.Fatalf("resume=%v: Start = %v, %d, %v: %s", resume, s, code, done, stderr.String())
		}
		if s.DB == nil {
			t.Errorf("resume=%v: no state file open", resume)
		}
		if got := s.Journal() != nil; got != resume {
			t.Errorf("resume=%v: Journal() != nil is %v", resume, got)
		}
		if got := s.Spill() != nil; got != resume {
			t.Errorf("resume=%v: Spill() != nil is %v", resume, got)
		}
		if s.SitemapStore() == nil {
			t.Errorf("resume=%v: no sitemap store", resume)
		}
		if err := s.Close(); err != nil {
			t.Errorf("resume=%v: Close: %v", resume, err)
		}
		db, err := OpenState(path, nil) // the lock is released
		if err != nil {
			t.Fatalf("resume=%v: reopen after Close: %v", resume, err)
		}
		db.Close()
	}
	var nilSession *Session
	if err := nilSession.Close(); err != nil {
		t.Errorf("nil session Close: %v", err)
	}
}

// A signing bot refuses to run without a key, saying how to make one;
// -genkey writes a key and ends the run with 0; a state file in use fails.
func TestStart_KeysAndErrors(t *testing.T) {
	dir := t.TempDir()
	busy := filepath.Join(dir, "busy.db")
	db, err := OpenState(busy, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	keyPath := filepath.Join(dir, "k.pem")
	for _, tc := range []struct {
		name     string
		f        Flags
		code     int
		done     bool
		msg      string
		keyAfter bool
	}{
		{"unsigned refused", Flags{Signs: true, State: filepath.Join(dir, "a.db")}, ExitFailure, true, "refusing to run unsigned", false},
		{"genkey", Flags{Signs: true, GenKey: keyPath, State: filepath.Join(dir, "b.db")}, ExitOK, true, "wrote " + keyPath, true},
		{"genkey exists", Flags{Signs: true, GenKey: keyPath, State: filepath.Join(dir, "b.db")}, ExitFailure, true, "bot: ", true},
		{"key loaded", Flags{Signs: true, Key: keyPath, State: filepath.Join(dir, "c.db")}, 0, false, "", true},
		{"bad key", Flags{Signs: true, Key: filepath.Join(dir, "nokey.pem"), State: filepath.Join(dir, "d.db")}, ExitFailure, true, "bot: ", true},
		{"state in use", Flags{State: busy}, ExitFailure, true, "in use", true},
	} {
		tc.f.Name = "bot"
		var stdout, stderr syncbuf.Buffer
		s, code, done := Start(context.Background(), &tc.f, Env{Stdout: &stdout, Stderr: &stderr}, "https://example.com/keys")
		if code != tc.code || done != tc.done || (s == nil) != done {
			t.Errorf("%s: Start = %v, %d, %v; want %d, %v", tc.name, s, code, done, tc.code, tc.done)
		}
		if !strings.Contains(stderr.String(), tc.msg) {
			t.Errorf("%s: stderr %q lacks %q", tc.name, stderr.String(), tc.msg)
		}
		if _, err := os.Stat(keyPath); (err == nil) != tc.keyAfter {
			t.Errorf("%s: key file there: %v", tc.name, err == nil)
		}
		if s != nil {
			if tc.name == "key loaded" && s.Key == nil {
				t.Errorf("%s: no key in the session", tc.name)
			}
			s.Close()
		}
	}
}

// Apply puts the session's transport, logger, progress observer and stores
// into the bot; the observer passes each event on to Env.Observe.
func TestApply(t *testing.T) {
	var events []Event
	tr := &countingRT{}
	s, _ := testSession(t, Env{Stderr: io.Discard, Transport: tr, Observe: func(e Event) { events = append(events, e) }})
	bot := testBot()
	if err := s.Apply(&bot); err != nil {
		t.Fatal(err)
	}
	if bot.Transport != tr || bot.Logger != s.Log || s.Prog == nil {
		t.Errorf("transport %v, logger %v, progress %v", bot.Transport, bot.Logger == s.Log, s.Prog)
	}
	if bot.RobotsStore != s.stores.robots || bot.Validators != s.stores.validators || bot.Fetched != s.stores.fetched {
		t.Error("stores not applied")
	}
	bot.Observe(politeness.Event{Kind: politeness.EventPause, Host: "http://a.test:80", Reason: "retry-after", Duration: time.Minute})
	if len(events) != 1 || events[0].Host != "http://a.test:80" || events[0].Kind != "pause" || events[0].Dur != time.Minute || events[0].Reason != "retry-after" {
		t.Errorf("events %+v", events)
	}
	s.Prog.mu.Lock()
	why := s.Prog.wait["http://a.test:80"]
	s.Prog.mu.Unlock()
	if why != "retry-after" {
		t.Errorf("progress did not see the pause: %q", why)
	}
	// Without Env.Transport the bot's own stays.
	s2, _ := testSession(t, Env{Stderr: io.Discard})
	bot2 := testBot()
	bot2.Transport = tr
	s2.Apply(&bot2)
	if bot2.Transport != tr {
		t.Error("the bot's own transport replaced")
	}
}

type countingRT struct{}

func (*countingRT) RoundTrip(*http.Request) (*http.Response, error) {
	return nil, errors.New("no network")
}

// RobotsEntry reads the robots.txt outcome saved for a URL's origin.
func TestRobotsEntry(t *testing.T) {
	s, _ := testSession(t, Env{})
	u := mustURL(t, "http://a.test/some/page")
	if _, ok := s.RobotsEntry(context.Background(), u); ok {
		t.Error("entry before any was saved")
	}
	want := robots.Entry{Fetched: time.Unix(1000, 0), Status: 200, Body: []byte("User-agent: *\n")}
	if err := s.stores.robots.Save(context.Background(), politeness.HostKey(u), want); err != nil {
		t.Fatal(err)
	}
	got, ok := s.RobotsEntry(context.Background(), u)
	if !ok || got.Status != 200 || string(got.Body) != string(want.Body) {
		t.Errorf("RobotsEntry = %+v, %v", got, ok)
	}
	if _, ok := s.RobotsEntry(context.Background(), mustURL(t, "https://a.test/")); ok {
		t.Error("entry of another origin")
	}
}

var _ = fetch.Redact

// -genkey for a bot with an identity also prints its Signature Agent Card
// (after the JWKS) and says where to publish it; a card that cannot be made
// fails the run.
func TestStart_GenKeyIdentity(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name     string
		identity func(ed25519.PrivateKey) (*identity.Kit, error)
		code     int
		stdout   string
		stderr   string
	}{
		{"card", profiles.BothyKit, ExitOK, `"client_name"`, "and the Signature Agent Card after it at "},
		{"no card", func(ed25519.PrivateKey) (*identity.Kit, error) { return nil, errors.New("no card today") }, ExitFailure, `"kid"`, "bot: no card today"},
	} {
		var stdout, stderr syncbuf.Buffer
		f := &Flags{Name: "bot", Signs: true, GenKey: filepath.Join(dir, tc.name+".pem"), Identity: tc.identity}
		s, code, done := Start(context.Background(), f, Env{Stdout: &stdout, Stderr: &stderr}, "https://example.com/keys")
		if s != nil || !done || code != tc.code {
			t.Errorf("%s: Start = %v, %d, %v", tc.name, s, code, done)
		}
		if _, err := os.Stat(f.GenKey); err != nil {
			t.Errorf("%s: key not written: %v", tc.name, err)
		}
		if !strings.Contains(stdout.String(), tc.stdout) || !strings.Contains(stderr.String(), tc.stderr) {
			t.Errorf("%s: stdout %q\nstderr %q", tc.name, stdout.String(), stderr.String())
		}
	}
}
