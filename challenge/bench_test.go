package challenge

import (
	"bytes"
	"net/http"
	"testing"
)

// Benchmarks: Detect against a plain bytes.Index scan of the same bytes
// (BenchmarkBytesIndex), on a typical 60 KB page (negative verdict) and on a
// 16 KiB challenge page. SetBytes is the number of bytes examined.
//
//	go test -run '^$' -bench 'Detect|BytesIndex' -benchmem ./challenge

// challengePage is a Cloudflare managed challenge padded with inline style to
// the size of the real ones (about 16 KiB).
func challengePage(b testing.TB) []byte {
	page := readFixture(b, "challenge/cf_managed.html")
	var css bytes.Buffer
	for css.Len() < 14<<10 {
		css.WriteString(".main-content .spacer-bottom{margin:2rem auto 0;max-width:60rem;padding:0 1.5rem;color:#313131}\n")
	}
	return bytes.Replace(page, []byte("</style>"), append(css.Bytes(), "</style>"...), 1)
}

func benchDetect(b *testing.B, status int, h http.Header, body []byte, wantBlocked bool) {
	if v := Detect(status, h, body); v.Blocked != wantBlocked {
		b.Fatalf("verdict %s", v)
	}
	b.SetBytes(int64(min(len(body), MaxBytes)))
	b.ReportAllocs()
	for b.Loop() {
		Detect(status, h, body)
	}
}

var sink int

func benchIndex(b *testing.B, body []byte) {
	needle := []byte("_cf_chl_opt") // absent or late: a full scan
	body = body[:min(len(body), MaxBytes)]
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		sink += bytes.Index(body, needle)
	}
}

func BenchmarkDetect_C6_Typical60KB(b *testing.B) {
	benchDetect(b, 200, hdr(cloudflareServed...), typicalPage(b), false)
}

func BenchmarkBytesIndex_Typical60KB(b *testing.B) { benchIndex(b, typicalPage(b)) }

func BenchmarkDetect_C6_ChallengePage(b *testing.B) {
	benchDetect(b, 403, hdr("Server", "cloudflare"), challengePage(b), true)
}

func BenchmarkDetect_C6_ChallengePage200NoHeaders(b *testing.B) {
	benchDetect(b, 200, nil, challengePage(b), true)
}

func BenchmarkBytesIndex_ChallengePage(b *testing.B) { benchIndex(b, challengePage(b)) }

// BenchmarkDetect_C6_QuotingArticle is a 60 KB article that quotes many
// vendors' markers in its text and code blocks: the scan finds them and
// the layout pass has to place them (negative verdict).
func BenchmarkDetect_C6_QuotingArticle(b *testing.B) {
	benchDetect(b, 200, hdr(cloudflareServed...), padded(readFixture(b, "normal/article_quoting.html"), 60_000), false)
}

// TestDetect_C6_NoAllocNegative: a negative verdict allocates nothing, and a
// positive one allocates only its Evidence slice.
func TestDetect_C6_NoAllocNegative(t *testing.T) {
	page, h := typicalPage(t), hdr(cloudflareServed...)
	if n := testing.AllocsPerRun(20, func() { Detect(200, h, page) }); n != 0 {
		t.Errorf("negative verdict: %v allocs, want 0", n)
	}
	// Also when the markers found send the page through the layout pass.
	for _, name := range []string{"normal/article_quoting.html", "trap/captcha_history_en.html", "trap/vendor_block_texts_docs_en.html", "normal/login_recaptcha.html"} {
		page := padded(readFixture(t, name), 60_000)
		if n := testing.AllocsPerRun(20, func() { Detect(200, h, page) }); n != 0 {
			t.Errorf("%s: %v allocs, want 0", name, n)
		}
	}
	ch := challengePage(t)
	if n := testing.AllocsPerRun(20, func() { Detect(403, nil, ch) }); n > 1 {
		t.Errorf("positive verdict: %v allocs, want at most 1", n)
	}
}

// BenchmarkBytesIndex_AllMarkersTypical60KB is the naive alternative for
// context: one case-sensitive bytes.Index per marker of the default table.
func BenchmarkBytesIndex_AllMarkersTypical60KB(b *testing.B) {
	body := typicalPage(b)
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		for _, n := range std.m.needles {
			sink += bytes.Index(body, n)
		}
	}
}
