package fetch

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// Redact returns rawURL with the password of its userinfo, if it has one,
// replaced by "xxxxx", as [url.URL.Redacted] does, but on the text as given:
// it also works on a URL that does not parse, and leaves every other byte
// as it was (a URL without a password comes back unchanged). Use it
// wherever a URL from outside is printed, in errors and logs.
func Redact(rawURL string) string {
	i := strings.Index(rawURL, "//")
	if i < 0 {
		return rawURL
	}
	start := i + 2
	auth := rawURL[start:]
	if j := strings.IndexAny(auth, "/?#"); j >= 0 {
		auth = auth[:j]
	}
	at := strings.LastIndexByte(auth, '@')
	if at < 0 {
		return rawURL
	}
	colon := strings.IndexByte(auth[:at], ':')
	if colon < 0 {
		return rawURL // a user name only
	}
	return rawURL[:start+colon+1] + "xxxxx" + rawURL[start+at:]
}

// badURL is the ErrBadURL error for rawURL, which failed to parse with err:
// the URL redacted, and only the reason of the parse error (whose own text
// carries the URL as given).
func badURL(rawURL string, err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return fmt.Errorf("%w: %q: %v", ErrBadURL, Redact(rawURL), err)
}

// redacted is u.Redacted, or "<nil>".
func redacted(u *url.URL) string {
	if u == nil {
		return "<nil>"
	}
	return u.Redacted()
}
