package challenge

import "slices"

// DefaultRules returns a fresh copy of the default rule table, which
// [Detect] uses. Extend it with your own vendor:
//
//	d := &challenge.Detector{Rules: append(challenge.DefaultRules(), myRule)}
//
// The markers and their reliability are documented, with sources, in the
// project's challenge-samples/MARKERS.md. Order matters: the first rule that
// matches decides, so kind-specific rules come before generic ones.
func DefaultRules() Rules {
	rules := defaultRules()
	for i := range rules {
		rules[i] = rules[i].clone()
	}
	return rules
}

// clone copies every slice of r, so that a table handed out can be changed
// without touching the marker groups the default rules share.
func (r Rule) clone() Rule {
	r.Status = slices.Clone(r.Status)
	r.Header = slices.Clone(r.Header)
	r.Not = slices.Clone(r.Not)
	r.Body = cloneGroups(r.Body)
	r.Markup = cloneGroups(r.Markup)
	return r
}

func cloneGroups(groups [][]string) [][]string {
	if groups == nil {
		return nil
	}
	out := make([][]string, len(groups))
	for i, g := range groups {
		out[i] = slices.Clone(g)
	}
	return out
}

// smallPage bounds rules whose evidence is the wording of a short block
// page, so that an article or forum thread quoting it is not flagged.
const smallPage = 8192

// Status sets.
var (
	st403      = []int{403}
	st429      = []int{429}
	stBlocking = []int{403, 429, 503}
	stWAF      = []int{403, 405, 406, 429, 503}
)

// Shared marker groups.
var (
	// Cloudflare challenge machinery (not the JS-detection script injected
	// into served pages, which lives under /challenge-platform/scripts/ or
	// /challenge-platform/h/b/scripts/).
	cfChallenge = []string{
		"window._cf_chl_opt", "window._cf_chl_ctx", "__cf_chl_f_tk=", "__cf_chl_jschl_tk__=", "__cf_chl_rt_tk=",
		"__cf_chl_captcha_tk__=",
		"/orchestrate/chl_page/", "/orchestrate/jsch/", "/orchestrate/managed/", "/orchestrate/captcha/",
		"/cdn-cgi/images/trace/jsch", "/cdn-cgi/images/trace/captcha", "/cdn-cgi/images/trace/managed",
		"name=\"jschl_vc\"", "name=\"jschl_answer\"", "cf-browser-verification",
	}
	// Elements of a Cloudflare challenge page (as tags, so that an article
	// quoting a page, which escapes "<", does not match).
	cfChallengePage = []string{
		"<form id=\"challenge-form\"", "<title>just a moment...</title>", "<title>just a moment...",
		"id=\"cf-challenge-running\"", "id=\"challenge-spinner\"", "id=\"challenge-error-text\"",
		"id=\"trk_jschal_js\"", "id=\"cf-please-wait\"", "id=\"challenge-stage\"", "id=\"challenge-running\"",
		"class=\"cf-browser-verification",
	}
	// A Cloudflare challenge that asks for a human action.
	cfCaptcha = []string{
		"ctype: 'interactive'", "ctype:'interactive'", "ctype: \"interactive\"", "ctype:\"interactive\"",
		"name=\"captcha-bypass\"", "cf_captcha_kind", "id=\"cf-norobot-container\"",
		"id=\"cf-challenge-hcaptcha-wrapper\"", "/orchestrate/captcha/", "class=\"g-recaptcha\"",
		"/cdn-cgi/l/chk_captcha", "cf-captcha-container", "recaptcha_response_field",
	}
	// Cloudflare-generated error page structure (1xxx blocks, but also 52x
	// origin errors: never evidence alone).
	cfErrorPage = []string{
		"id=\"cf-error-details\"", "class=\"cf-error-code\"", "cf-error-details",
		"/cdn-cgi/styles/cf.errors.css", "/cdn-cgi/styles/main.css", "/cdn-cgi/styles/cf.css",
		"data-translate=\"block_headline\"", "id=\"cf-wrapper\"",
	}
	cf1015 = []string{
		"errorcode:1015", "errorcode: 1015", "class=\"cf-error-code\">1015<", "cloudflare-1xxx-errors/error-1015",
		"error code: 1015", "error code 1015",
	}

	// Site-built CAPTCHA interstitials: widget, wording, and what a normal
	// page with a form CAPTCHA has instead.
	captchaWords = []string{
		"verify you are human", "verify that you are human", "verify you're human", "confirm you are human",
		"prove you are human", "are you a robot", "you are not a robot", "you're not a robot", "i'm not a robot", "am not a robot",
		"complete the security check", "security check", "unusual traffic",
		"human verification", "checking your browser", "bot protection", "automated requests",
		"êtes pas un robot", "vérification de sécurité", "êtes un humain", "sie kein roboter", "sicherheitsüberprüfung",
		"sicherheitsprüfung", "no eres un robot", "no soy un robot", "verificación de seguridad", "não sou um robô",
		"verificação de segurança", "non sei un robot", "verifica di sicurezza", "не робот", "проверка безопасности",
		"complete the captcha", "solve the captcha", "you are not a bot", "you're not a bot", "you are a human",
		"you're a human", "that you are human", "vous êtes humain", "que eres humano", "que eres un humano",
		"dass sie ein mensch", "ロボットではありません", "人間であることを確認",
	}
	wordfencePage = []string{"your access to this site has been limited", "about wordfence", "blocking rules",
		"potentially unsafe operation", "temporarily locked out"}
	// DataDome's bootstrap object on its challenge pages.
	ddBootstrap = []string{"var dd={'cid':", "var dd={'rt':'", "var dd={\"cid\":", "var dd={\"rt\":\""}
	// DDoS-Guard's own page elements.
	ddgPage       = []string{"<title>ddos-guard</title>", "id=\"ddg-l10n-title\"", "data-ddg-origin", "src=\"/.well-known/ddos-guard/"}
	googleUnusual = []string{
		"our systems have detected unusual traffic from your computer network",
		"unsere systeme haben ungewöhnlichen datenverkehr", "nuestros sistemas han detectado tráfico inusual",
		"nos systèmes ont détecté un trafic exceptionnel", "i nostri sistemi hanno rilevato traffico insolito",
	}
	formPage = []string{
		"type=\"password\"", "type='password'", "id=\"comment-form\"", "class=\"comment-form",
		"name=\"comment\"", "<article class", "<textarea name", "<textarea id=\"", "<textarea class", "<textarea rows", "<textarea cols", "<input type=\"email\"", "autocomplete=\"email\"",
	}
)

// A site's own block notice, without a vendor: it says that automated
// traffic was detected and that it is blocked, on a page that is little
// more than that notice. The phrases are at least 14 bytes (see
// TestDefaultRules_Valid), so some carry their subject.
var (
	automatedWords = []string{
		"automated access", "automated traffic", "automated requests", "automated queries", "automated bots",
		"bot traffic from", "bot traffic detected", "bot-like activity", "bot-like traffic", "bot-like behavio",
		"unusual traffic", "suspicious traffic", "identified as a bot", "automated behavio", "non-human traffic",
		"automated crawl", "automated scrap", "automated activity",
		"automatisierte zugriffe", "automatisierten zugriff", "automatisierte anfragen", "automatisierten anfragen",
		"automatisierter zugriff", "automatisierten datenverkehr", "ungewöhnlichen datenverkehr", "zugriffe durch bots",
		"acceso automatizado", "accesos automatizados", "tráfico automatizado", "solicitudes automatizadas",
		"consultas automatizadas", "tráfico inusual",
		"accès automatisé", "trafic automatisé", "requêtes automatisées", "trafic inhabituel",
		"自動化されたアクセス", "自動アクセス", "自動化されたリクエスト", "ボットによるアクセス", "機械的なアクセス", "異常なトラフィック",
	}
	blockedWords = []string{
		"has been blocked", "have been blocked", "temporarily blocked", "detected and blocked", "access is blocked",
		"request blocked", "access blocked", "request was blocked", "access has been denied", "access denied.",
		"been denied access", "access has been restricted", "has been restricted",
		"wurde gesperrt", "wurden gesperrt", "wurde blockiert", "wurden blockiert", "vorübergehend gesperrt",
		"zugriff verweigert", "zugriff gesperrt", "zugriff ist gesperrt",
		"sido bloqueado", "sido bloqueada", "acceso denegado", "acceso bloqueado", "bloqueado temporalmente",
		"a été bloqué", "été bloquée", "accès refusé", "accès bloqué", "temporairement bloqué",
		"ブロックしました", "ブロックされました", "ブロックされています", "アクセスを制限", "アクセスが制限", "アクセスを拒否",
		"アクセスが拒否", "遮断しました",
	}
	// fillForm are fields of a form a person fills in (a CAPTCHA
	// widget there protects the form, not the site).
	fillForm = append([]string{"<input type=\"text\"", "<input type=\"search\"", "<input type=\"tel\""}, formPage...)
)

// widget is a generic CAPTCHA widget vendor with its markers.
type widget struct {
	vendor  string
	markers []string
}

var widgets = []widget{
	{"recaptcha", []string{"class=\"g-recaptcha", "www.google.com/recaptcha/api.js", "www.recaptcha.net/recaptcha/api.js", "/recaptcha/enterprise.js", "grecaptcha.execute", "grecaptcha.render"}},
	{"hcaptcha", []string{"class=\"h-captcha", "js.hcaptcha.com/1/api.js", "hcaptcha.render", "hcaptcha.com/1/api.js"}},
	{"turnstile", []string{"class=\"cf-turnstile", "challenges.cloudflare.com/turnstile/", "turnstile.render"}},
}

func defaultRules() Rules {
	rules := Rules{
		// ---- Cloudflare: documented header first.
		{Name: "cloudflare/cf-mitigated-captcha", Vendor: "cloudflare", Kind: Captcha,
			Header: []HeaderMatch{{"Cf-Mitigated", "challenge"}}, Body: [][]string{cfCaptcha}},
		{Name: "cloudflare/cf-mitigated", Vendor: "cloudflare", Kind: JSChallenge,
			Header: []HeaderMatch{{"Cf-Mitigated", "challenge"}}},

		// ---- Cloudflare error pages: 1015 rate limit, 1xxx blocks.
		{Name: "cloudflare/1015", Vendor: "cloudflare", Kind: RateLimit,
			Body: [][]string{cf1015, append([]string{"used cloudflare to restrict access", "error-feedback-survey"}, cfErrorPage...)}},
		{Name: "cloudflare/1015-plain", Vendor: "cloudflare", Kind: RateLimit,
			Body: [][]string{{"error code: 1015"}}, MaxBody: 64},
		{Name: "cloudflare/access-denied-429", Vendor: "cloudflare", Kind: RateLimit, Status: st429,
			Body: [][]string{{"used cloudflare to restrict access"}}},
		{Name: "cloudflare/access-denied", Vendor: "cloudflare", Kind: Block,
			Body: [][]string{{"used cloudflare to restrict access"}, cfErrorPage}},
		{Name: "cloudflare/access-denied-403", Vendor: "cloudflare", Kind: Block, Status: st403,
			Body: [][]string{{"used cloudflare to restrict access"}}},
		{Name: "cloudflare/error-code-plain", Vendor: "cloudflare", Kind: Block, MaxBody: 64,
			Body: [][]string{{"error code: 1005", "error code: 1006", "error code: 1007", "error code: 1008",
				"error code: 1009", "error code: 1010", "error code: 1012", "error code: 1020"}}},
		{Name: "cloudflare/sorry-blocked", Vendor: "cloudflare", Kind: Block,
			Body: [][]string{{"sorry, you have been blocked"}, append([]string{"cloudflare ray id", "performance &amp; security by"}, cfErrorPage...)}},

		// ---- Cloudflare challenges (managed, JS, CAPTCHA, legacy IUAM).
		{Name: "cloudflare/challenge-captcha", Vendor: "cloudflare", Kind: Captcha,
			Body: [][]string{cfChallenge, cfChallengePage, cfCaptcha}},
		{Name: "cloudflare/challenge", Vendor: "cloudflare", Kind: JSChallenge,
			Body: [][]string{cfChallenge, cfChallengePage}},
		{Name: "cloudflare/challenge-status-captcha", Vendor: "cloudflare", Kind: Captcha, Status: stBlocking,
			Body: [][]string{cfChallenge, cfCaptcha}},
		{Name: "cloudflare/challenge-status", Vendor: "cloudflare", Kind: JSChallenge, Status: stBlocking,
			Body: [][]string{cfChallenge}},
		{Name: "cloudflare/attention-captcha", Vendor: "cloudflare", Kind: Captcha,
			Body: [][]string{{"<title>attention required! | cloudflare"}, append([]string{"recaptcha/api.js", "hcaptcha.com/1/api.js", "<form id=\"challenge-form\"", "id=\"cf-captcha-container\""}, cfCaptcha...)}},
		{Name: "cloudflare/attention-block", Vendor: "cloudflare", Kind: Block,
			Body: [][]string{{"<title>attention required! | cloudflare"}, cfErrorPage}},
		{Name: "cloudflare/attention-403", Vendor: "cloudflare", Kind: Block, Status: st403,
			Body: [][]string{{"<title>attention required! | cloudflare"}}},
		{Name: "cloudflare/just-a-moment-status", Vendor: "cloudflare", Kind: JSChallenge, Status: stBlocking,
			Body: [][]string{{"<title>just a moment...</title>", "<title>just a moment...", "checking your browser before accessing", "checking if the site connection is secure"},
				{"/cdn-cgi/styles/", "/cdn-cgi/images/trace/", "cloudflare ray id", "class=\"ray-id\"", "class=\"ray_id\"", "security by cloudflare", "protection by cloudflare"}}},
		{Name: "cloudflare/bot-fight-mode", Vendor: "cloudflare", Kind: JSChallenge,
			Body: [][]string{{"/cdn-cgi/bm/cv/"}, {"__cf$cv$params"}}, MaxBody: 1024}, // the script and nothing else

		// ---- Akamai.
		{Name: "akamai/access-denied", Vendor: "akamai", Kind: Block, MaxBody: 8192,
			Body: [][]string{{"you don't have permission to access"}, {"reference #18.", "reference&#32;&#35;18&#46;", "errors.edgesuite.net/18."}}},
		{Name: "akamai/behavioral", Vendor: "akamai", Kind: JSChallenge,
			Body: [][]string{{"sec-if-cpt-container"}, {"behavioral-content", "scf-akamai-protected-by", "powered and protected by"}}},
		{Name: "akamai/api-challenge", Vendor: "akamai", Kind: JSChallenge, Status: []int{403, 428, 429},
			Body: [][]string{{"\"cpr_chlge\":\"true\""}}, MaxBody: 4096},

		// ---- Imperva / Incapsula / Distil.
		{Name: "imperva/incident", Vendor: "imperva", Kind: Block,
			Body: [][]string{{"incapsula incident id"}, {"_incapsula_resource?"}}},
		{Name: "imperva/incident-text", Vendor: "imperva", Kind: Block, MaxBody: smallPage,
			Body: [][]string{{"request unsuccessful. incapsula incident id"}}},
		{Name: "imperva/iframe", Vendor: "imperva", Kind: Block,
			Body: [][]string{{"_incapsula_resource?cwudnsai=", "_incapsula_resource?swudnsai="}, {"request unsuccessful", "content=\"noindex"}}},
		{Name: "imperva/js-stub", Vendor: "imperva", Kind: JSChallenge, MaxBody: 2048,
			Body: [][]string{{"_incapsula_resource?swjiylwa="}, {"content=\"noindex"}},
			// The single-hash include on served pages is analytics.
			Not: []string{"swjiylwa=719d34d31c8e3a6e6fffd425f7e032f3&"}},
		{Name: "imperva/pardon-our-interruption", Vendor: "imperva", Kind: Captcha,
			Body: [][]string{{"pardon our interruption"}, {"made us think you were a bot", "distilcaptchaform", "distilcallbackguard", "anomaly.detected.png"}}},

		// ---- Sucuri.
		{Name: "sucuri/block-header", Vendor: "sucuri", Kind: Block,
			Header: []HeaderMatch{{"X-Sucuri-Block", ""}}},
		{Name: "sucuri/js-cookie", Vendor: "sucuri", Kind: JSChallenge,
			Body: [][]string{{"sucuri_cloudproxy_js"}, {"you are being redirected", "document.cookie"}}},
		{Name: "sucuri/access-denied", Vendor: "sucuri", Kind: Block,
			Body: [][]string{{"sucuri website firewall - access denied", "cloudproxy - access denied", "access denied - sucuri website firewall"},
				{"sucuri-firewall-block.css", "cloudproxy@sucuri.net", "sucuri.net/privacy-policy", "<title>sucuri website firewall"}}},
		{Name: "sucuri/access-denied-403", Vendor: "sucuri", Kind: Block, Status: st403,
			Body: [][]string{{"sucuri website firewall - access denied", "cloudproxy - access denied", "access denied - sucuri website firewall"}}},

		// ---- DDoS-Guard (check.ddos-guard.net/check.js is on served pages).
		{Name: "ddos-guard/captcha", Vendor: "ddos-guard", Kind: Captcha,
			Body: [][]string{{"/.well-known/ddos-guard/ddg-captcha-page/"}, ddgPage}},
		{Name: "ddos-guard/js-challenge", Vendor: "ddos-guard", Kind: JSChallenge,
			Body: [][]string{{"/.well-known/ddos-guard/js-challenge/"}, ddgPage}},
		{Name: "ddos-guard/captcha-403", Vendor: "ddos-guard", Kind: Captcha, Status: st403,
			Body: [][]string{{"/.well-known/ddos-guard/ddg-captcha-page/"}}},
		{Name: "ddos-guard/js-challenge-403", Vendor: "ddos-guard", Kind: JSChallenge, Status: st403,
			Body: [][]string{{"/.well-known/ddos-guard/js-challenge/"}}},
		{Name: "ddos-guard/title-captcha", Vendor: "ddos-guard", Kind: Captcha,
			Body: [][]string{{"<title>ddos-guard</title>"}, {"recaptcha/api.js", "hcaptcha.com/1/api.js", "class=\"g-recaptcha"}}},
		{Name: "ddos-guard/title", Vendor: "ddos-guard", Kind: JSChallenge, Status: stBlocking,
			Body: [][]string{{"<title>ddos-guard</title>"}}},

		// ---- Qrator: a small page that is little more than the PoW script.
		{Name: "qrator/pow", Vendor: "qrator", Kind: JSChallenge, MaxBody: 16384,
			Body: [][]string{{"/__qrator/qauth"}}},
		{Name: "qrator/pow-401", Vendor: "qrator", Kind: JSChallenge, Status: []int{401, 403},
			Header: []HeaderMatch{{"Server", "qrator"}}, Body: [][]string{{"/__qrator/qauth"}}},

		// ---- AWS WAF (documented: 405 + captcha, 202 + challenge).
		{Name: "aws-waf/action-captcha", Vendor: "aws-waf", Kind: Captcha,
			Header: []HeaderMatch{{"X-Amzn-Waf-Action", "captcha"}}},
		{Name: "aws-waf/action-challenge", Vendor: "aws-waf", Kind: JSChallenge,
			Header: []HeaderMatch{{"X-Amzn-Waf-Action", "challenge"}}},
		{Name: "aws-waf/captcha-page", Vendor: "aws-waf", Kind: Captcha,
			Body: [][]string{{".captcha.awswaf.com/"}, {"window.gokuprops", "awswafintegration", "awswafcookiedomainlist"}}},
		{Name: "aws-waf/challenge-page", Vendor: "aws-waf", Kind: JSChallenge,
			Body: [][]string{{".token.awswaf.com/"}, {"window.gokuprops", "awswafcookiedomainlist"}}, MaxBody: 16384},
		{Name: "aws-waf/cloudfront-blocked", Vendor: "aws-waf", Kind: Block, Status: st403,
			Body: [][]string{{"request blocked."}, {"generated by cloudfront (cloudfront)", "the request could not be satisfied"}}},

		// ---- DataDome (x-datadome: protected and js.datadome.co are on served pages).
		{Name: "datadome/json-interstitial", Vendor: "datadome", Kind: JSChallenge, MaxBody: 4096,
			Body: [][]string{{"\"url\":\"https://geo.captcha-delivery.com/interstitial/"}}},
		{Name: "datadome/json-captcha", Vendor: "datadome", Kind: Captcha, MaxBody: 4096,
			Body: [][]string{{"\"url\":\"https://geo.captcha-delivery.com/captcha/"}}},
		{Name: "datadome/banned", Vendor: "datadome", Kind: Block,
			Body: [][]string{{"captcha-delivery.com"}, ddBootstrap, {",'t':'bv','r':", ",\"t\":\"bv\",\"r\":"}}},
		{Name: "datadome/interstitial", Vendor: "datadome", Kind: JSChallenge,
			Body: [][]string{{"captcha-delivery.com"}, {"var dd={'rt':'i'", "var dd={\"rt\":\"i\"", "src=\"https://geo.captcha-delivery.com/interstitial/"}}},
		{Name: "datadome/captcha", Vendor: "datadome", Kind: Captcha,
			Body: [][]string{{"captcha-delivery.com"}, append([]string{"title=\"datadome captcha\"", "src=\"https://ct.captcha-delivery.com/c.js"}, ddBootstrap...)}},
		{Name: "datadome/header", Vendor: "datadome", Kind: Captcha, Status: st403,
			Header: []HeaderMatch{{"X-Dd-B", ""}, {"X-Datadome", ""}}},

		// ---- PerimeterX / HUMAN (_pxAppId and init.js are on served pages).
		{Name: "perimeterx/captcha", Vendor: "perimeterx", Kind: Captcha,
			Body: [][]string{{"<div id=\"px-captcha\"", "content=\"px-captcha\"", "captcha.px-cdn.net/", "/captcha/captcha.js?a=c"},
				{"window._pxappid", "access to this page has been denied", "perimeterx.com/", "press & hold to confirm", "press &amp; hold"}}},

		// ---- Kasada (p.js, /fp, /tl and KPSDK.configure are on served pages).
		{Name: "kasada/ips", Vendor: "kasada", Kind: JSChallenge,
			Body: [][]string{{"/ips.js?kp_uidz=", "/ips.js?x-kpsdk"}}},
		{Name: "kasada/blank", Vendor: "kasada", Kind: JSChallenge, MaxBody: 4096,
			Body: [][]string{{"kpsdk.scriptstart", "window.kpsdk={}", "window.kpsdk = {}"}}},
		{Name: "kasada/header-429", Vendor: "kasada", Kind: JSChallenge, Status: st429,
			Header: []HeaderMatch{{"X-Kpsdk-Ct", ""}}},

		// ---- F5 BIG-IP ASM / Shape.
		{Name: "f5/asm-rejected", Vendor: "f5", Kind: Block, MaxBody: smallPage,
			Body: [][]string{{"the requested url was rejected"}, {"your support id is"}}},

		// ---- Vercel (documented headers; the title as a fallback).
		{Name: "vercel/mitigated", Vendor: "vercel", Kind: JSChallenge,
			Header: []HeaderMatch{{"X-Vercel-Mitigated", "challenge"}}},
		{Name: "vercel/challenge-token", Vendor: "vercel", Kind: JSChallenge,
			Header: []HeaderMatch{{"X-Vercel-Challenge-Token", ""}}},
		{Name: "vercel/checkpoint", Vendor: "vercel", Kind: JSChallenge,
			Body: [][]string{{"<title>vercel security checkpoint</title>"}, {"we're verifying your browser", "we&#x27;re verifying your browser", "/.well-known/vercel/security/", "failed to verify your browser"}}},
		{Name: "vercel/checkpoint-status", Vendor: "vercel", Kind: JSChallenge, Status: []int{403, 429},
			Body: [][]string{{"<title>vercel security checkpoint</title>"}}},

		// ---- Wordfence.
		{Name: "wordfence/rate-limit", Vendor: "wordfence", Kind: RateLimit,
			Body: [][]string{{"exceeded the maximum number of"}, {"<em>generated by wordfence at"}}},
		{Name: "wordfence/rate-limit-status", Vendor: "wordfence", Kind: RateLimit, Status: []int{429, 503},
			Body: [][]string{{"exceeded the maximum number of"}, {"your access to this site has been limited", "generated by wordfence at"}}},
		{Name: "wordfence/block", Vendor: "wordfence", Kind: Block,
			Body: [][]string{{"<em>generated by wordfence at"}, wordfencePage}},
		{Name: "wordfence/block-status", Vendor: "wordfence", Kind: Block, Status: []int{403, 503},
			Body: [][]string{{"generated by wordfence at", "wordfence.com/help/?query=locked-out"}, wordfencePage}},
		{Name: "wordfence/limited-text", Vendor: "wordfence", Kind: Block, MaxBody: 2 * smallPage,
			Body: [][]string{{"your access to this site has been limited"}, {"http response code 503", "http response code 403", "generated by wordfence"}}},

		// ---- Anubis and similar proof-of-work gates (200 by default).
		{Name: "anubis/challenge", Vendor: "anubis", Kind: JSChallenge,
			Body: [][]string{{"<script id=\"anubis_challenge\"", "/.within.website/x/cmd/anubis/api/pass-challenge"}}},
		{Name: "anubis/deny", Vendor: "anubis", Kind: Block,
			Body: [][]string{{"access denied: error code"}, {"/.within.website/", "techarohq/anubis", "anubis_version"}}},
		{Name: "anubis/cookie", Vendor: "anubis", Kind: JSChallenge,
			Header: []HeaderMatch{{"Set-Cookie", "-anubis-auth="}}, Body: [][]string{{"/.within.website/", "making sure you&#39;re not a bot", "making sure you're not a bot"}}},
		{Name: "go-away/challenge", Vendor: "go-away", Kind: JSChallenge,
			Body: [][]string{{"/git/go-away/cmd/go-away/"}, {"checking you are not a bot", "loading challenge", "git.gammaspectra.live/git/go-away"}}},

		// ---- Google "sorry" and Amazon robot check.
		{Name: "google/unusual-traffic", Vendor: "google", Kind: Captcha,
			Body: [][]string{googleUnusual, {"<form id=\"captcha-form\"", "class=\"g-recaptcha", "solvesimplechallenge"}}},
		{Name: "google/unusual-traffic-status", Vendor: "google", Kind: Captcha, Status: []int{429, 503},
			Body: [][]string{googleUnusual}},
		{Name: "google/sorry", Vendor: "google", Kind: Captcha,
			Body: [][]string{{"<form id=\"captcha-form\" action=\"index\"", "/sorry/index?continue="}, {"google.com/recaptcha/", "gstatic.com/recaptcha/", "recaptcha.net/recaptcha/", "solvesimplechallenge"}}},
		{Name: "amazon/robot-check", Vendor: "amazon", Kind: Captcha,
			Body: [][]string{{"<title dir=\"ltr\">robot check</title>", "<title>robot check</title>", "enter the characters you see below", "make sure you're not a robot"},
				{"opfcaptcha.amazon.com", "/errors/validatecaptcha", "api-services-support@amazon.com", "images-amazon.com", "csm-captcha-instrumentation"}}},

		// ---- Radware.
		{Name: "radware/shieldsquare", Vendor: "radware", Kind: Captcha,
			Body: [][]string{{"<title>shieldsquare captcha", "captcha.perfdrive.com/", "validate.perfdrive.com/"}, {"window.ssjsinternal", "var __uzdbm_1 ", "shieldsquare_styles", "perfdrive.com/captcha"}}},
		{Name: "radware/appwall", Vendor: "radware", Kind: Block,
			Body: [][]string{{"unauthorized request blocked"}, {"detected unauthorized activity", "cloudwebsec.radware.com"}}},

		// ---- Other WAFs and platform walls (named when the page names them).
		{Name: "csf/blocked", Vendor: "csf", Kind: Block, Status: stWAF, MaxBody: smallPage,
			Body: [][]string{{"your connection to this server has been blocked in this server's firewall"}}},
		{Name: "indusface/blocked", Vendor: "indusface", Kind: Block, Status: stWAF, MaxBody: smallPage,
			Body: [][]string{{"this website is secured against online attacks. your request was blocked"}}},
		{Name: "reblaze/terminated", Vendor: "reblaze", Kind: Block, Status: stWAF, MaxBody: smallPage,
			Body: [][]string{{"current session has been terminated"}, {"access denied (403)", "<title>access denied"}}},
		{Name: "siteground/robot", Vendor: "siteground", Kind: Captcha, MaxBody: smallPage,
			Body: [][]string{{"our system thinks you might be a robot"}}},
		{Name: "shield/blocked", Vendor: "shield", Kind: Block, MaxBody: smallPage,
			Body: [][]string{{"you were blocked by the shield"}}},
		{Name: "modsecurity/blocked", Vendor: "modsecurity", Kind: Block, Status: []int{403, 406, 501},
			Body: [][]string{{"this error was generated by mod_security"}}},
		{Name: "aliyun/blocked", Vendor: "aliyun", Kind: Block, Status: stWAF, MaxBody: smallPage,
			Body: [][]string{{"sorry, your request has been blocked as it may cause potential threats to the server's security"}}},
		{Name: "alibaba/punish", Vendor: "alibaba", Kind: Captcha,
			Body: [][]string{{"punish?x5secdata", "/_____tmd_____/punish"}}},
		{Name: "stackpath/protected", Vendor: "stackpath", Kind: Block, Status: stBlocking,
			Body: [][]string{{"is using a security service for protection against online attacks"}}},
		{Name: "reddit/network-security", Vendor: "reddit", Kind: Block, Status: stBlocking,
			Body: [][]string{{"blocked by network security"}}},
		{Name: "weibo/visitor-system", Vendor: "weibo", Kind: JSChallenge,
			Body: [][]string{{"<title>sina visitor system</title>"}}},
		{Name: "quora/scraper", Vendor: "", Kind: Block, Status: stWAF, MaxBody: smallPage,
			Body: [][]string{{"our automated scripts have detected a possible scraper"}}},
		{Name: "generic/block-automation", Vendor: "", Kind: Block, Status: []int{403, 429}, MaxBody: 256,
			Body: [][]string{{"block automation", "automated access is blocked", "automated requests are not allowed"}}},
		{Name: "origin/automated-blocked-status", Vendor: "", Kind: Block, Status: []int{401, 403, 406, 429, 503}, MaxText: NoticeText,
			Body: [][]string{automatedWords, blockedWords}},
		{Name: "origin/automated-blocked", Vendor: "", Kind: Block, MaxText: 512, HTML: true,
			Body: [][]string{automatedWords, blockedWords}},
		{Name: "linkedin/999", Vendor: "", Kind: Block, Status: []int{999}},
	}

	// Site-built CAPTCHA interstitials, one set per widget vendor: the widget
	// plus challenge wording on a blocking status or on a small page, or a
	// page that is little more than the widget and a form that submits it;
	// never on a page with a login, comment form or article.
	for _, w := range widgets {
		rules = append(rules,
			Rule{Name: w.vendor + "/interstitial-status", Vendor: w.vendor, Kind: Captcha, Status: stBlocking,
				Markup: [][]string{w.markers}, Not: formPage, MaxBody: 32768},
			Rule{Name: w.vendor + "/interstitial", Vendor: w.vendor, Kind: Captcha, MaxBody: 16384,
				Markup: [][]string{w.markers}, Body: [][]string{captchaWords}, Not: formPage},
			Rule{Name: w.vendor + "/gate", Vendor: w.vendor, Kind: Captcha, MaxText: 512, BareForm: true,
				Markup: [][]string{w.markers}, Not: fillForm},
		)
	}
	return rules
}
