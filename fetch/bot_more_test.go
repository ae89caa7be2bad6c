package fetch_test

import (
	"context"
	"errors"
	"testing"

	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/fetch/fetchtest"
	"github.com/goodbot-go/goodbot/robots"
)

// H1: a profile whose User-Agent cannot be sent (empty, an empty
// placeholder, DEL) or whose product token cannot be derived from it (no
// name before "/", "Mozilla" in any case, a space or a placeholder in the
// name) is refused with ErrUserAgent.
func TestNewFetcher_RefusesUnusableUserAgents(t *testing.T) {
	for _, tt := range []struct {
		name string
		bot  fetch.Bot
	}{
		{"empty, with a Token", fetch.Bot{Token: "TestBot"}},
		{"empty placeholder", fetch.Bot{Token: "TestBot", UserAgent: "TestBot/1.0 ({})"}},
		{"DEL", fetch.Bot{UserAgent: "TestBot/1.0\x7f"}},
		{"no product name", fetch.Bot{UserAgent: "/1.0 (+https://test.example/bot)"}},
		{"mozilla in lower case", fetch.Bot{UserAgent: "mozilla/5.0 (compatible; TestBot/1.0)"}},
		{"space in the name", fetch.Bot{UserAgent: "Test Bot/1.0"}},
		{"placeholder as the name", fetch.Bot{UserAgent: "{name}/1.0"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := fetch.NewFetcher(tt.bot); !errors.Is(err, fetch.ErrUserAgent) {
				t.Errorf("NewFetcher(UserAgent %q, Token %q): err %v, want ErrUserAgent", tt.bot.UserAgent, tt.bot.Token, err)
			}
		})
	}
}

// H1: the derived product token is the User-Agent's text before the first
// "/" without the spaces around it: its robots.txt group applies.
func TestBot_TokenDerivedWithoutSpaces(t *testing.T) {
	w, bot := loopback(t)
	site(w, "a.test", "User-agent: TestBot\nDisallow: /no\n").Handle("/p", fetchtest.HTML("p"))
	bot.UserAgent = "TestBot /1.0 (+https://test.example/bot)"
	f := mustFetcher(t, bot)
	get(t, f, "http://a.test/p", fetch.OK)
	if n := w.Count("a.test", "/robots.txt"); n != 1 {
		t.Fatalf("%d robots.txt requests, want 1", n)
	}
	get(t, f, "http://a.test/no", fetch.Disallowed)
	w.Check(t, fetchtest.UserAgent(bot.UserAgent), fetchtest.NotFetched("a.test", "/no"))
}

// A Bot is plain configuration: changing its FormerTokens or PurposeTokens
// after NewFetcher changes nothing, the Fetcher keeps the names it was
// made with (the former name's group still refuses /old, the purpose
// token's group still refuses /page).
func TestBot_LaterChangesToTokensChangeNothing(t *testing.T) {
	w, bot := loopback(t)
	usageSite(w, "User-agent: OldBot\nDisallow: /old\n\nUser-agent: TestBot-AI\nDisallow: /page\n", nil)
	bot.FormerTokens = []string{"OldBot"}
	bot.Purposes, bot.UsageMode = []robots.Purpose{robots.AIInput}, fetch.UsageRefuse
	bot.PurposeTokens = []robots.PurposeToken{{Purpose: robots.AIInput, Token: "TestBot-AI"}}
	f := mustFetcher(t, bot)
	bot.FormerTokens[0] = "OtherBot"
	bot.PurposeTokens[0].Token = "OtherBot-AI"
	get(t, f, "http://a.test/ok", fetch.OK)
	if n := w.Count("a.test", "/robots.txt"); n != 1 {
		t.Fatalf("%d robots.txt requests, want 1", n)
	}
	get(t, f, "http://a.test/old", fetch.Disallowed)
	get(t, f, "http://a.test/page", fetch.UsageRefused)
	w.Check(t, fetchtest.NotFetched("a.test", "/old", "/page"))
}

// D1: User-Agent placeholders are filled wherever they stand (first, last,
// next to each other), each from its own WithUserAgentVar, the values of
// earlier calls kept by later ones.
func TestIdentity_D1_PlaceholdersAnywhere(t *testing.T) {
	for _, tt := range []struct{ ua, want string }{
		{"TestBot/1.0 ({a}; {b})", "TestBot/1.0 (one; two)"},
		{"{a} TestBot/1.0", "one TestBot/1.0"},
		{"TestBot/1.0 {a}{b}", "TestBot/1.0 onetwo"},
	} {
		t.Run(tt.ua, func(t *testing.T) {
			w, bot := loopback(t)
			site(w, "a.test", "").Handle("/p", fetchtest.HTML("p"))
			bot.Token, bot.UserAgent = "TestBot", tt.ua
			f := mustFetcher(t, bot)
			ctx, err := fetch.WithUserAgentVar(context.Background(), "a", "one")
			if err == nil {
				ctx, err = fetch.WithUserAgentVar(ctx, "b", "two")
			}
			if err != nil {
				t.Fatal(err)
			}
			getCtx(t, ctx, f, "http://a.test/p", fetch.OK)
			rs := w.RequestsTo("a.test", "/p")
			if len(rs) != 1 {
				t.Fatalf("%d requests for /p, want 1", len(rs))
			}
			if got := rs[0].Header.Get("User-Agent"); got != tt.want {
				t.Errorf("User-Agent %q, want %q", got, tt.want)
			}
		})
	}
}

// D1: WithUserAgentVar refuses a value holding any of ( ) ; , " \ { } (at
// its start too) or DEL with ErrUserAgent, and takes other printable
// ASCII, spaces included.
func TestWithUserAgentVar_Values(t *testing.T) {
	for _, tt := range []struct {
		value string
		ok    bool
	}{
		{"dir.example", true},
		{"a b/c:d", true},
		{"(dir", false},
		{"dir)", false},
		{"a;b", false},
		{"a,b", false},
		{`a"b`, false},
		{`a\b`, false},
		{"a{b", false},
		{"a}b", false},
		{"a\x7fb", false},
	} {
		_, err := fetch.WithUserAgentVar(context.Background(), "dir", tt.value)
		if tt.ok && err != nil {
			t.Errorf("WithUserAgentVar(%q): %v, want it taken", tt.value, err)
		}
		if !tt.ok && !errors.Is(err, fetch.ErrUserAgent) {
			t.Errorf("WithUserAgentVar(%q): err %v, want ErrUserAgent", tt.value, err)
		}
	}
}

// A negative Limits.MaxBodyBytes means no limit: a page over the 10 MiB
// default is read whole.
func TestLimits_NegativeMaxBodyBytesReadsWhole(t *testing.T) {
	const size = 10<<20 + 1
	w, bot := loopback(t)
	site(w, "a.test", "").Handle("/big", fetchtest.Huge(size))
	bot.Limits.MaxBodyBytes = -1
	f := mustFetcher(t, bot)
	p := get(t, f, "http://a.test/big", fetch.OK)
	if n := w.Count("a.test", "/big"); n != 1 {
		t.Fatalf("%d requests for /big, want 1", n)
	}
	if len(p.Body) != size || p.Truncated {
		t.Errorf("body %d bytes (truncated %v), want %d", len(p.Body), p.Truncated, size)
	}
}

// H7: every word of DefaultDeny is refused as Disallowed and every word of
// DefaultLogin as AuthRequired, with no request, for a bot that keeps the
// defaults (Deny and Login nil).
func TestIdentity_H7_DefaultWordLists(t *testing.T) {
	w, bot := loopback(t)
	site(w, "a.test", "").Fallback(fetchtest.HTML("p"))
	f := mustFetcher(t, bot)
	get(t, f, "http://a.test/p", fetch.OK)
	if n := w.Count("a.test", "/p"); n != 1 {
		t.Fatalf("%d requests for /p, want 1", n)
	}
	var paths []string
	for _, tt := range []struct {
		want  fetch.Outcome
		paths []string
	}{
		{fetch.Disallowed, []string{"/cart", "/basket", "/checkout", "/account", "/myaccount", "/wishlist",
			"/logout", "/log-out", "/signout", "/sign-out", "/register", "/signup", "/sign-up",
			"/unsubscribe", "/wp-admin/"}},
		{fetch.AuthRequired, []string{"/login", "/log-in", "/signin", "/sign-in", "/logon", "/wp-login.php", "/sso"}},
	} {
		for _, path := range tt.paths {
			get(t, f, "http://a.test"+path, tt.want)
		}
		paths = append(paths, tt.paths...)
	}
	w.Check(t, fetchtest.NotFetched("a.test", paths...))
	if n := len(w.Requests()); n != 2 {
		t.Errorf("%d requests, want 2 (robots.txt and /p)", n)
	}
}
