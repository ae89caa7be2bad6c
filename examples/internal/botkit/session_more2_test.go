package botkit

import (
	"context"
	"crypto/ed25519"
	"log/slog"
	"net/http"
	"net/netip"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goodbot-go/goodbot/examples/internal/profiles"
	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/internal/syncbuf"
	"github.com/goodbot-go/goodbot/politeness"
	"github.com/goodbot-go/goodbot/robots"
	"github.com/goodbot-go/goodbot/signing/identity"
)

// Start gives the session what the flags ask for: JSON results with
// -json (on the Env's streams), debug logs with -v, and every log line
// naming the bot.
func TestStart_OutputAndLog(t *testing.T) {
	for _, tc := range []struct {
		name          string
		json, verbose bool
	}{
		{"plain", false, false},
		{"json", true, false},
		{"verbose", false, true},
	} {
		var stdout, stderr syncbuf.Buffer
		f := &Flags{Name: "kitbot", State: filepath.Join(t.TempDir(), "s.db"), JSON: tc.json, Verbose: tc.verbose}
		s, code, done := Start(context.Background(), f, Env{Stdout: &stdout, Stderr: &stderr}, "")
		if done {
			t.Fatalf("%s: Start = %d: %s", tc.name, code, stderr.String())
		}
		if s.Out.JSON != tc.json || s.Out.Stdout != &stdout || s.Out.Stderr != &stderr {
			t.Errorf("%s: output %+v, want JSON %v on the Env's streams", tc.name, s.Out, tc.json)
		}
		if got := s.Log.Enabled(context.Background(), slog.LevelDebug); got != tc.verbose {
			t.Errorf("%s: debug logs %v, want %v", tc.name, got, tc.verbose)
		}
		s.Log.Info("hello")
		if !strings.Contains(stderr.String(), "msg=hello bot=kitbot") {
			t.Errorf("%s: log line %q does not name the bot", tc.name, stderr.String())
		}
		s.Close()
	}
}

// -genkey for a bot whose operator lists IP ranges also prints the IP
// range file (after the card) and says where to publish it; without
// ranges there is no such file and no such line.
func TestStart_GenKeyIPRanges(t *testing.T) {
	dir := t.TempDir()
	op := profiles.BothyOperator()
	op.IPRanges = []netip.Prefix{netip.MustParsePrefix("203.0.113.0/24")}
	op.IPsURL = "https://bothy.tools/bot/ips.json"
	for _, tc := range []struct {
		name   string
		op     identity.Operator
		ranges bool
	}{
		{"ranges", op, true},
		{"no ranges", profiles.BothyOperator(), false},
	} {
		var stdout, stderr syncbuf.Buffer
		kit := func(k ed25519.PrivateKey) (*identity.Kit, error) {
			return identity.New(profiles.Bothy(k, 1), tc.op, time.Now())
		}
		f := &Flags{Name: "bot", Signs: true, GenKey: filepath.Join(dir, tc.name+".pem"), Identity: kit}
		if s, code, done := Start(context.Background(), f, Env{Stdout: &stdout, Stderr: &stderr}, "https://example.com/keys"); s != nil || !done || code != ExitOK {
			t.Fatalf("%s: Start = %v, %d, %v: %s", tc.name, s, code, done, stderr.String())
		}
		card := strings.Index(stdout.String(), `"client_name"`)
		ips := strings.Index(stdout.String(), "203.0.113.0/24")
		said := strings.Contains(stderr.String(), "bot: and the IP range file after that at https://bothy.tools/bot/ips.json\n")
		switch {
		case card < 0:
			t.Errorf("%s: no card on stdout:\n%s", tc.name, stdout.String())
		case tc.ranges && (ips < card || !said):
			t.Errorf("%s: IP range file at %d (card at %d), named on stderr %v:\n%s\n%s", tc.name, ips, card, said, stdout.String(), stderr.String())
		case !tc.ranges && (strings.Contains(stderr.String(), "IP range") || !strings.HasSuffix(stdout.String(), "}\n")):
			t.Errorf("%s: an IP range file without ranges:\n%s\n%s", tc.name, stdout.String(), stderr.String())
		}
	}
}

// Begin ends the run with Start's status when Start does: 0 after
// -genkey, 1 without a key; a bot that runs gets its session and fetcher.
func TestBegin_StartDone(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		f    Flags
		code int
		done bool
	}{
		{"genkey", Flags{Signs: true, GenKey: filepath.Join(dir, "k.pem")}, ExitOK, true},
		{"no key", Flags{Signs: true, State: filepath.Join(dir, "a.db")}, ExitFailure, true},
		{"runs", Flags{State: filepath.Join(dir, "b.db")}, 0, false},
	} {
		tc.f.Name = "bot"
		var stderr syncbuf.Buffer
		s, fetcher, code, done := Begin(context.Background(), &tc.f, Env{Stdout: &syncbuf.Buffer{}, Stderr: &stderr}, "https://example.com/keys",
			func(ed25519.PrivateKey) fetch.Bot { return testBot() })
		if code != tc.code || done != tc.done || (s == nil) != done || (fetcher == nil) != done {
			t.Errorf("%s: Begin = %v, %v, %d, %v; want %d, %v: %s", tc.name, s, fetcher, code, done, tc.code, tc.done, stderr.String())
		}
		s.Close()
	}
}

// closeCounter is a transport that counts its CloseIdleConnections calls.
type closeCounter struct {
	countingRT
	closed atomic.Int32
}

func (c *closeCounter) CloseIdleConnections() { c.closed.Add(1) }

var _ http.RoundTripper = (*closeCounter)(nil)

// Close closes the fetcher's idle connections, down to the base transport.
func TestClose_IdleConnections(t *testing.T) {
	tr := &closeCounter{}
	f := &Flags{Name: "bot", State: filepath.Join(t.TempDir(), "s.db")}
	s, _, code, done := Begin(context.Background(), f, Env{Stdout: &syncbuf.Buffer{}, Stderr: &syncbuf.Buffer{}, Transport: tr}, "",
		func(ed25519.PrivateKey) fetch.Bot { return testBot() })
	if done {
		t.Fatalf("Begin: %d", code)
	}
	before := tr.closed.Load()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if tr.closed.Load() == before {
		t.Error("Close left the idle connections open")
	}
}

// Close reports a state file it could not bring up to date (the last
// checkpoint failed: its log is kept for the next open) rather than nil.
func TestClose_ReportsStateError(t *testing.T) {
	f := &Flags{Name: "bot", State: filepath.Join(t.TempDir(), "s.db")}
	s, code, done := Start(context.Background(), f, Env{Stdout: &syncbuf.Buffer{}, Stderr: &syncbuf.Buffer{}}, "")
	if done {
		t.Fatalf("Start: %d", code)
	}
	u := mustURL(t, "http://a.test/")
	if err := s.stores.robots.Save(context.Background(), politeness.HostKey(u), robots.Entry{Fetched: time.Unix(1000, 0), Status: 200}); err != nil {
		t.Fatal(err)
	}
	s.DB.Close() // the checkpoint can no longer write to it
	if err := s.Close(); err == nil {
		t.Error("Close = nil after its last checkpoint failed")
	}
}
