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
// origin 403/429 pages, or markers beyond MaxBytes. Plain origin statuses
// (a bare 403 or 429) are not challenges: they are the fetcher's business;
// the one status that counts alone is a non-standard one a platform uses
// for bots (LinkedIn's 999).
//
// # Rules are data
//
// The rules form a table ([Rules] of [Rule], see [DefaultRules]); a
// [Detector] applies a table of your own, for example the default one plus
// your vendor. Rules are tried in order and the first match decides.
// Markers are matched ASCII case-insensitively as plain substrings, and a
// rule can require statuses, header values, groups of alternative markers,
// absent markers and a maximum body size.
//
// # Speed
//
// All markers of a table are found in one pass over the examined bytes (a
// sampled 4-byte-gram filter, then exact verification), in time linear in
// MaxBytes and without allocation for a negative verdict; see the package
// benchmarks, which compare against bytes.Index over the same bytes.
package challenge
