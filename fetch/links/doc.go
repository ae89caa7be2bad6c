// Package links reads the links on an HTML page and compares URLs the way a
// crawler and a reciprocal-link checker need to: relative links resolved
// against the page (and its <base href>), rel attributes kept (so a crawler
// can skip rel=nofollow links), URLs normalised so that two spellings of
// one address compare equal ([Normalize], as [fetch.Normalize] does), and
// the visible text of a page ([Text]). [ExtractAll] also returns a page's
// <link rel=… href> elements (canonical, alternate feeds...), and
// [FromSitemap] the URLs of a sitemap or an RSS/Atom feed (read with the
// [sitemap] package).
//
// The functions are safe for concurrent use; they hold no state.
package links
