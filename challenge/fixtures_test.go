package challenge

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The repository's own fixtures: base pages in testdata (written for this
// package, modelled on the markers in MARKERS.md, not copied), multiplied
// in code into status, header, language and minified variants.

func readFixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sentences are filler prose for padding pages to a realistic size.
var sentences = []string{
	"The roof went first, and the north gable took the worst of the weather for two winters.",
	"Volunteers carried forty slates, a bag of lime and a new lintel up the glen in three trips.",
	"Nobody expected the spring to be so dry; the burn that feeds the bothy nearly stopped running.",
	"A stove is a luxury here, so bring dry kindling and leave some for whoever comes after you.",
	"We counted 312 visitors in the book last year, from Orkney, Lyon, Kraków and Vancouver.",
	"If the bridge is out, follow the fence line east for half a kilometre to the ford.",
	"Mortar mixed too wet will crack by October; ask the old hands before you start pointing.",
	"Her photographs of the 1987 repairs show the same rafters, darker now, but still sound.",
	"Questions about the maintenance weekend go to the committee, who answer within a week.",
	"Zinc flashing, quick-drying sealant and a borrowed jack were the heroes of the job.",
	"On clear nights the Milky Way sits right above the ridge and the only sound is the wind.",
	"Please don't leave food behind: mice are patient, and they have read every map we own.",
}

// paragraphs returns deterministic HTML paragraphs of about n bytes.
func paragraphs(n int) string {
	var b strings.Builder
	x := uint32(12345)
	for b.Len() < n {
		b.WriteString(`<p class="entry">`)
		for i := 0; i < 5; i++ {
			x = x*1664525 + 1013904223
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(sentences[int(x>>8)%len(sentences)])
		}
		x = x*1664525 + 1013904223
		fmt.Fprintf(&b, ` <a href="/walks/%d/">Route %d</a>.</p>`+"\n", x>>20, x>>24)
	}
	return b.String()
}

// padded fills the {{PARAGRAPHS}} slot of a page so that it has about size bytes.
func padded(page []byte, size int) []byte {
	fill := max(size-len(page), 0)
	return bytes.Replace(page, []byte("{{PARAGRAPHS}}"), []byte(paragraphs(fill)), 1)
}

var (
	betweenTags = regexp.MustCompile(`>\s+<`)
	lineBreaks  = regexp.MustCompile(`\s*\n\s*`)
)

// minify is what HTML minifiers do to whitespace.
func minify(b []byte) []byte {
	b = betweenTags.ReplaceAll(b, []byte("><"))
	return lineBreaks.ReplaceAll(b, []byte(" "))
}

func hdr(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Add(kv[i], kv[i+1])
	}
	return h
}

// cloudflareServed are the headers of any page proxied by Cloudflare.
var cloudflareServed = []string{"Server", "cloudflare", "Cf-Ray", "8a1b2c3d4e5f6a7b-LHR", "Cf-Cache-Status", "DYNAMIC",
	"Set-Cookie", "__cf_bm=ExampleToken; path=/; HttpOnly; Secure; SameSite=None",
	"Report-To", `{"endpoints":[{"url":"https://a.nel.cloudflare.com/report/v4?s=x"}],"group":"cf-nel","max_age":604800}`,
	"Content-Security-Policy", "script-src 'self' https://www.google.com/recaptcha/ https://challenges.cloudflare.com https://js.hcaptcha.com"}

// jsdSnippet is the shape of the JavaScript-detections script Cloudflare
// injects into served HTML pages.
const jsdSnippet = `<script>(function(){var d=document.createElement('script');d.innerHTML="window.__CF$cv$params={r:'8a1b2c3d4e5f6a7b',t:'MTcwMDAwMDAwMA=='};var a=document.createElement('script');a.src='/cdn-cgi/challenge-platform/scripts/jsd/main.js';document.getElementsByTagName('head')[0].appendChild(a);";document.head.appendChild(d)})();</script>`

type fixture struct {
	name    string
	status  int
	header  http.Header
	body    []byte
	blocked bool
	vendor  string
	kind    Kind
}

type base struct {
	file     string
	statuses []int
	header   []string
	vendor   string
	kind     Kind
	// translations are extra variants: pairs of (from, to) replacements.
	translations [][]string
}

var challengeBases = []base{
	{file: "cf_managed.html", statuses: []int{403, 503, 200}, vendor: "cloudflare", kind: JSChallenge,
		translations: [][]string{
			{"Just a moment...", "Einen Moment bitte…", "Verifying you are human. This may take a few seconds.", "Es wird überprüft, ob Sie ein Mensch sind."},
			{"Just a moment...", "Un instant…", "Enable JavaScript and cookies to continue", "Activez JavaScript et les cookies pour continuer"},
			{"Just a moment...", "Один момент…"},
		}},
	{file: "cf_managed.html", statuses: []int{403}, header: []string{"Cf-Mitigated", "challenge", "Server", "cloudflare"}, vendor: "cloudflare", kind: JSChallenge},
	{file: "cf_interactive.html", statuses: []int{403, 200}, vendor: "cloudflare", kind: Captcha,
		translations: [][]string{{"Just a moment...", "Un momento…", "Verify you are human by completing the action below.", "Verifica que eres un ser humano completando la acción siguiente."}}},
	{file: "cf_interactive.html", statuses: []int{403}, header: []string{"cf-mitigated", "challenge"}, vendor: "cloudflare", kind: Captcha},
	{file: "cf_iuam_legacy.html", statuses: []int{503, 429, 200}, vendor: "cloudflare", kind: JSChallenge},
	{file: "cf_1020.html", statuses: []int{403, 200}, vendor: "cloudflare", kind: Block,
		translations: [][]string{{"What happened?", "Was ist passiert?", "Access denied</h2>", "Zugriff verweigert</h2>"}}},
	{file: "cf_1015.html", statuses: []int{429, 403}, vendor: "cloudflare", kind: RateLimit},
	{file: "cf_sorry_blocked.html", statuses: []int{403, 200}, vendor: "cloudflare", kind: Block,
		translations: [][]string{{"Why have I been blocked?", "¿Por qué me han bloqueado?"}}},
	{file: "cf_1020_plain.txt", statuses: []int{403}, vendor: "cloudflare", kind: Block},
	{file: "cf_1015_plain.txt", statuses: []int{429}, vendor: "cloudflare", kind: RateLimit},
	{file: "akamai_denied.html", statuses: []int{403, 200}, header: []string{"Server", "AkamaiGHost"}, vendor: "akamai", kind: Block},
	{file: "akamai_behavioral.html", statuses: []int{200}, vendor: "akamai", kind: JSChallenge},
	{file: "imperva_incident.html", statuses: []int{200, 403}, vendor: "imperva", kind: Block},
	{file: "imperva_stub.html", statuses: []int{200}, header: []string{"X-Iinfo", "10-123456-0 0NNN RT(1 2) q(0 -1 -1 -1) r(0 -1)", "X-Cdn", "Imperva"}, vendor: "imperva", kind: JSChallenge},
	{file: "sucuri_block.html", statuses: []int{403, 200}, vendor: "sucuri", kind: Block},
	{file: "sucuri_js.html", statuses: []int{200, 307}, vendor: "sucuri", kind: JSChallenge},
	{file: "ddos_guard_js.html", statuses: []int{403, 200}, header: []string{"Server", "ddos-guard"}, vendor: "ddos-guard", kind: JSChallenge},
	{file: "ddos_guard_captcha.html", statuses: []int{403}, vendor: "ddos-guard", kind: Captcha},
	{file: "qrator.html", statuses: []int{401, 200}, header: []string{"Server", "QRATOR"}, vendor: "qrator", kind: JSChallenge},
	{file: "awswaf_captcha.html", statuses: []int{405}, header: []string{"X-Amzn-Waf-Action", "captcha"}, vendor: "aws-waf", kind: Captcha},
	{file: "awswaf_captcha.html", statuses: []int{200}, vendor: "aws-waf", kind: Captcha},
	{file: "awswaf_challenge.html", statuses: []int{202}, header: []string{"x-amzn-waf-action", "challenge"}, vendor: "aws-waf", kind: JSChallenge},
	{file: "awswaf_challenge.html", statuses: []int{200}, vendor: "aws-waf", kind: JSChallenge},
	{file: "cloudfront_blocked.html", statuses: []int{403}, header: []string{"Server", "CloudFront", "X-Cache", "Error from cloudfront"}, vendor: "aws-waf", kind: Block},
	{file: "datadome_captcha.html", statuses: []int{403, 200}, header: []string{"X-Datadome", "protected", "X-Dd-B", "1"}, vendor: "datadome", kind: Captcha},
	{file: "datadome_interstitial.html", statuses: []int{403}, vendor: "datadome", kind: JSChallenge},
	{file: "datadome_json_captcha.json", statuses: []int{403}, header: []string{"Content-Type", "application/json"}, vendor: "datadome", kind: Captcha},
	{file: "px_captcha.html", statuses: []int{403, 200}, vendor: "perimeterx", kind: Captcha},
	{file: "kasada_blank.html", statuses: []int{429, 200}, vendor: "kasada", kind: JSChallenge},
	{file: "f5_rejected.html", statuses: []int{200}, vendor: "f5", kind: Block,
		translations: [][]string{{"Please consult with your administrator.", "Por favor consulte con su administrador.", "Your support ID is:", "Your support ID is :"}}},
	{file: "vercel_checkpoint.html", statuses: []int{429, 403, 200}, vendor: "vercel", kind: JSChallenge},
	{file: "wordfence_block.html", statuses: []int{403}, vendor: "wordfence", kind: Block},
	{file: "wordfence_ratelimit.html", statuses: []int{503}, vendor: "wordfence", kind: RateLimit},
	{file: "anubis.html", statuses: []int{200, 401}, vendor: "anubis", kind: JSChallenge,
		translations: [][]string{{"Making sure you&#39;re not a bot!", "Wir stellen sicher, dass Sie kein Bot sind!"}}},
	{file: "goaway.html", statuses: []int{200}, vendor: "go-away", kind: JSChallenge},
	{file: "google_sorry.html", statuses: []int{429, 200}, vendor: "google", kind: Captcha,
		translations: [][]string{{"Our systems have detected unusual traffic from your computer network.", "Unsere Systeme haben ungewöhnlichen Datenverkehr aus Ihrem Computernetzwerk festgestellt."}}},
	{file: "amazon_robot.html", statuses: []int{200, 503}, vendor: "amazon", kind: Captcha},
	{file: "radware_captcha.html", statuses: []int{200}, vendor: "radware", kind: Captcha},
	{file: "recaptcha_interstitial.html", statuses: []int{200, 403}, vendor: "recaptcha", kind: Captcha,
		translations: [][]string{{"One more step", "Una verificación de seguridad", "Please verify you are human to continue", "Confirma que no eres un robot para continuar"}}},
	{file: "hcaptcha_interstitial.html", statuses: []int{200, 429}, vendor: "hcaptcha", kind: Captcha},
	{file: "turnstile_interstitial.html", statuses: []int{200, 403}, vendor: "turnstile", kind: Captcha},
}

var trapBases = []base{
	{file: "article_cloudflare.html", statuses: []int{200}, header: cloudflareServed},
	{file: "article_quoting.html", statuses: []int{200}},
	{file: "login_recaptcha.html", statuses: []int{200, 401, 403}},
	{file: "contact_hcaptcha.html", statuses: []int{200, 403}},
	{file: "signup_turnstile.html", statuses: []int{200, 403}, header: cloudflareServed},
	{file: "access_denied_article.html", statuses: []int{200, 403}},
	{file: "origin_403.html", statuses: []int{403}, header: cloudflareServed},
	{file: "origin_403.html", statuses: []int{403}, header: []string{"Server", "AkamaiGHost", "Akamai-Grn", "0.1a2b3c4d.1700000000.5e6f7a8b"}},
	{file: "origin_429.html", statuses: []int{429}, header: cloudflareServed},
	{file: "origin_429.json", statuses: []int{429}, header: []string{"Content-Type", "application/json", "Retry-After", "30"}},
	{file: "cf_522.html", statuses: []int{522, 521, 520, 502, 504}, header: cloudflareServed},
	{file: "maintenance_503.html", statuses: []int{503}, header: cloudflareServed,
		translations: [][]string{{"</body>", jsdSnippet + "</body>"}}},
	{file: "vendor_sensors.html", statuses: []int{200, 404}, header: []string{"X-Datadome", "protected", "X-Iinfo", "10-1-0 0NNN", "X-Cdn", "Imperva",
		"Server", "AkamaiGHost", "Set-Cookie", "datadome=abc; Path=/", "Set-Cookie", "_abck=abc~0~; Path=/", "Set-Cookie", "__ddg1_=abc; Path=/",
		"Set-Cookie", "visid_incap_123=abc; path=/", "Set-Cookie", "aws-waf-token=abc; Path=/", "X-Amz-Cf-Id", "abc==", "X-Vercel-Id", "fra1::abc", "Server", "Vercel"}},
	{file: "imperva_redirect.html", statuses: []int{200}, header: []string{"X-Iinfo", "10-1-0 0NNN", "X-Cdn", "Imperva"},
		translations: [][]string{{"<head>", `<head><META NAME="robots" CONTENT="noindex,nofollow">`}}},
	{file: "anubis_article.html", statuses: []int{200}},
	{file: "short_note.html", statuses: []int{200, 503}, header: cloudflareServed},
	{file: "api_captcha_field.json", statuses: []int{200, 403}, header: []string{"Content-Type", "application/json"}},
}

// variants expands a base into its fixtures: every status, as written and
// minified, and each translation.
func variants(t testing.TB, dir string, b base, blocked bool) []fixture {
	page := readFixture(t, filepath.Join(dir, b.file))
	if bytes.Contains(page, []byte("{{PARAGRAPHS}}")) {
		page = padded(page, 24<<10)
	}
	bodies := map[string][]byte{"": page, "min": minify(page)}
	for i, tr := range b.translations {
		p := page
		for j := 0; j+1 < len(tr); j += 2 {
			if !bytes.Contains(p, []byte(tr[j])) {
				t.Fatalf("%s: translation %d: %q not in page", b.file, i, tr[j])
			}
			p = bytes.ReplaceAll(p, []byte(tr[j]), []byte(tr[j+1]))
		}
		bodies[fmt.Sprintf("lang%d", i)] = p
	}
	var out []fixture
	for _, st := range b.statuses {
		for form, body := range bodies {
			name := fmt.Sprintf("%s/%d", b.file, st)
			if len(b.header) > 0 {
				name += "+headers"
			}
			if form != "" {
				name += "/" + form
			}
			out = append(out, fixture{name: name, status: st, header: hdr(b.header...), body: body,
				blocked: blocked, vendor: b.vendor, kind: b.kind})
		}
	}
	return out
}

func challengeFixtures(t testing.TB) []fixture {
	var out []fixture
	for _, b := range challengeBases {
		out = append(out, variants(t, "challenge", b, true)...)
	}
	// Header-only answers (documented headers, empty or unreadable body).
	out = append(out,
		fixture{name: "gen/vercel-headers-only/429", status: 429, header: hdr("X-Vercel-Mitigated", "challenge", "Server", "Vercel"), blocked: true, vendor: "vercel", kind: JSChallenge},
		fixture{name: "gen/aws-captcha-headers-only/405", status: 405, header: hdr("X-Amzn-Waf-Action", "captcha"), blocked: true, vendor: "aws-waf", kind: Captcha},
		fixture{name: "gen/cf-mitigated-empty/403", status: 403, header: hdr("Cf-Mitigated", "challenge"), blocked: true, vendor: "cloudflare", kind: JSChallenge},
		fixture{name: "gen/sucuri-block-header/403", status: 403, header: hdr("X-Sucuri-Block", "BNP005", "Server", "Sucuri/Cloudproxy"), blocked: true, vendor: "sucuri", kind: Block},
		fixture{name: "gen/kasada-429", status: 429, header: hdr("X-Kpsdk-Ct", "0abc"), blocked: true, vendor: "kasada", kind: JSChallenge},
	)
	return out
}

func trapFixtures(t testing.TB) []fixture {
	var out []fixture
	for _, b := range trapBases {
		out = append(out, variants(t, "normal", b, false)...)
	}
	// Large pages whose only challenge markup sits in a comment beyond MaxBytes.
	article := padded(readFixture(t, "normal/article_cloudflare.html"), MaxBytes+8<<10)
	for _, deep := range []string{"challenge/cf_managed.html", "challenge/px_captcha.html", "challenge/anubis.html", "challenge/google_sorry.html", "challenge/akamai_denied.html"} {
		body := bytes.Replace(article, []byte("</body>"), append(append([]byte("<!-- "), readFixture(t, deep)...), " --></body>"...), 1)
		if i := bytes.Index(body, []byte("<!-- ")); i < MaxBytes {
			t.Fatalf("deep marker at %d, want beyond %d", i, MaxBytes)
		}
		for _, st := range []int{200, 403, 503} {
			out = append(out, fixture{name: fmt.Sprintf("gen/deep-%s/%d", filepath.Base(deep), st), status: st, header: hdr(cloudflareServed...), body: body})
		}
	}
	// Plain origin statuses with empty bodies, behind a CDN or not.
	for _, st := range []int{401, 403, 404, 429, 500, 503} {
		out = append(out,
			fixture{name: fmt.Sprintf("gen/empty-cloudflare/%d", st), status: st, header: hdr(cloudflareServed...)},
			fixture{name: fmt.Sprintf("gen/empty/%d", st), status: st, header: hdr("Server", "nginx")})
	}
	out = append(out, fixture{name: "gen/typical-60k/200", status: 200, header: hdr(cloudflareServed...), body: typicalPage(t)})
	return out
}

// typicalPage is a 60 KB article served through Cloudflare.
func typicalPage(t testing.TB) []byte {
	return padded(readFixture(t, "normal/article_cloudflare.html"), 60_000)
}

// TestFixtures_C6_B7_H8_Challenges: every challenge fixture variant is
// detected with its vendor and kind.
func TestFixtures_C6_B7_H8_Challenges(t *testing.T) {
	fx := challengeFixtures(t)
	for _, f := range fx {
		v := Detect(f.status, f.header, f.body)
		if !v.Blocked || v.Vendor != f.vendor || v.Kind != f.kind {
			t.Errorf("%s: got %s (rule %q, evidence %q), want %s %s", f.name, v, v.Rule, v.Evidence, f.vendor, f.kind)
		}
	}
	if len(fx) < 40 {
		t.Errorf("only %d challenge fixtures", len(fx))
	}
	t.Logf("%d challenge fixture variants from %d base pages", len(fx), len(challengeBases))
}

// TestFixtures_C6_Traps: no ordinary page is flagged (zero false positives).
func TestFixtures_C6_Traps(t *testing.T) {
	fx := trapFixtures(t)
	fp := 0
	for _, f := range fx {
		if v := Detect(f.status, f.header, f.body); v.Blocked || v.Kind != None || v.Vendor != "" || v.Evidence != nil {
			fp++
			t.Errorf("%s: false positive %s (rule %q, evidence %q)", f.name, v, v.Rule, v.Evidence)
		}
	}
	if len(fx) < 40 {
		t.Errorf("only %d trap fixtures", len(fx))
	}
	t.Logf("%d trap fixture variants from %d base pages + generated ones, %d false positives", len(fx), len(trapBases), fp)
}
