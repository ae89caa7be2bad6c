package challenge

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"testing/iotest"
)

func TestKind_String(t *testing.T) {
	for k, want := range map[Kind]string{None: "", JSChallenge: "js_challenge", Captcha: "captcha", Block: "block", RateLimit: "rate_limit", RateLimit + 1: "", Kind(99): "", Kind(-1): ""} {
		if got := k.String(); got != want {
			t.Errorf("Kind(%d).String() = %q, want %q", int(k), got, want)
		}
		if want != "" {
			if back, ok := ParseKind(want); !ok || back != k {
				t.Errorf("ParseKind(%q) = %v, %v", want, back, ok)
			}
		}
	}
	if _, ok := ParseKind("nope"); ok {
		t.Error("ParseKind accepted an unknown name")
	}
}

// TestDefaultRules_Valid: every default rule validates, names a vendor or is
// an explicit platform rule, and every marker is at least 14 bytes so that
// the scan samples every 11th position.
func TestDefaultRules_Valid(t *testing.T) {
	rules := DefaultRules()
	if err := rules.Validate(); err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, r := range rules {
		if names[r.Name] {
			t.Errorf("duplicate rule name %q", r.Name)
		}
		names[r.Name] = true
		if r.Vendor != strings.ToLower(r.Vendor) {
			t.Errorf("%s: vendor %q not lower case", r.Name, r.Vendor)
		}
		for _, g := range append(append(r.Body, r.Markup...), r.Not) {
			for _, m := range g {
				if len(m) < 14 {
					t.Errorf("%s: marker %q shorter than 14 bytes", r.Name, m)
				}
			}
		}
	}
	if s := std.m.stride; s < 11 {
		t.Errorf("stride %d, want >= 11", s)
	}
	// DefaultRules returns a deep copy: changing it changes neither Detect
	// nor the next copy.
	rules[0].Header[0].Value = "x"
	for i := range rules {
		for _, g := range rules[i].Body {
			for j := range g {
				g[j] = "changed"
			}
		}
	}
	if again := DefaultRules(); again[0].Header[0].Value != "challenge" || again[0].Body[0][0] == "changed" {
		t.Error("DefaultRules shares memory between copies")
	}
	if v := Detect(403, hdr("Cf-Mitigated", "challenge"), nil); v.Rule != "cloudflare/cf-mitigated" {
		t.Errorf("default table changed through DefaultRules: %+v", v)
	}
}

func TestRule_Validate(t *testing.T) {
	bad := []Rule{
		{},
		{Name: "x"},
		{Name: "x", Kind: Block},
		{Name: "x", Kind: Block, Status: []int{403}},
		{Name: "x", Kind: Block, Body: [][]string{{}}},
		{Name: "x", Kind: Block, Body: [][]string{{""}}},
		{Name: "x", Kind: Block, Header: []HeaderMatch{{}}},
		{Name: "x", Kind: Block, Body: [][]string{{"abc"}}, Not: []string{""}},
		{Name: "x", Kind: Kind(9), Body: [][]string{{"abc"}}},
	}
	for i, r := range bad {
		if err := r.Validate(); !errors.Is(err, ErrInvalidRule) {
			t.Errorf("%d: Validate() = %v, want ErrInvalidRule", i, err)
		}
		// An invalid rule never matches.
		d := &Detector{Rules: Rules{r}}
		if v := d.Detect(403, hdr("X", "y"), []byte("abc")); v.Blocked {
			t.Errorf("%d: invalid rule matched: %+v", i, v)
		}
	}
	if err := Rules(bad).Validate(); !errors.Is(err, ErrInvalidRule) || strings.Count(err.Error(), "\n") != len(bad)-1 {
		t.Errorf("Rules.Validate() = %v", err)
	}
	if err := (&Rule{Name: "linkedin", Kind: Block, Status: []int{999}}).Validate(); err != nil {
		t.Errorf("status-only rule with a non-standard code: %v", err)
	}
}

// TestDetector_CustomVendor: a user table with its own vendor, built on the
// default rules, including markers shorter than the sampling gram.
func TestDetector_CustomVendor(t *testing.T) {
	mine := Rule{Name: "acme/wall", Vendor: "acme", Kind: Captcha, Status: []int{403},
		Header: []HeaderMatch{{Name: "x-acme-shield", Value: "CHALLENGE"}},
		Body:   [][]string{{"acme-wall"}, {"<b>"}}}
	d := &Detector{Rules: append(DefaultRules(), mine)}
	page := []byte("<html><div id=ACME-WALL><B>Solve me</B></div></html>")
	v := d.Detect(403, hdr("X-Acme-Shield", "challenge; id=1"), page)
	want := []string{"status:403", "header:X-Acme-Shield: CHALLENGE", "body:acme-wall", "body:<b>"}
	if !v.Blocked || v.Vendor != "acme" || v.Kind != Captcha || v.Rule != "acme/wall" || fmt.Sprint(v.Evidence) != fmt.Sprint(want) {
		t.Errorf("got %+v evidence %q", v, v.Evidence)
	}
	for _, c := range []struct {
		status int
		h      http.Header
		body   string
	}{
		{200, hdr("X-Acme-Shield", "challenge"), string(page)},
		{403, hdr("X-Acme-Shield", "off"), string(page)},
		{403, nil, string(page)},
		{403, hdr("X-Acme-Shield", "challenge"), "<b>acme</b>"},
	} {
		if v := d.Detect(c.status, c.h, []byte(c.body)); v.Blocked {
			t.Errorf("%d %v %q: flagged %+v", c.status, c.h, c.body, v)
		}
	}
	// The default rules still apply, and the zero Detector is the default table.
	if v := d.Detect(403, hdr("Cf-Mitigated", "challenge"), nil); v.Vendor != "cloudflare" {
		t.Errorf("default rule lost: %+v", v)
	}
	var zero Detector
	if v := zero.Detect(0, nil, []byte("error code: 1020")); v.Vendor != "cloudflare" || v.Kind != Block {
		t.Errorf("zero Detector: %+v", v)
	}
}

// TestDetect_LargeTable: a table with more markers than the found set on the
// stack still works.
func TestDetect_LargeTable(t *testing.T) {
	var rules Rules
	for i := range 700 {
		rules = append(rules, Rule{Name: fmt.Sprint("r", i), Vendor: "v", Kind: Block, Body: [][]string{{fmt.Sprintf("marker-%04d-x", i)}}})
	}
	d := &Detector{Rules: rules}
	if v := d.Detect(200, nil, []byte("...MARKER-0650-X...")); v.Rule != "r650" {
		t.Errorf("got %+v", v)
	}
	if v := d.Detect(200, nil, []byte("marker-0650-")); v.Blocked {
		t.Errorf("partial marker matched: %+v", v)
	}
}

// TestDetect_C6_OnlyFirstMaxBytes: bytes beyond MaxBytes are never examined,
// and a marker straddling the limit does not count.
func TestDetect_C6_OnlyFirstMaxBytes(t *testing.T) {
	marker := "error code: 1020"
	for _, at := range []int{MaxBytes - len(marker), MaxBytes - len(marker) + 1, MaxBytes} {
		body := bytes.Repeat([]byte{' '}, at)
		body = append(body, marker...)
		d := &Detector{Rules: Rules{{Name: "m", Kind: Block, Body: [][]string{{marker}}}}}
		got := d.Detect(200, nil, body).Blocked
		if want := at+len(marker) <= MaxBytes; got != want {
			t.Errorf("marker at %d: blocked %v, want %v", at, got, want)
		}
	}
	// MaxBody counts the whole body, not the examined prefix.
	big := append([]byte("error code: 1020"), make([]byte, MaxBytes)...)
	if v := Detect(403, nil, big); v.Blocked {
		t.Errorf("MaxBody rule matched a %d-byte body: %+v", len(big), v)
	}
}

// TestDetect_HeaderFolding: header values match case-insensitively, across
// multiple values, and no other header is scanned.
func TestDetect_HeaderFolding(t *testing.T) {
	h := http.Header{}
	h.Add("Cf-Mitigated", "none")
	h.Add("Cf-Mitigated", "CHALLENGE")
	if v := Detect(403, h, nil); v.Vendor != "cloudflare" || v.Kind != JSChallenge {
		t.Errorf("multi-value header: %+v", v)
	}
	csp := hdr("Content-Security-Policy", "script-src https://challenges.cloudflare.com https://www.google.com/recaptcha/ https://geo.captcha-delivery.com", "X-Note", "cf-mitigated: challenge")
	if v := Detect(403, csp, nil); v.Blocked {
		t.Errorf("header text outside the rule's header flagged: %+v", v)
	}
}

func TestChallengeError_C7(t *testing.T) {
	v := Detect(403, hdr("Cf-Mitigated", "challenge"), nil)
	var err error = &url.Error{Op: "Get", URL: "https://example.com/", Err: &ChallengeError{URL: "https://example.com/", Verdict: v}}
	if !errors.Is(err, ErrChallenged) {
		t.Error("errors.Is(err, ErrChallenged) = false")
	}
	var ce *ChallengeError
	if !errors.As(err, &ce) || ce.Verdict.Vendor != "cloudflare" {
		t.Errorf("errors.As: %v", ce)
	}
	if got := ce.Error(); got != "challenge: https://example.com/: cloudflare js_challenge" {
		t.Errorf("Error() = %q", got)
	}
	if got := (Verdict{}).String(); got != "not blocked" {
		t.Errorf("zero Verdict String() = %q", got)
	}
	if got := (Verdict{Blocked: true, Kind: Block}).String(); got != "unknown vendor block" {
		t.Errorf("String() = %q", got)
	}
}

type closeCounter struct {
	io.Reader
	closed int
}

func (c *closeCounter) Close() error { c.closed++; return nil }

// TestSniff_C6_RestoresBody: Sniff reads at most MaxBytes, and the caller
// still reads the whole body, including the part Sniff never read.
func TestSniff_C6_RestoresBody(t *testing.T) {
	for i, size := range []int{0, 100, MaxBytes - 1, MaxBytes, MaxBytes + 1, 3 * MaxBytes, 100, 5000, 70000, 7} {
		body := bytes.Repeat([]byte("abcdefghij"), size/10+1)[:size]
		src := &countingReader{r: bytes.NewReader(body)}
		cc := &closeCounter{Reader: src}
		resp := &http.Response{StatusCode: 200, Header: http.Header{}, Body: cc, ContentLength: contentLength(size, i)}
		v, err := Sniff(resp)
		if err != nil || v.Blocked {
			t.Fatalf("size %d: %+v, %v", size, v, err)
		}
		if src.n > MaxBytes {
			t.Errorf("size %d: Sniff read %d bytes, more than MaxBytes", size, src.n)
		}
		got, err := io.ReadAll(resp.Body)
		if err != nil || !bytes.Equal(got, body) {
			t.Errorf("size %d: restored body has %d bytes (err %v), want %d", size, len(got), err, size)
		}
		resp.Body.Close()
		if cc.closed != 1 {
			t.Errorf("size %d: original body closed %d times", size, cc.closed)
		}
	}
}

// contentLength gives the test cases unknown (-1), true and lying
// Content-Length values.
func contentLength(size, i int) int64 {
	switch i % 3 {
	case 0:
		return -1
	case 1:
		return int64(size)
	default:
		return int64(size / 2) // too small: Sniff must not trust it
	}
}

type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

func TestSniff_C6_Challenge(t *testing.T) {
	page := readFixture(t, "challenge/cf_managed.html")
	resp := &http.Response{StatusCode: 403, Header: hdr("Server", "cloudflare"), Body: io.NopCloser(iotest.OneByteReader(bytes.NewReader(page)))}
	v, err := Sniff(resp)
	if err != nil || v.Vendor != "cloudflare" || v.Kind != JSChallenge {
		t.Fatalf("%+v, %v", v, err)
	}
	if got, _ := io.ReadAll(resp.Body); !bytes.Equal(got, page) {
		t.Error("body not restored")
	}
	// No body at all.
	for _, b := range []io.ReadCloser{nil, http.NoBody} {
		resp := &http.Response{StatusCode: 403, Header: hdr("Cf-Mitigated", "challenge"), Body: b}
		if v, err := Sniff(resp); err != nil || !v.Blocked {
			t.Errorf("body %v: %+v, %v", b, v, err)
		}
	}
	if _, err := Sniff(nil); err == nil {
		t.Error("Sniff(nil) did not fail")
	}
	// A custom Detector sniffs with its own rules.
	d := &Detector{Rules: Rules{{Name: "x", Vendor: "x", Kind: Block, Body: [][]string{{"solve this"}}}}}
	resp = &http.Response{StatusCode: 200, Body: io.NopCloser(strings.NewReader("please SOLVE THIS first"))}
	if v, err := d.Sniff(resp); err != nil || v.Vendor != "x" {
		t.Errorf("Detector.Sniff: %+v, %v", v, err)
	}
}

// TestSniff_ReadError: the error is returned with the verdict on what was
// read, and the restored body replays the bytes and then the same error.
func TestSniff_ReadError(t *testing.T) {
	boom := errors.New("boom")
	resp := &http.Response{StatusCode: 200, Body: io.NopCloser(io.MultiReader(strings.NewReader("error code: 1020"), iotest.ErrReader(boom)))}
	v, err := Sniff(resp)
	if !errors.Is(err, boom) || !strings.HasPrefix(err.Error(), "challenge: ") {
		t.Fatalf("err = %v", err)
	}
	if v.Vendor != "cloudflare" {
		t.Errorf("verdict on the bytes read: %+v", v)
	}
	got, err := io.ReadAll(resp.Body)
	if string(got) != "error code: 1020" || !errors.Is(err, boom) {
		t.Errorf("restored body: %q, %v", got, err)
	}
}

// TestSniff_DistrustsContentLength: a Content-Length that is too small does
// not hide a marker within MaxBytes.
func TestSniff_DistrustsContentLength(t *testing.T) {
	body := append(bytes.Repeat([]byte{' '}, 60000), "solve this"...)
	d := &Detector{Rules: Rules{{Name: "x", Vendor: "x", Kind: Block, Body: [][]string{{"solve this"}}}}}
	resp := &http.Response{StatusCode: 200, ContentLength: 10, Body: io.NopCloser(bytes.NewReader(body))}
	if v, err := d.Sniff(resp); err != nil || !v.Blocked {
		t.Errorf("%+v, %v", v, err)
	}
	if got, _ := io.ReadAll(resp.Body); !bytes.Equal(got, body) {
		t.Error("body not restored")
	}
}

// C6: a body without any marker skips the body rules, but rules on status
// and headers alone still decide (Cf-Mitigated on a marker-free body), and
// the first rule needing the scan sees the same answer as later ones.
func TestDetect_C6_NoMarkerBody(t *testing.T) {
	plain := []byte("<!doctype html><title>shop</title><p>a page about shoes</p>")
	tests := []struct {
		name    string
		status  int
		header  http.Header
		blocked bool
	}{
		{"plain 200", 200, http.Header{"Content-Type": {"text/html"}}, false},
		{"plain 403", 403, http.Header{"Content-Type": {"text/html"}}, false},
		{"cf-mitigated header only", 403, http.Header{"Cf-Mitigated": {"challenge"}, "Server": {"cloudflare"}}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if v := Detect(tt.status, tt.header, plain); v.Blocked != tt.blocked {
				t.Errorf("Detect = %+v, want blocked %v", v, tt.blocked)
			}
		})
	}
}

// cutReader yields its bytes, then io.ErrUnexpectedEOF: what net/http
// returns for a body cut short of its Content-Length or its last chunk.
type cutReader struct{ r io.Reader }

func (c cutReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return n, err
}

// A body that broke off stays broken after Sniff, wherever the cut falls:
// within the bytes Sniff reads (then Sniff says so too) or after them. A
// body that ended is no error.
func TestSniff_TruncatedBodyKeepsItsError(t *testing.T) {
	for _, tt := range []struct {
		size     int
		cut      bool
		sniffErr bool
	}{
		{0, true, true}, {100, true, true}, {MaxBytes - 1, true, true},
		{MaxBytes + 1, true, false}, {3 * MaxBytes, true, false},
		{0, false, false}, {100, false, false}, {MaxBytes - 1, false, false}, {3 * MaxBytes, false, false},
	} {
		body := bytes.Repeat([]byte("x"), tt.size)
		var r io.Reader = bytes.NewReader(body)
		if tt.cut {
			r = cutReader{r}
		}
		resp := &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(r), ContentLength: -1}
		_, err := Sniff(resp)
		if (err != nil) != tt.sniffErr || (err != nil && !errors.Is(err, io.ErrUnexpectedEOF)) {
			t.Errorf("size %d cut %v: Sniff error %v", tt.size, tt.cut, err)
		}
		got, err := io.ReadAll(resp.Body)
		if len(got) != tt.size {
			t.Errorf("size %d cut %v: read back %d bytes", tt.size, tt.cut, len(got))
		}
		if tt.cut != errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("size %d cut %v: read back with error %v", tt.size, tt.cut, err)
		}
	}
}
