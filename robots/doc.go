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
//   - User-agent lines match the product token case-insensitively. The
//     token is the leading run of the characters RFC 9309 §2.2.1 allows in
//     one (letters, "-" and "_"), so "ExampleBot/1.0", "examplebot*" and
//     "ExampleBot (+https://…)" all name ExampleBot; the same cut applies to
//     [Agent.Token]. "*", alone or followed by white space (including NBSP
//     and NEL, in UTF-8 or as Latin-1 bytes), names every bot. Several
//     groups for one name are merged (§2.2.1).
//   - A group is its user-agent lines and the rules after them: only a rule
//     (Allow, Disallow, or the Content-Usage rule draft-ietf-aipref-attach
//     §3 adds) closes the list of user-agents. Every other line
//     (Crawl-delay, Sitemap, Content-Signal, unknown records, comments, blank
//     lines) neither starts nor ends a group (§2.2.4), and a Crawl-delay or
//     Content-Signal inside a group is the whole group's.
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
// Where this package answers otherwise than Google's parser, RFC 9309 decides
// it, or the answer is the more restrictive one where the RFC says nothing.
// Each case has its own test (TestDeparture in robots_test.go):
//
//   - escapes of unreserved characters are decoded ("/%7Efoo" is "/~foo"),
//     in rules and in URLs (§2.2.2 and its table: "/foo/bar/%62%61%7A"
//     matches "/foo/bar/baz");
//   - a rule with a lower-case escape such as "%2f" still matches "%2F"
//     (§2.2.2 compares percent-encoded octets, whose hex digits are
//     case-insensitive; grobotstxt upper-cases the digits 0-9 too, turning
//     "%2f" into garbage);
//   - "/robots.txt" is always allowed (§2.2.2);
//   - "%2A" and "%24" in a rule match a literal "*" and "$" (§2.2.3);
//   - non-ASCII octets of the URL, also in its query, are percent-encoded
//     before matching (§2.2.2);
//   - in the query, "%3A", "%2F", "%3F" and "%40" equal ":", "/", "?" and
//     "@" (§2.2.2's table: "/foo/bar?baz=https://foo.bar" matches
//     "/foo/bar?baz=https%3A%2F%2Ffoo.bar");
//   - a target that net/url cannot parse is matched as written, not
//     disallowed (§2.2.2: with no matching rule a URL is allowed);
//   - a product token is cut where the §2.2.1 grammar ends, in the file
//     ("examplebot*" names examplebot) and in [Agent.Token] ("Foo Bar" is
//     Foo); grobotstxt cuts at the first non-tchar;
//   - "*" followed by any white space, NBSP and NEL included, is the "*"
//     group; more restrictive than ignoring the line;
//   - an "Allow: /dir/index.html" rule does not also allow "/dir/" (a Google
//     extension the RFC does not have; more restrictive);
//   - several names are never merged into one group (see above; more
//     restrictive).
//
// One earlier departure is gone: a Crawl-delay line used to end the list of
// user-agents a group starts with. RFC 9309 §2.2.4 forbids that, and
// grobotstxt never did it.
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
//
// # Usage preferences
//
// Beyond where a bot may go, a file can say what the content may be used
// for. [Robots.Usage] answers, for an [Agent] and a target, a [Verdict] per
// [Purpose] (search, ai-input, train-ai): Allowed, Disallowed, Unknown (the
// file says nothing) or NotApplicable (the target is disallowed, so no
// preference applies: draft-ietf-aipref-attach §3.1). It reads:
//
//   - Content-Usage rules (draft-ietf-aipref-attach §3), "Content-Usage:
//     /path train-ai=n, search=y": a rule of its group, compiled into tries
//     of their own by the same code as Allow and Disallow and matched the
//     same way (longest pattern in octets, wildcards, "$", percent-encoding
//     equivalence). A rule without a path matches every path and is shorter
//     than any with one. Matching rules of the same length, identical paths
//     included, combine most restrictively (draft-ietf-aipref-vocab §5.1); so
//     do the merged groups of one name and the names of an agent. The value is
//     in the AIPREF format of [ParseUsage]; a rule whose value is empty or
//     not a Dictionary still stands, chosen by its path, with every purpose
//     Unknown (draft-ietf-aipref-vocab: "If the parsing of the Dictionary
//     fails, preferences are unknown").
//   - Content-Signal lines (Cloudflare's Content Signals Policy, also spelled
//     Content-Signals), "search=yes, ai-input=yes, ai-train=no": in a group
//     they apply to the group's every path; before the first user-agent line
//     to every agent. Absent keys neither grant nor restrict.
//   - Purpose tokens ([PurposeToken]): control-only product tokens an agent
//     lists; a group for one that disallows the target means Disallowed for
//     its purpose, one that does not means Allowed, none means Unknown. They
//     never change [Robots.Allowed].
//
// All of these combine most restrictively. The groups are those Allowed
// uses. Usage costs about what Allowed costs and does not allocate.
// [UsageFromHeader] reads the same preferences from a response (the
// Content-Usage field and TDMRep's tdm-reservation).
//
// # Page rules
//
// A page can narrow what robots.txt allows (draft-illyes-repext):
// [PageRulesFromHeader] reads the Robots-Tag field (a Structured Field List,
// parsed with github.com/dunglas/httpsfv) and the older X-Robots-Tag, and
// [PageRulesFromHTML] the robots meta elements of an HTML head (tokenised
// with golang.org/x/net/html). Both answer for one [Agent], counting rules
// addressed to every bot and to any of its names, former ones included, and
// return [PageRules]: noindex, nofollow, noarchive, nosnippet, noai,
// noimageai and unavailable_after. The vocabulary is data; unknown rules are
// ignored. What a bot does with them is its own decision.
package robots
