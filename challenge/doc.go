// Package challenge tells a bot challenge, block page or CAPTCHA from
// content, even when it is served with status 200.
//
// A polite crawler never solves a challenge: it records "blocked" and never
// stores the page as content. [Detect] is a pure function over the status,
// the response header and at most the first [MaxBytes] of the body, in the
// spirit of http.DetectContentType:
//
//	v := challenge.Detect(resp.StatusCode, resp.Header, body)
//	if v.Blocked {
//		return &challenge.ChallengeError{URL: u, Verdict: v}
//	}
//
// [Sniff] does the same on an *http.Response, reading at most MaxBytes and
// putting the body back for the caller.
//
// # Evidence
//
// A [Verdict] names the vendor ("cloudflare", "akamai", "imperva", "sucuri",
// "ddos-guard", "qrator", "aws-waf", "datadome", "perimeterx", "kasada",
// "f5", "vercel", "wordfence", "anubis", "google", "amazon", "radware",
// "recaptcha", "hcaptcha", "turnstile", …), the [Kind] (js_challenge,
// captcha, block, rate_limit), the rule that matched and the evidence.
//
// Every rule demands strong evidence. A vendor header alone decides only
// where the vendor documents it as a challenge signal (cf-mitigated:
// challenge, x-vercel-mitigated: challenge, x-amzn-waf-action, x-sucuri-block).
// Otherwise a rule combines a status with body markers, or several body
// markers taken from the challenge's own machinery (script paths, bootstrap
// objects, element ids, the title tag). Signs that a vendor merely fronts a
// site (server: cloudflare, cf-ray, __cf_bm, x-datadome: protected, sensor
// scripts, an Imperva analytics include) never flag a page, nor do articles
// that quote challenge text, login and comment forms with a CAPTCHA widget,
// plain origin 403/429 pages, or markers beyond MaxBytes. Plain origin
// statuses (a bare 403 or 429) are not challenges: they are the fetcher's
// business; the one status that counts alone is a non-standard one a
// platform uses for bots (LinkedIn's 999). A 402 that carries a price (pay
// per crawl's crawler-price, x402's Payment-Required) is never a challenge.
//
// # Content is content, a wall is a wall
//
// A marker is evidence only where the page uses it, not where it shows it.
// When the marker scan finds a rule's markers, one more pass over the
// examined bytes (a tokenizer: tags, attributes, comments, raw-text
// elements; no tree, no allocation) places every occurrence:
//
//   - markup (a tag, an attribute, a script or a style) always counts: an
//     article cannot show markup without escaping its "<";
//   - quoted places never count: pre, code, kbd, samp, blockquote, q,
//     template, textarea, table header cells and every table cell but the
//     first of its table (a layout table has one), comments, data scripts
//     (JSON, JSON-LD, templates), text attributes (alt, title, placeholder,
//     aria-label, a named meta's content), and text inside quotation marks
//     ("…", “…”, „…“, «…», 「…」 and their character references);
//   - other visible text (a heading, a paragraph, a list item) counts only
//     on a notice page, one with at most [NoticeText] bytes of visible text
//     whose text names one vendor at most: the prose of an article or
//     forum thread, or a page that lists several vendors' block texts, is
//     about challenges, not one.
//
// A rule can also ask for markers that count in markup only ([Rule.Markup]:
// a widget's element or script, an API call such as grecaptcha.execute),
// for a page with little visible text ([Rule.MaxText]) and for a form that
// asks for nothing but the challenge ([Rule.BareForm]). With these the
// default rules call a site's own CAPTCHA gate a gate (a Turnstile,
// hCaptcha or reCAPTCHA widget, or a reCAPTCHA v3 call, and a form with no
// field to fill in, on a page of at most 512 bytes of text) and a site's
// own notice that automated traffic was detected and blocked a block (in
// English, German, Spanish, French and Japanese), while the same widgets
// on login, sign-up, contact and comment forms, and the same words in an
// article, are content.
//
// # Rules are data
//
// The rules form a table ([Rules] of [Rule], see [DefaultRules]); a
// [Detector] applies a table of your own, for example the default one plus
// your vendor. Rules are tried in order and the first match decides.
// Markers are matched ASCII case-insensitively as plain substrings, and a
// rule can require statuses, header values, groups of alternative markers
// (counting where the page uses them), groups of markup-only markers,
// absent markers (anywhere), a maximum body size, a maximum visible text,
// a bare form and an HTML page.
//
// # Speed
//
// All markers of a table are found in one pass over the examined bytes (a
// sampled 4-byte-gram filter, then exact verification), in time linear in
// MaxBytes and without allocation for a negative verdict; the layout pass
// runs only when a rule could match on the markers found, and is linear
// too. See the package benchmarks, which compare against bytes.Index over
// the same bytes.
package challenge
