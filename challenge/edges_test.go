package challenge

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
)

// flakyBody returns its chunks in turn, an error after the first; a body
// that went wrong once is not read again after the error.
type flakyBody struct {
	chunks []string
	err    error
	n      int
}

func (b *flakyBody) Read(p []byte) (int, error) {
	b.n++
	switch {
	case b.n == 2:
		return 0, b.err
	case len(b.chunks) == 0:
		return 0, io.EOF
	}
	c := b.chunks[0]
	b.chunks = b.chunks[1:]
	return copy(p, c), nil
}

func (b *flakyBody) Close() error { return nil }

// TestSniff_ErrorIsKeptInTheBody: after a read error, the restored body
// gives the bytes read and then that error; it does not resume reading
// the broken body (which would splice data from after the failure),
// whether or not a Content-Length sized the first read.
func TestSniff_ErrorIsKeptInTheBody(t *testing.T) {
	boom := errors.New("boom")
	for _, tt := range []struct {
		name          string
		contentLength int64
	}{
		{"unknown length", -1},
		{"true length", int64(len("first part after the failure"))},
		{"length past the body", 1000},
	} {
		t.Run(tt.name, func(t *testing.T) {
			body := &flakyBody{chunks: []string{"first part ", "after the failure"}, err: boom}
			resp := &http.Response{StatusCode: 200, ContentLength: tt.contentLength, Body: body}
			if _, err := Sniff(resp); !errors.Is(err, boom) {
				t.Fatalf("Sniff: %v, want boom", err)
			}
			got, err := io.ReadAll(resp.Body)
			if string(got) != "first part " || !errors.Is(err, boom) {
				t.Errorf("restored body: %q, %v; want %q, boom", got, err, "first part ")
			}
		})
	}
}

// TestRule_ValidateKindNone: a rule must say what it detects; None is no
// kind.
func TestRule_ValidateKindNone(t *testing.T) {
	r := Rule{Name: "x", Kind: None, Header: []HeaderMatch{{Name: "x-wall"}}}
	if err := r.Validate(); !errors.Is(err, ErrInvalidRule) {
		t.Errorf("Kind None: %v, want ErrInvalidRule", err)
	}
	r.Kind = Block
	if err := r.Validate(); err != nil {
		t.Errorf("Kind Block: %v", err)
	}
	for _, bad := range []Rule{
		{Name: "x", Kind: Block, Header: []HeaderMatch{{Name: ""}}},
		{Name: "x", Kind: Block, Body: [][]string{{"a"}}, Not: []string{""}},
		{Name: "x", Kind: Block, Body: [][]string{{""}}},
	} {
		if err := bad.Validate(); !errors.Is(err, ErrInvalidRule) {
			t.Errorf("%+v: %v, want ErrInvalidRule", bad, err)
		}
	}
}

// TestDetect_MaxBodyBound: a rule with MaxBody applies to bodies of up to
// MaxBody bytes, not one byte more.
func TestDetect_MaxBodyBound(t *testing.T) {
	d := &Detector{Rules: Rules{{Name: "x", Vendor: "x", Kind: Block, Body: [][]string{{"walled"}}, MaxBody: 100}}}
	at := []byte("walled" + strings.Repeat(" ", 94))
	if v := d.Detect(200, nil, at); !v.Blocked {
		t.Errorf("body of 100 bytes, MaxBody 100: not blocked")
	}
	if v := d.Detect(200, nil, append(at, ' ')); v.Blocked {
		t.Errorf("body of 101 bytes, MaxBody 100: %+v", v)
	}
}

// TestDetect_MarkersFoldOnlyLetters: markers match ASCII letters in any
// case and every other byte exactly ('[' is not '{').
func TestDetect_MarkersFoldOnlyLetters(t *testing.T) {
	d := &Detector{Rules: Rules{{Name: "x", Vendor: "x", Kind: Block, Body: [][]string{{"cf[chl"}}}}}
	for body, want := range map[string]bool{"CF[CHL": true, "cf[chl": true, "cf{chl": false, "cF[cHl": true} {
		if v := d.Detect(200, nil, []byte(body)); v.Blocked != want {
			t.Errorf("marker cf[chl in %q: blocked %v, want %v", body, v.Blocked, want)
		}
	}
}

// TestLayout_StrayEndTagDoesNotUnquote: an end tag of a quoting element
// with none open does not cancel the next one: a marker inside it is still
// quoted.
func TestLayout_StrayEndTagDoesNotUnquote(t *testing.T) {
	for _, page := range []string{
		`</blockquote><blockquote>you have been blocked</blockquote>`,
		`</code></code><p><code>you have been blocked</code></p>`,
	} {
		ps, _ := places(page, "blocked")
		if len(ps) != 1 || ps[0] != placeQuoted {
			t.Errorf("%s: places %v, want [quoted]", page, ps)
		}
	}
}

// TestDetect_VendorOfTextMarkers: on a notice page, text markers of two
// vendors mean a page about walls, not a wall; a marker that rules of two
// vendors share, or that counts only in markup, speaks for no vendor.
func TestDetect_VendorOfTextMarkers(t *testing.T) {
	d := &Detector{Rules: Rules{
		{Name: "a/wall", Vendor: "a", Kind: Block, Body: [][]string{{"alphawall"}}, Markup: [][]string{{"zetascript"}}},
		{Name: "a/shared", Vendor: "a", Kind: Block, Body: [][]string{{"sharedwall"}, {"alphaonly"}}},
		{Name: "b/wall", Vendor: "b", Kind: Block, Body: [][]string{{"betawall"}}},
		{Name: "b/shared", Vendor: "b", Kind: Block, Body: [][]string{{"sharedwall"}, {"betaonly"}}},
	}}
	cases := []struct {
		page, rule string // rule "" is not blocked
	}{
		{"<p>betawall zetascript</p>", "b/wall"},
		{"<p>sharedwall betaonly</p>", "b/shared"},
		{"<p>alphawall betawall</p>", ""},
	}
	for _, c := range cases {
		v := d.Detect(200, nil, []byte(c.page))
		if v.Rule != c.rule || v.Blocked != (c.rule != "") {
			t.Errorf("%s: %+v, want rule %q", c.page, v, c.rule)
		}
	}
}

// TestDetect_MaxBodyCountsTheWholeBody: MaxBody is compared with the
// length of the whole body given, not with the MaxBytes read of it.
func TestDetect_MaxBodyCountsTheWholeBody(t *testing.T) {
	d := &Detector{Rules: Rules{{Name: "x", Vendor: "x", Kind: Block, Body: [][]string{{"walled"}}, MaxBody: MaxBytes + 1000}}}
	body := []byte("walled" + strings.Repeat(" ", MaxBytes+2000))
	if v := d.Detect(200, nil, body); v.Blocked {
		t.Errorf("body of %d bytes, MaxBody %d: %+v", len(body), MaxBytes+1000, v)
	}
	if v := d.Detect(200, nil, body[:MaxBytes+1000]); !v.Blocked {
		t.Errorf("body of MaxBody bytes: not blocked")
	}
}
