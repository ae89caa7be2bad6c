package main

import (
	"bufio"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"github.com/goodbot-go/goodbot/internal/syncbuf"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/goodbot-go/goodbot/examples/internal/botkit"
	"github.com/goodbot-go/goodbot/examples/internal/bottest"
	"github.com/goodbot-go/goodbot/examples/internal/directories"
	"github.com/goodbot-go/goodbot/examples/internal/listings"
	"github.com/goodbot-go/goodbot/examples/internal/profiles"
	"github.com/goodbot-go/goodbot/fetch/fetchtest"
	"github.com/goodbot-go/goodbot/signing"
	"github.com/goodbot-go/goodbot/signing/signingtest"
)

const backlink = "https://citydir.test/listing/"

func page(links ...string) http.Handler {
	var b strings.Builder
	b.WriteString(`<html><body><a href="/">home</a><a href="/more">more</a>`)
	for _, l := range links {
		fmt.Fprintf(&b, `<a href=%q>partner</a>`, l)
	}
	return fetchtest.HTML(b.String() + "</body></html>")
}

// web: one host per case.
func web() *fetchtest.Web {
	w := fetchtest.New()
	allow := fetchtest.Robots("User-agent: *\nDisallow: /private\n\nUser-agent: DirectoriesBot\nDisallow:\n")
	for _, h := range []string{"ok.test", "missing.test", "gone.test", "moved.test", "far.test", "slow.test", "huge.test", "cookie.test", "spam.test", "shield.test", "many.test"} {
		w.Host(h).Handle("/robots.txt", allow)
	}
	w.Host("ok.test").Handle("/partners", page("/about", "https://WWW.citydir.test:443/listing/ok#top"))
	w.Host("ok.test").Handle("/private", page(backlink+"ok")) // * disallows, DirectoriesBot's empty Disallow allows
	w.Host("missing.test").Handle("/partners", page("https://elsewhere.test/"))
	w.Host("gone.test").Handle("/partners", fetchtest.Status(http.StatusNotFound))
	w.Host("moved.test").HandleChain("/p", 3, page(backlink+"moved"))
	w.Host("far.test").HandleChain("/p", 4, page(backlink+"far"))
	w.Host("slow.test").Handle("/partners", fetchtest.Slow(20*time.Second, page(backlink+"slow")))
	w.Host("huge.test").Handle("/partners", fetchtest.Huge(8<<20))
	w.Host("cookie.test").Handle("/partners", fetchtest.SetCookie("sid", "1", fetchtest.Redirect("/p2", 0)))
	w.Host("cookie.test").Handle("/p2", page(backlink+"cookie"))
	w.Host("spam.test").Handle("/partners", page(backlink+"spam"))
	w.Host("shield.test").Handle("/partners", fetchtest.Challenge(http.StatusForbidden))
	w.Host("norobots.test").Handle("/partners", page(backlink+"norobots")) // robots.txt 404: no restrictions
	w.Host("robots500.test").Handle("/robots.txt", fetchtest.Status(http.StatusInternalServerError))
	w.Host("robots500.test").Handle("/partners", page(backlink+"robots500"))
	w.Host("plumber.test").Handle("/robots.txt", fetchtest.Robots("User-agent: *\nAllow: /\n\nUser-agent: DirectoriesBot\nDisallow: /partners\n"))
	w.Host("plumber.test").Handle("/partners", page(backlink+"plumber"))
	for i := range 5 {
		w.Host("many.test").Handle(fmt.Sprintf("/l%d", i), page(backlink+"many"))
	}
	return w
}

type row struct{ url, dir, sched string }

func writeListings(t *testing.T, rows []row, extra string) string {
	var b strings.Builder
	b.WriteString("listing_url,backlink,directory,schedule\n")
	for _, r := range rows {
		host := strings.Split(strings.TrimPrefix(r.url, "http://"), "/")[0]
		fmt.Fprintf(&b, "%s,%s%s,%s,%s\n", r.url, backlink, strings.TrimSuffix(host, ".test"), r.dir, r.sched)
	}
	b.WriteString(extra)
	p := filepath.Join(t.TempDir(), "listings.csv")
	if err := os.WriteFile(p, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func blocklist(t *testing.T) string {
	p := filepath.Join(t.TempDir(), "blocked.txt")
	os.WriteFile(p, []byte("# owner asked\nspam.test\n"), 0o600)
	return p
}

func records(t *testing.T, state string) map[string]listings.Record {
	out := bottest.RunWith(t, directories.Run, nil, 0, "-state", state, "-list")
	recs := map[string]listings.Record{}
	sc := bufio.NewScanner(strings.NewReader(out.Stdout))
	for sc.Scan() {
		var r listings.Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		recs[r.Listing] = r
	}
	return recs
}

// D1 D2 D3 D4 D5 D6 D7 D8 D11 D13 D14: one run over every kind of listing.
func TestDirectories_D1_D2_D3_D4_D5_D6_D7_D8_D11_D13_D14_AllOutcomes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := web()
		rows := []row{
			{"http://ok.test/partners", "citydir.test", "weekly"},
			{"http://ok.test/private", "citydir.test", "weekly"},
			{"http://missing.test/partners", "citydir.test", "weekly"},
			{"http://gone.test/partners", "citydir.test", "weekly"},
			{"http://moved.test/p/0", "citydir.test", "weekly"},
			{"http://far.test/p/0", "citydir.test", "weekly"},
			{"http://slow.test/partners", "citydir.test", "weekly"},
			{"http://huge.test/partners", "citydir.test", "weekly"},
			{"http://cookie.test/partners", "citydir.test", "weekly"},
			{"http://spam.test/partners", "citydir.test", "weekly"},
			{"http://shield.test/partners", "citydir.test", "weekly"},
			{"http://norobots.test/partners", "otherdir.test", "daily"},
			{"http://robots500.test/partners", "citydir.test", "weekly"},
			{"http://plumber.test/partners", "citydir.test", "monthly"},
		}
		file := writeListings(t, rows, "http://bad.test/x,https://citydir.test/l,citydir.test,fortnightly\n")
		state := bottest.StatePath(t)
		key := signingtest.DirectoriesKey()
		// 3: the malformed row, and the listings that could not be checked.
		out := bottest.Run(t, directories.Run, w, 3, bottest.Args(t, key, state, "-listings", file, "-blocklist", blocklist(t))...)
		if !strings.Contains(out.Stderr, "line 16: schedule \"fortnightly\"") {
			t.Errorf("malformed row not named by line:\n%s", out.Stderr)
		}
		want := map[string]string{
			"http://ok.test/partners":        "verified",     // D6
			"http://ok.test/private":         "verified",     // D7: empty Disallow in its own group
			"http://missing.test/partners":   "link_missing", // D6
			"http://gone.test/partners":      "error",        // status 404
			"http://moved.test/p/0":          "verified",     // D4: 3 redirects followed
			"http://far.test/p/0":            "error",        // D4: not 4
			"http://slow.test/partners":      "error",        // D11: 15 s
			"http://huge.test/partners":      "error",        // D11: 5 MB
			"http://cookie.test/partners":    "verified",     // D5
			"http://spam.test/partners":      "blocked_domain",
			"http://shield.test/partners":    "blocked",
			"http://norobots.test/partners":  "verified",    // D8: robots.txt 404, no restrictions
			"http://robots500.test/partners": "unreachable", // D8: robots.txt error, page not fetched
			"http://plumber.test/partners":   "unverified",  // D13
		}
		for u, o := range want {
			if r, _ := out.Result(u); r.Outcome != o {
				t.Errorf("%s: %+v, want %s", u, r, o)
			}
		}
		if r, _ := out.Result("http://ok.test/partners"); r.Matched != "https://WWW.citydir.test:443/listing/ok" || r.Status != 200 {
			t.Errorf("D6: matched link %+v", r)
		}
		// The -json surface of issue 8, as a script reads it (D6).
		bottest.CheckJSONFields(t, out, "http://moved.test/p/0", map[string]any{
			"final_url": "http://moved.test/p/3", "status": 200.0, "outcome": "verified", "bytes": nil,
			"matched_link": backlink + "moved",
		})
		if r, _ := out.Result("http://far.test/p/0"); !strings.Contains(r.Reason, "redirect") {
			t.Errorf("D4: %+v", r)
		}
		if r, _ := out.Result("http://slow.test/partners"); !strings.Contains(r.Reason, "timed out") && !strings.Contains(r.Reason, "timeout") {
			t.Errorf("D11: %+v", r)
		}
		w.Check(t,
			fetchtest.Signed(bottest.Verifier(t, key)),                                 // D2
			fetchtest.HeaderIs("Signature-Agent", `"https://directories.prosvita.io"`), // D2: quoted
			fetchtest.NoCookies(), fetchtest.OnlyGetHead(), fetchtest.NoOverlap(), // D5, D10
			fetchtest.NotFetched("plumber.test", "/partners"), fetchtest.NotFetched("robots500.test", "/partners"),
			fetchtest.NotFetched("far.test", "/p/4"),
			fetchtest.AtLeast("ok.test", 3), fetchtest.AtLeast("moved.test", 5), fetchtest.None("spam.test"), // D14
		)
		kid, _ := signing.Thumbprint(key.Public().(ed25519.PublicKey))
		for _, r := range w.Requests() {
			// D1: the directory of the listing checked, robots.txt fetches included.
			wantUA := strings.Replace(profiles.DirectoriesUA, "{directory}", "citydir.test", 1)
			if r.Host == "norobots.test" {
				wantUA = strings.Replace(profiles.DirectoriesUA, "{directory}", "otherdir.test", 1)
			}
			if got := r.Header.Get("User-Agent"); got != wantUA {
				t.Errorf("D1: %s sent %q", r.URL(), got)
			}
			if !strings.Contains(r.Header.Get("Signature-Input"), `keyid="`+kid+`"`) {
				t.Errorf("D2: keyid is not the thumbprint on %s", r.URL())
			}
			// D3: exactly the URL entered (and its redirects): no links, no sitemap.
			if r.Path == "/more" || r.Path == "/" || r.Path == "/about" || strings.Contains(r.Path, "sitemap") {
				t.Errorf("D3: fetched %s", r.URL())
			}
		}
		for _, r := range w.RequestsTo("huge.test", "/partners") {
			if r.BytesWritten > 6_000_000 {
				t.Errorf("D11: read %d bytes of a huge page", r.BytesWritten)
			}
		}

		// D6: the outcome, the URL fetched, the code and the link are kept;
		// blocks are reported, not stored.
		recs := records(t, state)
		if r := recs["http://moved.test/p/0"]; r.Outcome != "verified" || r.FetchedAs != "http://moved.test/p/3" || r.Status != 200 || r.Matched != backlink+"moved" {
			t.Errorf("D6: record %+v", r)
		}
		if r := recs["http://gone.test/partners"]; r.Outcome != "error" || r.Status != 404 {
			t.Errorf("error record %+v", r)
		}
		if r := recs["http://plumber.test/partners"]; r.Outcome != "unverified" {
			t.Errorf("D13: record %+v", r)
		}
		for _, u := range []string{"http://shield.test/partners", "http://spam.test/partners", "http://robots500.test/partners"} {
			if r, ok := recs[u]; ok {
				t.Errorf("block stored as an outcome: %+v", r)
			}
		}
	})
}

// D9 D12: only due listings run; -recheck runs one now; robots.txt is cached
// 24 hours in the state file.
func TestDirectories_D9_D12_Schedule(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := web()
		file := writeListings(t, []row{
			{"http://ok.test/partners", "citydir.test", "daily"},
			{"http://missing.test/partners", "citydir.test", "weekly"},
			{"http://gone.test/partners", "citydir.test", "monthly"},
		}, "")
		args := bottest.Args(t, signingtest.DirectoriesKey(), "", "-listings", file)
		run := func(code int, extra ...string) *bottest.Output {
			w.Reset()
			return bottest.Run(t, directories.Run, w, code, append(append([]string(nil), args...), extra...)...)
		}
		if out := run(3); len(out.Results) != 3 { // 3: gone.test's 404
			t.Fatalf("first run checked %d", len(out.Results))
		}
		time.Sleep(2 * time.Hour)
		if out := run(0); len(out.Results) != 0 || len(w.Requests()) != 0 {
			t.Errorf("D12: nothing is due after 2 h, checked %d", len(out.Results))
		}
		time.Sleep(21 * time.Hour) // 23 h after the first run: robots.txt still cached
		out := run(3, "-recheck", "http://gone.test/partners")
		if len(out.Results) != 1 || out.Results[0].URL != "http://gone.test/partners" {
			t.Errorf("D12: recheck ran %+v", out.Results)
		}
		if w.Count("gone.test", "/partners") != 1 || w.Count("gone.test", "/robots.txt") != 0 {
			t.Error("D9: robots.txt refetched within 24 h (or the recheck fetched nothing)")
		}
		time.Sleep(2 * time.Hour) // 25 h
		out = run(0)
		if len(out.Results) != 1 || out.Results[0].URL != "http://ok.test/partners" {
			t.Errorf("D12: after a day only the daily listing is due: %+v", out.Results)
		}
		if w.Count("ok.test", "/robots.txt") != 1 {
			t.Error("D9: robots.txt not refetched after 24 h")
		}
		time.Sleep(6 * 24 * time.Hour)
		if out := run(0); len(out.Results) != 2 {
			t.Errorf("D12: after a week the daily and weekly listings are due: %+v", out.Results)
		}
		if out := run(1, "-recheck", "http://nowhere.test/"); !strings.Contains(out.Stderr, "no such listing") {
			t.Errorf("recheck of an unknown listing: no clear message\n%s", out.Stderr)
		}
	})
}

// D10: many listings on one host: one request at a time, however many.
func TestDirectories_D10_OneAtATimePerHost(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := web()
		var rows []row
		for i := range 5 {
			rows = append(rows, row{fmt.Sprintf("http://many.test/l%d", i), fmt.Sprintf("dir%d.test", i), "daily"})
		}
		bottest.Run(t, directories.Run, w, 0, bottest.Args(t, signingtest.DirectoriesKey(), "", "-listings", writeListings(t, rows, ""))...)
		if n := w.Count("many.test", ""); n != 6 {
			t.Errorf("%d requests", n)
		}
		w.Check(t, fetchtest.NoOverlap())
	})
}

// D2: the key directory is a JWKS with its media type, signed with every key
// it lists; without a key the bot refuses to run.
func TestDirectories_D2_KeyDirectory(t *testing.T) {
	key := signingtest.DirectoriesKey()
	srv := httptest.NewServer(directories.KeyDirectory(key))
	defer srv.Close()
	resp, err := http.Get(srv.URL + signing.DirectoryPath)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	kid, _ := signing.Thumbprint(key.Public().(ed25519.PublicKey))
	if ct := resp.Header.Get("Content-Type"); ct != signing.DirectoryMediaType {
		t.Errorf("D2: media type %q", ct)
	}
	if si := resp.Header.Get("Signature-Input"); !strings.Contains(si, kid) {
		t.Errorf("D2: directory response not signed with its key: %q", si)
	}
	bottest.CheckKeyRequired(t, directories.Run, web(), profiles.KeyDirectory(profiles.DirectoriesAgent), "-listings", "x.csv")
}

// -h documents the flags, with sane defaults.
func TestDirectories_Help(t *testing.T) {
	bottest.CheckHelp(t, directories.Run, "-key", "-genkey", "-listings", "-recheck", "-blocklist")
}

// D2: -serve-keys serves the signed key directory until the context ends.
func TestDirectories_D2_ServeKeys(t *testing.T) {
	key := signingtest.DirectoriesKey()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr syncbuf.Buffer
	done := make(chan int, 1)
	args := []string{"-key", bottest.KeyFile(t, key), "-state", bottest.StatePath(t), "-serve-keys", "127.0.0.1:0"}
	go func() { done <- directories.Run(ctx, args, botkit.Env{Stdout: io.Discard, Stderr: &stderr}) }()
	const at = "serving the key directory at "
	var dirURL string
	for deadline := time.Now().Add(10 * time.Second); dirURL == ""; {
		if i := strings.Index(stderr.String(), at); i >= 0 {
			if line, _, ok := strings.Cut(stderr.String()[i+len(at):], "\n"); ok {
				dirURL = line
			}
		}
		select {
		case code := <-done:
			t.Fatalf("exit %d before serving\n%s", code, stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no address printed\n%s", stderr.String())
		}
		time.Sleep(time.Millisecond) // polling for the start, not timing it
	}
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Get(dirURL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	kid, _ := signing.Thumbprint(key.Public().(ed25519.PublicKey))
	if ct := resp.Header.Get("Content-Type"); ct != signing.DirectoryMediaType || !strings.Contains(string(body), `"keys"`) ||
		!strings.Contains(resp.Header.Get("Signature-Input"), kid) {
		t.Errorf("D2: %s: %q, signature %q\n%s", dirURL, ct, resp.Header.Get("Signature-Input"), body)
	}
	// The Signature Agent Card, from the same profile: its product token,
	// User-Agent (the directory placeholder as a wildcard) and key
	// directory.
	cardURL := strings.Replace(dirURL, signing.DirectoryPath, "/bot/signature-agent-card.json", 1)
	if !strings.Contains(stderr.String(), "Signature Agent Card at "+cardURL) {
		t.Errorf("card address not printed\n%s", stderr.String())
	}
	resp, err = (&http.Client{Transport: tr}).Get(cardURL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	var card struct {
		ClientID   string `json:"client_id"`
		JWKSURI    string `json:"jwks_uri"`
		WebBotAuth struct {
			UA    string `json:"expected-user-agent"`
			Token string `json:"rfc9309-product-token"`
			Obeys bool   `json:"rfc9309-compliance"`
		} `json:"web_bot_auth"`
	}
	if err := json.Unmarshal(body, &card); err != nil || resp.StatusCode != 200 ||
		card.ClientID != "https://directories.prosvita.io/bot/signature-agent-card.json" ||
		card.JWKSURI != "https://directories.prosvita.io/.well-known/http-message-signatures-directory" ||
		card.WebBotAuth.UA != "DirectoriesBot/1.0 (+https://directories.prosvita.io/bot; verification for *)" ||
		card.WebBotAuth.Token != "DirectoriesBot" || !card.WebBotAuth.Obeys {
		t.Errorf("card %d %+v %v\n%s", resp.StatusCode, card, err, body)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("exit %d after the context ended\n%s", code, stderr.String())
	}
}

// Bad input and interrupted runs: the documented exit status (1 could not
// run, 3 some work failed), one clear line, the rest of the work done. A
// quote left open in the listings file spoils its own line only: the rows
// before and after it are checked.
func TestDirectories_ExitStatus(t *testing.T) {
	listingsFile := func(urls ...string) string {
		var rows []string
		for _, u := range urls {
			if strings.HasPrefix(u, `"`) {
				rows = append(rows, u) // a malformed line, as is
				continue
			}
			rows = append(rows, u+",https://dir.test/l,dir.test,daily")
		}
		p := filepath.Join(t.TempDir(), "listings.csv")
		if err := os.WriteFile(p, []byte("listing_url,backlink,directory,schedule\n"+strings.Join(rows, "\n")+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ok := listingsFile("http://ok.test/")
	bottest.CheckExitStatus(t, directories.Run, signingtest.DirectoriesKey(), []bottest.ExitCase{
		{Name: "unknown flag", Args: []string{"-nope", "-listings", ok}, Code: 1, Line: "flag provided but not defined: -nope"},
		{Name: "bad flag value", Args: []string{"-parallel", "many", "-listings", ok}, Code: 1, Line: `invalid value "many" for flag -parallel`},
		{Name: "no listings", Code: 1, Line: "-listings is required"},
		{Name: "listings file missing", Args: []string{"-listings", filepath.Join(t.TempDir(), "none.csv")}, Code: 1, Line: "none.csv: no such file"},
		{Name: "unbalanced quote", Code: 3, Line: "line 3: column",
			Args: []string{"-listings", listingsFile("http://ok.test/", `"http://ok.test/x,https://dir.test/l,dir.test,daily`, "http://ok.test/a", "http://stop.test/b")},
			Done: []string{"ok.test/", "ok.test/a", "stop.test/b"}},
		{Name: "unreachable site", Args: []string{"-listings", listingsFile("http://dead.test/", "http://ok.test/")}, Code: 3, Done: []string{"dead.test/robots.txt", "ok.test/"}},
		{Name: "timeout", Args: []string{"-listings", listingsFile("http://hang.test/", "http://ok.test/")}, Code: 3, Done: []string{"hang.test/", "ok.test/"}},
		{Name: "stdout full", Args: []string{"-listings", ok}, FullStdout: true, Code: 3, Line: "results not written", Done: []string{"ok.test/"}},
		{Name: "interrupted", Args: []string{"-parallel", "1", "-listings", listingsFile("http://stop.test/", "http://stop.test/b")}, Interrupt: true, Code: 3, Line: "interrupted", Done: []string{"stop.test/"}},
		{Name: "all well", Args: []string{"-listings", ok}, Code: 0, Done: []string{"ok.test/"}},
	})
}

// -list onto a full disk: the records are not all printed, so exit 3 with a
// line saying so.
func TestDirectories_ListOntoFullDisk(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		state := bottest.StatePath(t)
		file := writeListings(t, []row{{"http://ok.test/partners", "citydir.test", "daily"}}, "")
		bottest.Run(t, directories.Run, web(), 0, bottest.Args(t, signingtest.DirectoriesKey(), state, "-listings", file)...)
		if recs := records(t, state); len(recs) != 1 {
			t.Fatalf("%d records", len(recs))
		}
		var stderr syncbuf.Buffer
		code := directories.Run(context.Background(), []string{"-state", state, "-list"}, botkit.Env{Stdout: bottest.FullDisk{}, Stderr: &stderr})
		if code != 3 || !strings.Contains(stderr.String(), "records not written") {
			t.Errorf("exit %d, want 3\n%s", code, stderr.String())
		}
	})
}
