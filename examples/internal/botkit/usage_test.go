package botkit

import (
	"testing"

	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/robots"
)

// A usage refusal's reason names the source, the purpose and the statement.
func TestReason_UsageRefused(t *testing.T) {
	u := robots.Usage{}.With(robots.AIInput, robots.Disallowed).With(robots.Search, robots.Allowed)
	err := &fetch.Error{Outcome: fetch.UsageRefused, URL: "http://a.test/x",
		Err: &fetch.UsageError{Purpose: robots.AIInput, Usage: u, Source: "robots.txt"}}
	if got, want := Reason(nil, err), "usage preference: robots.txt refuses ai-input (search=y, ai-input=n)"; got != want {
		t.Errorf("Reason = %q, want %q", got, want)
	}
	if StopsSite(err) {
		t.Error("a refused page stops the site")
	}
}
