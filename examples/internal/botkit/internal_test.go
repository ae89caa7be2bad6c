package botkit_test

import (
	"crypto/ed25519"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/goodbot-go/goodbot/examples/internal/bothy"
	"github.com/goodbot-go/goodbot/examples/internal/botkit"
	"github.com/goodbot-go/goodbot/examples/internal/bottest"
	"github.com/goodbot-go/goodbot/examples/internal/directories"
	"github.com/goodbot-go/goodbot/examples/internal/hooty"
	"github.com/goodbot-go/goodbot/examples/internal/listings"
	"github.com/goodbot-go/goodbot/examples/internal/readiness"
	"github.com/goodbot-go/goodbot/examples/internal/sofya"
	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/fetch/fetchtest"
	"github.com/goodbot-go/goodbot/signing"
)

// An internal site on a bot's command line is refused without
// -allow-internal, with one line that names the flag, and the bot exits
// with ExitPartial having sent nothing there; -allow-internal opens exactly
// the ranges it lists.
func TestAllowInternal_CommandLine(t *testing.T) {
	key, err := signing.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	bots := []struct {
		name string
		run  botkit.RunFunc
		key  ed25519.PrivateKey
	}{
		{"bothybot", bothy.Run, key},
		{"readiness", readiness.Run, key},
		{"hootybot", hooty.Run, nil},
		{"sofyabot", sofya.Run, nil},
	}
	for _, b := range bots {
		for _, tt := range []struct {
			site, host string
			flags      []string
			refused    bool
		}{
			{"http://127.0.0.1/", "127.0.0.1", nil, true},
			{"http://localhost/", "localhost", nil, true},
			{"http://169.254.169.254/", "169.254.169.254", []string{"-allow-internal", "10.0.0.0/8"}, true},
			{"http://[::1]/", "::1", []string{"-allow-internal", "127.0.0.0/8"}, true},
			{"http://127.0.0.1/", "127.0.0.1", []string{"-allow-internal", "127.0.0.0/8"}, false},
			{"http://10.1.2.3/", "10.1.2.3", []string{"-allow-internal", "192.168.0.0/16, 10.0.0.0/8"}, false},
		} {
			w := fetchtest.New()
			w.Host(tt.host).Handle("/robots.txt", fetchtest.Robots("User-agent: *\nAllow: /\n")).
				Handle("/", fetchtest.HTML("<p>home</p>"))
			args := append(bottest.Args(t, b.key, "", tt.flags...), tt.site)
			var out *bottest.Output
			code := botkit.ExitOK
			if tt.refused {
				code = botkit.ExitPartial
			}
			synctest.Test(t, func(t *testing.T) { out = bottest.Run(t, b.run, w, code, args...) }) // pacing in fake time
			n := len(w.Requests())
			var named []string
			for _, l := range strings.Split(out.Stderr, "\n") {
				if strings.Contains(l, "-allow-internal") {
					named = append(named, l)
				}
			}
			if !tt.refused {
				if n == 0 || len(named) != 0 {
					t.Errorf("%s %v %s: %d requests, exit %d, refusal lines %q", b.name, tt.flags, tt.site, n, out.Code, named)
				}
				continue
			}
			if n != 0 {
				t.Errorf("%s %v %s: refused site got %d requests", b.name, tt.flags, tt.site, n)
			}
			if out.Code != botkit.ExitPartial {
				t.Errorf("%s %v %s: exit %d, want %d", b.name, tt.flags, tt.site, out.Code, botkit.ExitPartial)
			}
			if len(named) != 1 || !strings.HasPrefix(named[0], b.name+": ") || !strings.Contains(named[0], tt.site) {
				t.Errorf("%s %v %s: want one line naming the site and -allow-internal, got %q\n%s", b.name, tt.flags, tt.site, named, out.Stderr)
			}
		}
	}
}

// A bad -allow-internal value is a usage error that names the flag.
func TestAllowInternal_BadPrefix(t *testing.T) {
	w := fetchtest.New()
	out := bottest.Run(t, hooty.Run, w, botkit.ExitFailure, append(bottest.Args(t, nil, "", "-allow-internal", "10.0.0.0/33"), "http://a.test/")...)
	if out.Code == botkit.ExitOK || !strings.Contains(out.Stderr, "-allow-internal") || len(w.Requests()) != 0 {
		t.Errorf("exit %d, %d requests\n%s", out.Code, len(w.Requests()), out.Stderr)
	}
}

// A site or listing URL with a password never shows the password in the
// bot's messages or result lines.
func TestNoPasswordInMessages(t *testing.T) {
	for _, arg := range []string{"http://user:secret@a.test/", "https://user:secret@a.test/%zz", "user:secret@a.test"} {
		_, err := botkit.SiteURL(arg)
		if err == nil || strings.Contains(err.Error(), "secret") {
			t.Errorf("SiteURL(%q): %v", arg, err)
		}
	}
	r := botkit.ResultOf("http://user:secret@a.test/", nil, fetch.ErrBadURL)
	if strings.Contains(r.URL, "secret") || strings.Contains(r.Reason, "secret") || r.URL != "http://user:xxxxx@a.test/" {
		t.Errorf("result %+v", r)
	}
	csv := "listing_url,backlink,directory,schedule\nhttp://user:secret@a.test/%zz,http://d.test/,d.test,daily\nhttp://a.test/,ftp://user:secret@d.test/,d.test,daily\n"
	_, err := listings.Parse(strings.NewReader(csv), "listings.csv")
	if err == nil || strings.Contains(err.Error(), "secret") {
		t.Errorf("listings: %v", err)
	}
}

// The key file is read up to botkit.MaxKeyBytes (64 KiB): -key /dev/zero,
// or any file larger than that, is refused with one clear line and exit 1,
// before any request; a file at the bound is read (and refused as not PEM).
func TestKeyFileBounded(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.pem")
	if err := os.WriteFile(big, make([]byte, botkit.MaxKeyBytes+1), 0o600); err != nil {
		t.Fatal(err)
	}
	atBound := filepath.Join(dir, "bound.pem")
	if err := os.WriteFile(atBound, make([]byte, botkit.MaxKeyBytes), 0o600); err != nil {
		t.Fatal(err)
	}
	paths := []string{big, atBound}
	if _, err := os.Stat("/dev/zero"); err == nil {
		paths = append(paths, "/dev/zero")
	} else if os.Getenv("CI") != "" {
		t.Fatalf("/dev/zero: %v", err)
	}
	for _, p := range paths {
		_, err := botkit.LoadKey(p)
		if tooLarge := p != atBound; err == nil || errors.Is(err, botkit.ErrInputTooLarge) != tooLarge {
			t.Errorf("LoadKey(%s): %v", p, err)
		}
		w := fetchtest.New()
		w.Host("a.test").Handle("/", fetchtest.HTML("home"))
		out := bottest.Run(t, bothy.Run, w, botkit.ExitFailure, "-state", bottest.StatePath(t), "-key", p, "http://a.test/")
		lines := strings.Split(strings.TrimSpace(out.Stderr), "\n")
		if out.Code != botkit.ExitFailure || len(lines) != 1 || !strings.Contains(lines[0], p) || len(w.Requests()) != 0 {
			t.Errorf("-key %s: exit %d, %d requests, stderr %q", p, out.Code, len(w.Requests()), out.Stderr)
		}
	}
}

// OpenBounded reads a file up to its bound and fails one byte past it.
func TestOpenBounded(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct {
		size, max int
		tooLarge  bool
	}{{0, 0, false}, {10, 10, false}, {11, 10, true}, {9, 10, false}, {1 << 20, 64 << 10, true}} {
		p := filepath.Join(dir, "f")
		if err := os.WriteFile(p, make([]byte, tt.size), 0o600); err != nil {
			t.Fatal(err)
		}
		f, err := botkit.OpenBounded(p, int64(tt.max))
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(f)
		f.Close()
		if errors.Is(err, botkit.ErrInputTooLarge) != tt.tooLarge || (err == nil && len(b) != tt.size) || len(b) > tt.max {
			t.Errorf("size %d bound %d: %d bytes, %v", tt.size, tt.max, len(b), err)
		}
	}
}

// directoriesbot's -listings and -blocklist files are read up to their
// bounds (64 MiB, 16 MiB): /dev/zero is refused with one line naming it,
// exit 1, and nothing is fetched.
func TestDirectoriesInputFilesBounded(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("/dev/zero: %v", err)
		}
		t.Skipf("no /dev/zero here: %v", err)
	}
	key, err := signing.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	good := filepath.Join(t.TempDir(), "listings.csv")
	if err := os.WriteFile(good, []byte("listing_url,backlink,directory,schedule\nhttp://a.test/,http://d.test/,d.test,daily\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	bigBlock := filepath.Join(t.TempDir(), "blocked.txt")
	if err := os.WriteFile(bigBlock, []byte(strings.Repeat("spam.example\n", botkit.MaxBlockListBytes/13+1)), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		flags    []string
		name     string
		tooLarge bool
	}{
		{[]string{"-listings", "/dev/zero"}, "/dev/zero", true},
		{[]string{"-listings", good, "-blocklist", bigBlock}, bigBlock, true},
		{[]string{"-listings", good, "-blocklist", "/dev/zero"}, "/dev/zero", false}, // one line over 64 KiB: bounded by the line limit
	} {
		flags := tt.flags
		w := fetchtest.New()
		w.Host("a.test").Handle("/", fetchtest.HTML("home"))
		out := bottest.Run(t, directories.Run, w, botkit.ExitFailure, bottest.Args(t, key, "", flags...)...)
		lines := strings.Split(strings.TrimSpace(out.Stderr), "\n")
		last := lines[len(lines)-1]
		if out.Code != botkit.ExitFailure || !strings.Contains(last, tt.name) || strings.Contains(last, "too large") != tt.tooLarge || len(w.Requests()) != 0 {
			t.Errorf("%v: exit %d, %d requests, stderr %q", flags, out.Code, len(w.Requests()), out.Stderr)
		}
	}
}

// A robots.txt answered with a challenge page (200 or 403) closes the site
// for the bot: nothing else is fetched, and the result line says why.
func TestChallengedRobotsClosesSite(t *testing.T) {
	for _, status := range []int{200, 403} {
		w := fetchtest.New()
		w.Host("docs.test").Handle("/robots.txt", fetchtest.Challenge(status)).
			Handle("/", fetchtest.HTML(`<a href="/private">p</a>`)).Handle("/private", fetchtest.HTML("private"))
		var out *bottest.Output
		synctest.Test(t, func(t *testing.T) {
			out = bottest.Run(t, hooty.Run, w, botkit.ExitPartial, append(bottest.Args(t, nil, ""), "http://docs.test/")...)
		})
		if n := w.Count("docs.test", "/robots.txt"); n == 0 {
			t.Fatalf("%d: robots.txt never asked for", status)
		}
		if n := w.Count("docs.test", "/") + w.Count("docs.test", "/private"); n != 0 {
			t.Errorf("%d: %d pages fetched behind a challenged robots.txt", status, n)
		}
		r, ok := out.Result("http://docs.test/")
		if !ok || r.Outcome != "unreachable" || !strings.Contains(r.Reason, "robots.txt answered with a challenge page, not rules (cloudflare") {
			t.Errorf("%d: result %+v (found %v)\n%s", status, r, ok, out.Stdout)
		}
	}
}
