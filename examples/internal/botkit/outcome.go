package botkit

import (
	"errors"
	"fmt"
	"strings"

	"github.com/goodbot-go/goodbot/challenge"
	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/fetch/crawl"
	"github.com/goodbot-go/goodbot/politeness"
	"github.com/goodbot-go/goodbot/robots"
)

// ResultOf turns what fetch.Fetcher.Get returned into a result line, with a
// human reason for every outcome that is not plain "ok".
func ResultOf(rawURL string, p *fetch.Page, err error) Result {
	r := Result{URL: fetch.Redact(rawURL), Outcome: fetch.OutcomeOf(err).String()}
	if p != nil {
		r.Status = p.Status
		r.Bytes = int64(len(p.Body))
		r.Outcome = p.Outcome.String()
		r.FinalURL = p.FinalURL // always given (issue 8's -json surface), redirected or not
	}
	if r.Outcome == "" {
		r.Outcome = "error"
	}
	r.Reason = Reason(p, err)
	return r
}

// Reason explains a failed fetch: the robots.txt rule, the challenge
// vendor and evidence, the pause, or the error.
func Reason(p *fetch.Page, err error) string {
	if err == nil {
		return ""
	}
	var ie *fetch.InternalAddressError
	if errors.As(err, &ie) {
		return fmt.Sprintf("%s is a %s address: not reached without -allow-internal", ie.Addr, ie.Kind)
	}
	var de *robots.DisallowedError
	if errors.As(err, &de) {
		var ce *challenge.ChallengeError
		switch {
		case de.Unreachable && errors.As(de.Err, &ce):
			return "robots.txt answered with a challenge page, not rules (" + verdictText(ce.Verdict) + "): no permission assumed"
		case de.Unreachable:
			return "robots.txt unreachable: no permission assumed"
		}
		if de.Rule != "" {
			return fmt.Sprintf("robots.txt: %s (for %s)", de.Rule, de.Agent)
		}
		return "robots.txt disallows"
	}
	if p != nil && p.Verdict.Blocked {
		return verdictText(p.Verdict)
	}
	var he *politeness.HostError
	if errors.As(err, &he) {
		return he.Error()
	}
	var ue *fetch.UsageError
	if errors.As(err, &ue) {
		return "usage preference: " + strings.TrimPrefix(ue.Error(), "fetch: ")
	}
	msg := err.Error()
	msg = strings.TrimPrefix(msg, "fetch: ")
	return msg
}

// verdictText names a challenge verdict: vendor, kind and evidence.
func verdictText(v challenge.Verdict) string {
	s := "bot protection"
	if v.Vendor != "" {
		s = v.Vendor
	}
	if k := v.Kind.String(); k != "" {
		s += " " + k
	}
	if len(v.Evidence) > 0 {
		s += ": " + strings.Join(v.Evidence, ", ")
	}
	return s
}

// StopsSite reports whether err means the rest of the site must not be
// fetched in this run: the bot gave up on the host (H4), the host stopped
// answering (H6), or robots.txt is unreachable (H5, D8).
func StopsSite(err error) bool { return crawl.StopsSite(err) }
