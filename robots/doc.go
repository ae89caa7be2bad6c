// Package robots reads robots.txt files and answers "may this bot fetch this
// URL?" as RFC 9309 (the Robots Exclusion Protocol) specifies, fast enough to
// ask for every request.
//
// [Parse] reads a file once, through the line parser of
// github.com/jimsmart/grobotstxt (a port of Google's reference parser), into a
// compiled form: per group, a path-compressed trie over the literal prefixes
// of its rules, with rules ordered longest first and wildcard rules screened
// by the set of octets they need. [Robots.Allowed] matches a target that is
// already in normal form in place, normalises any other into a stack buffer,
// and walks the tries of the groups that apply. It does not allocate for
// targets up to 2 KiB and never re-parses the file (grobotstxt.AgentAllowed
// re-parses the whole file for every question).
//
// # Matching (RFC 9309 §2.2)
//
//   - The longest matching rule wins, measured in octets of the normalised
//     pattern; an Allow wins a tie with a Disallow; an empty rule matches
//     nothing. With no matching rule the URL is allowed.
//   - "*" matches any run of octets; a "$" at the end of a pattern anchors it
//     at the end of the URL's path and query. A "$" elsewhere is literal.
//   - Percent-encoding equivalence: both the pattern and the URL are
//     normalised before matching. Octets that may not appear raw in a URI
//     (controls, space, `"<>\^{|}` and backquote, and every octet >= 0x80, so
//     raw UTF-8) are percent-encoded; escapes of unreserved characters
//     (ALPHA, DIGIT, "-", ".", "_", "~") are decoded; every other escape keeps
//     its meaning with upper-case hex digits, so "%2f" equals "%2F" but not "/".
//     In the query, the escapes of ":", "/", "?" and "@" are decoded (the
//     RFC's https%3A%2F%2F example). A "%2A" or "%24" in a rule matches a
//     literal "*" or "$" in the URL (RFC 9309 §2.2.3), and so does the same
//     escape in the URL.
//   - User-agent lines match the product token case-insensitively; the
//     token's product part is taken up to the first character that is not an
//     RFC 9110 tchar, so "BothyBot/1.0" names BothyBot. "*" names every bot.
//     Several groups for one name are merged (§2.2.1).
//   - "/robots.txt" itself is always allowed (§2.2.2).
//
// # Which groups apply
//
// An [Agent] has a product token and the names the bot used before. If the
// file has a group for any of those names, the "*" group is ignored and a URL
// is disallowed when the merged groups of any one of those names disallow it:
// a block written against a former name still holds, even when the current
// token has its own Allow. Otherwise the "*" group applies; with no "*" group
// everything is allowed. [Robots.CrawlDelay] reads the same groups and returns
// the largest delay any of them gives.
//
// # Deliberate departures from grobotstxt
//
// Where the Google-derived parser departs from RFC 9309, this package follows
// the RFC; each case has its own test in robots_test.go
// (TestDeparture_*):
//
//   - escapes of unreserved characters are decoded ("/%7Efoo" is "/~foo");
//   - a rule with a lower-case escape such as "%2f" still matches (grobotstxt
//     upper-cases the escape's digits too, turning "%2f" into garbage);
//   - "/robots.txt" is always allowed;
//   - "%2A" and "%24" in a rule match a literal "*" and "$";
//   - raw UTF-8 in the query is percent-encoded before matching;
//   - in the query, "%3A", "%2F", "%3F" and "%40" equal ":", "/", "?" and
//     "@" (RFC 9309 §2.2.2's "/foo/bar?baz=https://foo.bar" example);
//   - an "Allow: /dir/index.html" rule does not also allow "/dir/" (a Google
//     extension);
//   - a Crawl-delay line ends the list of user-agents that a group starts
//     with, as a rule does, so "User-agent: a / Crawl-delay: 5 /
//     User-agent: b / Disallow: /" gives a a delay and b the rule;
//   - a target that net/url cannot parse is matched as written rather than
//     reported as disallowed;
//   - several names are never merged into one group (see above).
//
// # Size and bad input
//
// Parse reads the first [MaxParseBytes] (512 KiB, more than the 500 KiB RFC
// 9309 §2.5 asks for) and ignores the rest; if the cut falls inside a line,
// that partial line is dropped too, so a cut never turns "Disallow: /private"
// into "Disallow: /". [Robots.Truncated] reports the cut. Lines longer than
// grobotstxt's limit (16,664 bytes) are cut to that length. A UTF-8 byte
// order mark is skipped, CR, LF and CRLF all end lines, NUL and other control
// bytes in a rule are percent-encoded, invalid escapes such as "%zz" match
// themselves literally, and invalid UTF-8 is percent-encoded octet by octet.
// Time and memory are linear in the part read.
//
// # Fetch outcomes and the cache
//
// [FromResponse] maps the outcome of fetching robots.txt to a [Robots] (RFC
// 9309 §2.3.1): 2xx is parsed, 4xx allows everything ([AllowAll]), 5xx, 429 and
// network errors or timeouts disallow everything ([DisallowAll], whose
// [Robots.Unreachable] is true). [Cache] keeps one copy per origin (scheme,
// host, port; every spelling of a host is one origin, as politeness.HostKey
// decides, which is why this package imports golang.org/x/net/idna),
// fetched through the bot's own [http.RoundTripper], refreshed
// after a TTL, coalesced across concurrent callers, and optionally persisted
// through a [Store]; robots/boltstore keeps copies in a bbolt file.
package robots
