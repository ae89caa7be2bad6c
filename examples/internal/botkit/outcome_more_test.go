package botkit

import (
	"errors"
	"testing"

	"github.com/goodbot-go/goodbot/challenge"
	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/robots"
)

// Each failure has its human reason: a robots.txt refusal without a rule, a
// blocked page's vendor, kind and evidence, a fetch error without its
// "fetch: " prefix.
func TestReason_More(t *testing.T) {
	blocked := &fetch.Page{Status: 403, Outcome: fetch.Blocked, Verdict: challenge.Verdict{Blocked: true, Vendor: "akamai",
		Kind: challenge.JSChallenge, Evidence: []string{"status:403", "header:x"}}}
	unknownVendor := &fetch.Page{Status: 403, Outcome: fetch.Blocked, Verdict: challenge.Verdict{Blocked: true}}
	notBlocked := &fetch.Page{Status: 200, Outcome: fetch.OK}
	for _, tc := range []struct {
		name string
		p    *fetch.Page
		err  error
		want string
	}{
		{"no rule", nil, &fetch.Error{Outcome: fetch.Disallowed, Err: &robots.DisallowedError{Agent: "X"}}, "robots.txt disallows"},
		{"blocked page", blocked, &fetch.Error{Outcome: fetch.Blocked, Err: errors.New("blocked")}, "akamai js_challenge: status:403, header:x"},
		{"one piece of evidence", &fetch.Page{Status: 403, Outcome: fetch.Blocked, Verdict: challenge.Verdict{Blocked: true, Vendor: "akamai",
			Kind: challenge.JSChallenge, Evidence: []string{"status:403"}}}, &fetch.Error{Outcome: fetch.Blocked, Err: errors.New("blocked")}, "akamai js_challenge: status:403"},
		{"blocked, vendor unknown", unknownVendor, &fetch.Error{Outcome: fetch.Blocked, Err: errors.New("blocked")}, "bot protection"},
		{"page not blocked", notBlocked, errors.New("fetch: body too long"), "body too long"},
		{"plain error", nil, errors.New("fetch: dial failed"), "dial failed"},
		{"usage", nil, &fetch.UsageError{Source: "header"}, "usage preference: header refuses search ()"},
	} {
		if got := Reason(tc.p, tc.err); got != tc.want {
			t.Errorf("%s: Reason = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// ResultOf: without a page the outcome comes from the error, with one from
// the page (a 304 is not_modified with no error), and is never empty
// ("error" when neither names one); the URL's password is redacted.
func TestResultOf_More(t *testing.T) {
	for _, tc := range []struct {
		name    string
		raw     string
		p       *fetch.Page
		err     error
		outcome string
		url     string
		status  int
		bytes   int64
		reason  string
	}{
		{"error only", "http://a.test/", nil, errors.New("fetch: boom"), "unreachable", "http://a.test/", 0, 0, "boom"},
		{"typed error", "http://a.test/", nil, &fetch.Error{Outcome: fetch.Timeout, Err: errors.New("slow")}, "timeout", "http://a.test/", 0, 0, ""},
		{"typed error without an outcome", "http://a.test/", nil, &fetch.Error{Err: errors.New("odd")}, "error", "http://a.test/", 0, 0, ""},
		{"not modified: the page's outcome, not the error's", "http://a.test/", &fetch.Page{Status: 304, Outcome: fetch.NotModified}, nil, "not_modified", "http://a.test/", 304, 0, ""},
		{"page without an outcome", "http://a.test/", &fetch.Page{Status: 200}, nil, "error", "http://a.test/", 200, 0, ""},
		{"page", "http://u:secret@a.test/", &fetch.Page{Status: 404, Body: []byte("gone"), Outcome: fetch.OK}, nil, "ok", "http://u:xxxxx@a.test/", 404, 4, ""},
	} {
		r := ResultOf(tc.raw, tc.p, tc.err)
		if r.Outcome != tc.outcome || r.URL != tc.url || r.Status != tc.status || r.Bytes != tc.bytes || (tc.reason != "" && r.Reason != tc.reason) {
			t.Errorf("%s: %+v", tc.name, r)
		}
	}
}
