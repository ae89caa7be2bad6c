package sitemap

import (
	"bytes"
	"errors"
	"html"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf16"
	"unicode/utf8"
)

// FuzzReader: no panic, only typed or prefixed errors, every entry a
// valid URL within the limits, and memory bounded by constants whatever
// the input.
func FuzzReader(f *testing.F) {
	seeds := []string{
		`<urlset><url><loc>https://a.test/1</loc><lastmod>2024-01-01</lastmod></url></urlset>`,
		`<sitemapindex><sitemap>https://a.test/s.xml</sitemap></sitemapindex>`,
		"https://a.test/1\nhttps://a.test/2",
		`<rss><channel><item><link>https://a.test/p</link><guid>https://a.test/g</guid><pubDate>Sat, 19 Oct 2024 11:21:53 +0000</pubDate></item></channel></rss>`,
		`<feed><entry><link href="https://a.test/p"/><updated>2024-01-01T00:00:00Z</updated></entry></feed>`,
		`<!DOCTYPE x [<!ENTITY a "&a;&a;">]><urlset><url><loc>https://a.test/&a;&#x41;<![CDATA[x]]></loc></url>`,
		"\xef\xbb\xbf<urlset><url><loc><url>https://a.test/</url></loc><loc>https://a.test/2</loc>",
		"<?xml version='1.0' encoding='latin1'?><urlset><url><loc>https://a.test/\xe9&amp;</loc></url></urlset>",
		`<feed xml:base="/b/"><entry xml:base="c/"><link xml:base="d/" href="../e"/></entry></feed>`,
		`<urlset><url><loc>https://a.test/&nbsp;&#32;</loc></url><sitemap><loc>https://a.test/s.xml</loc></sitemap></urlset>`,
		`<?xml version="1.0" encoding="Shift_JIS"?><urlset/>`,
	}
	for _, s := range seeds {
		f.Add([]byte(s))
		f.Add(gzBytes([]byte(s)))
		f.Add(utf16Bytes(s, false, true))
		f.Add(utf16Bytes(s, true, false))
	}
	if files, err := filepath.Glob(filepath.Join(samplesDir, "*")); err == nil {
		for _, name := range files {
			if data, err := os.ReadFile(name); err == nil && len(data) < 64<<10 && !strings.HasSuffix(name, ".json") {
				f.Add(data)
			}
		}
	}
	opt := &Options{MaxURLs: 100, MaxBytes: 1 << 20, MaxLocBytes: 512, Location: "https://a.test/"}
	f.Fuzz(func(t *testing.T, data []byte) {
		r := NewReader(bytes.NewReader(data), opt)
		n := 0
		for r.Next() {
			e := r.Entry()
			n++
			if !validLoc(e.Loc) || len(e.Loc) > 512 || !InScope("https://a.test/", e.Loc) {
				t.Fatalf("bad entry %q", e.Loc)
			}
			if e.HasLastMod && (e.LastModErr != nil || e.LastMod.Location() != time.UTC) {
				t.Fatalf("bad date %+v", e)
			}
			if e.Priority < 0 || e.Priority > 1 {
				t.Fatalf("priority %v", e.Priority)
			}
		}
		if n > 100 || n != r.Count() {
			t.Fatalf("n=%d Count=%d", n, r.Count())
		}
		if err := r.Err(); err != nil {
			var le *LimitError
			if !errors.Is(err, ErrSyntax) && !errors.As(err, &le) && !strings.HasPrefix(err.Error(), "sitemap: ") {
				t.Fatalf("untyped error %v", err)
			}
		}
		const bound = 4 * bufSize
		if len(r.buf) > bufSize || cap(r.text) > bound || cap(r.bare) > bound || cap(r.tagBuf) > bound || cap(r.guid) > bound {
			t.Fatalf("memory: buf %d text %d bare %d tag %d guid %d", len(r.buf), cap(r.text), cap(r.bare), cap(r.tagBuf), cap(r.guid))
		}
	})
}

// FuzzParseLastMod: no panic; a parsed date is in UTC.
func FuzzParseLastMod(f *testing.F) {
	for _, s := range []string{"2024", "2024-05-06T07:08:09.5+02:00", "Sat, 19 Oct 2024 11:21:53 GMT", "2024-05-06 07:08"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tm, err := ParseLastMod(s)
		if err == nil && tm.Location() != time.UTC {
			t.Fatalf("%q: %v not UTC", s, tm)
		}
		if err != nil && !errors.Is(err, ErrBadDate) {
			t.Fatalf("%q: %v", s, err)
		}
	})
}

// FuzzResolvePath: resolving is idempotent, leaves no dot segment, encoded
// separator or empty segment behind, and a page InScope of /blog/ resolves
// to a path under /blog/.
func FuzzResolvePath(f *testing.F) {
	for _, s := range []string{"/blog/../admin", "/blog/%2e%2E/x", "/a/.%2e/b/./c/", "/..%2f..%5c\\x", "//a//b/..", "/%2", "/a.b/..c/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		if !strings.HasPrefix(p, "/") {
			p = "/" + p
		}
		r := resolvePath(p)
		if !strings.HasPrefix(r, "/") || resolvePath(r) != r {
			t.Fatalf("resolvePath(%q) = %q, not idempotent (%q)", p, r, resolvePath(r))
		}
		for _, seg := range strings.Split(r, "/")[1:] {
			if seg == "." || seg == ".." {
				t.Fatalf("resolvePath(%q) = %q keeps a dot segment", p, r)
			}
		}
		if InScope("https://a.test/blog/sitemap.xml", "https://a.test"+p) && !strings.HasPrefix(r, "/blog/") {
			t.Fatalf("%q in scope of /blog/ but resolves to %q", p, r)
		}
	})
}

// FuzzUTF16: the streaming UTF-16 decoder, read in chunks of any size,
// gives exactly what unicode/utf16 gives for the whole input (a final odd
// byte as U+FFFD), valid UTF-8 and no more than 3 bytes per 2 read; the
// Reader then reads it without panic.
func FuzzUTF16(f *testing.F) {
	f.Add([]byte("<\x00u\x00"), false, uint8(1))
	f.Add([]byte("\x00<\xd8\x34\xdd\x1e\x00"), true, uint8(3))
	f.Add(utf16Bytes(`<urlset><url><loc>https://a.test/é</loc></url></urlset>`, false, true), false, uint8(7))
	f.Fuzz(func(t *testing.T, data []byte, be bool, chunk uint8) {
		units := make([]uint16, 0, len(data)/2)
		for i := 0; i+1 < len(data); i += 2 {
			if be {
				units = append(units, uint16(data[i])<<8|uint16(data[i+1]))
			} else {
				units = append(units, uint16(data[i+1])<<8|uint16(data[i]))
			}
		}
		want := string(utf16.Decode(units))
		if len(data)%2 == 1 {
			want += "\uFFFD"
		}
		d := newUTF16Reader(bytes.NewReader(data), be)
		var got []byte
		p := make([]byte, int(chunk)%16+1)
		for tries := 0; tries < 10*len(data)+10; tries++ {
			n, err := d.Read(p)
			got = append(got, p[:n]...)
			if err != nil {
				break
			}
		}
		if string(got) != want || !utf8.Valid(got) || len(got) > 3*(len(data)+1)/2 {
			t.Fatalf("decoded %q, want %q", got, want)
		}
		for range Read(bytes.NewReader(append([]byte{0xff, 0xfe}, data...)), &Options{MaxURLs: 10, MaxBytes: 1 << 16}) {
		}
	})
}

// FuzzXMLBase: an Atom link resolved through nested xml:base attributes
// is the RFC 3986 resolution of the chain (document URL, feed, entry,
// link, href), always a valid URL inside the location rule, never a panic.
func FuzzXMLBase(f *testing.F) {
	f.Add("/blog/", "2024/", "05/", "p1")
	f.Add("https://a.test/x/", "../y/", "", "../../z?q#f")
	f.Add("", "", "", "//other.test/p")
	f.Add("%zz", "&amp;", "javascript:", "p")
	const doc = "https://a.test/feeds/atom.xml"
	f.Fuzz(func(t *testing.T, feed, entry, link, href string) {
		attr := func(name, v string) string {
			if v == "" {
				return ""
			}
			return " " + name + `="` + html.EscapeString(v) + `"`
		}
		in := `<feed` + attr("xml:base", feed) + `><entry` + attr("xml:base", entry) + `><link` + attr("xml:base", link) + attr("href", href) + `/></entry></feed>`
		r := NewReader(strings.NewReader(in), &Options{Location: doc, MaxLocBytes: 512})
		var got []string
		for r.Next() {
			e := r.Entry()
			if !validLoc(e.Loc) || len(e.Loc) > 512 || !InScope(doc, e.Loc) {
				t.Fatalf("bad entry %q", e.Loc)
			}
			got = append(got, e.Loc)
		}
		if len(got) > 1 {
			t.Fatalf("%d entries from one link", len(got))
		}
		// The expected resolution, when every part is a clean reference.
		base, _ := url.Parse(doc)
		for _, b := range []string{feed, entry, link} {
			if strings.TrimSpace(b) != b || strings.ContainsAny(b, "&\t\r\n") {
				return
			}
			if b == "" {
				continue
			}
			ref, err := url.Parse(b)
			if err != nil {
				return
			}
			if ref.IsAbs() {
				if ref.Scheme != "http" && ref.Scheme != "https" || ref.Host == "" {
					continue
				}
				base = ref
			} else {
				base = base.ResolveReference(ref)
			}
		}
		ref, err := url.Parse(href)
		if err != nil || href == "" || strings.TrimSpace(href) != href || strings.ContainsAny(href, "&\t\r\n") {
			return
		}
		want := base.ResolveReference(ref).String()
		if validLoc(want) && len(want) <= 512 && InScope(doc, want) && (len(got) != 1 || got[0] != want) {
			t.Fatalf("got %q, want %q", got, want)
		}
	})
}

// FuzzDeclaredSitemaps: robots.txt Sitemap lines resolve to absolute
// http(s) URLs, never more than were given, without duplicates.
func FuzzDeclaredSitemaps(f *testing.F) {
	f.Add("/sitemap.xml\nsitemap.xml\nhttps://A.test:443/sitemap.xml#x\n//o.test/s\nftp://x/y\n%zz")
	f.Fuzz(func(t *testing.T, lines string) {
		in := strings.Split(lines, "\n")
		out := DeclaredSitemaps("https://a.test/robots.txt", in)
		if len(out) > len(in) {
			t.Fatalf("%d out of %d", len(out), len(in))
		}
		seen := map[string]bool{}
		for _, u := range out {
			p, err := url.Parse(u)
			if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" || seen[normURL(u)] {
				t.Fatalf("bad or duplicate %q in %q", u, out)
			}
			seen[normURL(u)] = true
		}
	})
}
