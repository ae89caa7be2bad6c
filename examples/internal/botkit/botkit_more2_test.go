package botkit

import (
	"flag"
	"strings"
	"testing"
	"time"

	"github.com/goodbot-go/goodbot/internal/syncbuf"
)

// ScaleDur multiplies a duration by Env.Scale; 0 (the zero Env) means 1.
func TestScaleDur(t *testing.T) {
	for _, tc := range []struct {
		scale float64
		d     time.Duration
		want  time.Duration
	}{
		{0, time.Minute, time.Minute},
		{1, time.Minute, time.Minute},
		{0.5, time.Minute, 30 * time.Second},
		{0.01, 10 * time.Second, 100 * time.Millisecond},
		{2, time.Second, 2 * time.Second},
	} {
		if got := (Env{Scale: tc.scale}).ScaleDur(tc.d); got != tc.want {
			t.Errorf("Scale %v: ScaleDur(%v) = %v, want %v", tc.scale, tc.d, got, tc.want)
		}
	}
}

// FlagSet registers the common flags, writing to env.Stderr: -key and
// -genkey only for a signing bot, -max-pages (with its default) unless
// the default is negative; -json and -v are off by default.
func TestFlagSet_CommonFlags(t *testing.T) {
	for _, tc := range []struct {
		name      string
		signs     bool
		maxPages  int
		key       bool
		wantPages string // "" means no -max-pages
	}{
		{"signing crawler", true, 100, true, "100"},
		{"unsigned crawler", false, 0, false, "0"},
		{"no crawl", false, -1, false, ""},
	} {
		var stderr syncbuf.Buffer
		f := &Flags{Name: "bot", Signs: tc.signs}
		fs := f.FlagSet(Env{Stderr: &stderr}, tc.maxPages)
		if fs.Name() != "bot" || fs.Output() != &stderr {
			t.Errorf("%s: flag set %q does not write to env.Stderr", tc.name, fs.Name())
		}
		for _, name := range []string{"key", "genkey"} {
			if got := fs.Lookup(name) != nil; got != tc.key {
				t.Errorf("%s: -%s registered: %v, want %v", tc.name, name, got, tc.key)
			}
		}
		mp := fs.Lookup("max-pages")
		switch {
		case tc.wantPages == "" && mp != nil:
			t.Errorf("%s: -max-pages registered", tc.name)
		case tc.wantPages != "" && (mp == nil || mp.DefValue != tc.wantPages):
			t.Errorf("%s: -max-pages %v, want default %s", tc.name, mp, tc.wantPages)
		}
		for _, name := range []string{"json", "v"} {
			if fl := fs.Lookup(name); fl == nil || fl.DefValue != "false" {
				t.Errorf("%s: -%s %v, want a flag off by default", tc.name, name, fl)
			}
		}
		if fl := fs.Lookup("state"); fl == nil || fl.DefValue != DefaultStatePath("bot") {
			t.Errorf("%s: -state %v, want default %s", tc.name, fl, DefaultStatePath("bot"))
		}
	}
}

// -allow-internal takes comma-separated prefixes (spaces and empty items
// ignored; a bare address is its own /32 or /128) and adds to the list
// each time it is given; anything else is refused.
func TestParseAllowInternal(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string // the prefixes, space-separated; "error" for a refusal
	}{
		{[]string{"10.0.0.0/8"}, "10.0.0.0/8"},
		{[]string{" 10.0.0.0/8 , 192.168.0.0/16"}, "10.0.0.0/8 192.168.0.0/16"},
		{[]string{"10.0.0.0/8,"}, "10.0.0.0/8"},
		{[]string{",,"}, ""},
		{[]string{"127.0.0.1"}, "127.0.0.1/32"},
		{[]string{"::1"}, "::1/128"},
		{[]string{"10.0.0.0/8", "127.0.0.0/8"}, "10.0.0.0/8 127.0.0.0/8"},
		{[]string{"10.0.0.0/33"}, "error"},
		{[]string{"intranet"}, "error"},
	} {
		f := &Flags{Name: "bot"}
		fs := f.FlagSet(Env{Stderr: &syncbuf.Buffer{}}, -1)
		var args []string
		for _, a := range tc.args {
			args = append(args, "-allow-internal", a)
		}
		err := fs.Parse(args)
		var got []string
		for _, p := range f.AllowInternal {
			got = append(got, p.String())
		}
		switch {
		case tc.want == "error" && err == nil:
			t.Errorf("%q: accepted as %v", tc.args, got)
		case tc.want != "error" && err != nil:
			t.Errorf("%q: %v", tc.args, err)
		case tc.want != "error" && strings.Join(got, " ") != tc.want:
			t.Errorf("%q: prefixes %v, want %s", tc.args, got, tc.want)
		}
	}
	if got := (&Flags{}).parseAllowInternal("a.b"); got == nil || !strings.Contains(got.Error(), "10.0.0.0/8") {
		t.Errorf("bad prefix: %v, want an example of a prefix", got)
	}
}

// Without -json a result is one short line on stderr: outcome, status,
// bytes and URL, then the final URL when a redirect changed it, the
// matched link and the reason; nothing goes to stdout.
func TestOutput_TextLines(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    Result
		want string
	}{
		{"plain", Result{URL: "http://a.test/", FinalURL: "http://a.test/", Status: 200, Outcome: "ok", Bytes: 12},
			"ok            200      12  http://a.test/\n"},
		{"nothing fetched", Result{URL: "http://a.test/x", Outcome: "disallowed", Reason: "robots.txt"},
			"disallowed      0       0  http://a.test/x  (robots.txt)\n"},
		{"redirected", Result{URL: "http://a.test/", FinalURL: "https://a.test/", Status: 200, Outcome: "ok", Bytes: 5},
			"ok            200       5  http://a.test/ -> https://a.test/\n"},
		{"matched", Result{URL: "http://d.test/", FinalURL: "http://d.test/", Status: 200, Outcome: "listed", Matched: "http://me.test/", Reason: "found"},
			"listed        200       0  http://d.test/  link: http://me.test/  (found)\n"},
	} {
		var stdout, stderr syncbuf.Buffer
		o := &Output{Stdout: &stdout, Stderr: &stderr}
		o.Emit(tc.r)
		if stderr.String() != tc.want || stdout.String() != "" || o.Err() != nil {
			t.Errorf("%s: stderr %q, stdout %q, err %v; want stderr %q", tc.name, stderr.String(), stdout.String(), o.Err(), tc.want)
		}
	}
}

// With -json a result is one JSON line on stdout and nothing on stderr.
func TestOutput_JSONOnly(t *testing.T) {
	var stdout, stderr syncbuf.Buffer
	o := &Output{JSON: true, Stdout: &stdout, Stderr: &stderr}
	o.Emit(Result{URL: "http://a.test/", Status: 200, Outcome: "ok"})
	o.Emit(Result{URL: "http://a.test/b", Status: 404, Outcome: "not_found"})
	if stderr.String() != "" || len(ParseResults(stdout.String())) != 2 || strings.Count(stdout.String(), "\n") != 2 {
		t.Errorf("stdout %q, stderr %q", stdout.String(), stderr.String())
	}
}

// ParseResults keeps the result lines of a bot's stdout and skips
// anything else: blank lines, text, and JSON that is not a result.
func TestParseResults(t *testing.T) {
	out := `{"url":"http://a.test/","status":200,"outcome":"ok","bytes":3}
not json
{"outcome":"summary","status":0}

{"url":"http://a.test/b","outcome":"not_found","status":404}
`
	got := ParseResults(out)
	if len(got) != 2 || got[0].URL != "http://a.test/" || got[0].Bytes != 3 || got[1].Status != 404 {
		t.Errorf("ParseResults = %+v", got)
	}
}

// ParseSites wants a site argument, except with -genkey or as a fleet
// worker (-redis), and says so in one line naming the problem.
func TestParseSites(t *testing.T) {
	for _, tc := range []struct {
		name   string
		f      Flags
		args   []string
		code   int
		ok     bool
		stderr string
	}{
		{"site", Flags{}, []string{"a.test"}, 0, true, ""},
		{"no site", Flags{}, nil, ExitFailure, false, "bot: no site given (see bot -h)\n"},
		{"genkey", Flags{GenKey: "k.pem"}, nil, 0, true, ""},
		{"fleet worker", Flags{Redis: "127.0.0.1:6379"}, nil, 0, true, ""},
		{"bad flag", Flags{}, []string{"-nope", "a.test"}, ExitFailure, false, "bot: flag provided but not defined: -nope (see bot -h)\n"},
	} {
		var stderr syncbuf.Buffer
		tc.f.Name = "bot"
		fs := flag.NewFlagSet("bot", flag.ContinueOnError)
		fs.SetOutput(&stderr)
		code, ok := tc.f.ParseSites(fs, tc.args, "bot SITE...")
		if code != tc.code || ok != tc.ok || stderr.String() != tc.stderr {
			t.Errorf("%s: ParseSites = %d, %v, printed %q; want %d, %v, %q", tc.name, code, ok, stderr.String(), tc.code, tc.ok, tc.stderr)
		}
	}
}
