package sitemap

import (
	"encoding/xml"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// genWellFormed writes a random well-formed sitemap that exercises the
// lexical variety of XML: comments, processing instructions, CDATA split
// across a value, character references, white space, attributes,
// declared extensions, random child order.
func genWellFormed(rng *rand.Rand) string {
	var b strings.Builder
	pick := func(xs ...string) string { return xs[rng.IntN(len(xs))] }
	junk := func() {
		switch rng.IntN(6) {
		case 0:
			b.WriteString("<!-- " + pick("c", "<url><loc>https://no.test/</loc></url>", "- -", "]]>") + " -->")
		case 1:
			b.WriteString("<?pi " + pick("x", "a='>'", "") + "?>")
		case 2:
			b.WriteString(pick(" ", "\n", "\r\n\t", "  \n  "))
		}
	}
	value := func(s string) {
		// Split s into pieces written as text (escaped) or CDATA.
		rs := []rune(s)
		for len(rs) > 0 {
			n := 1 + rng.IntN(len(rs))
			piece := string(rs[:n])
			rs = rs[n:]
			if rng.IntN(3) == 0 && !strings.Contains(piece, "]]>") {
				b.WriteString("<![CDATA[" + piece + "]]>")
				continue
			}
			for _, c := range piece {
				switch {
				case c == '&':
					b.WriteString(pick("&amp;", "&#38;", "&#x26;"))
				case c == '<':
					b.WriteString("&lt;")
				case c == '+' && rng.IntN(2) == 0:
					b.WriteString("&#43;")
				default:
					b.WriteRune(c)
				}
			}
		}
	}
	b.WriteString(pick(`<?xml version="1.0" encoding="UTF-8"?>`, "", "\ufeff"))
	junk()
	b.WriteString(`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:image="http://www.google.com/schemas/sitemap-image/1.1"` + pick("", ` xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:schemaLocation="a b"`) + ">")
	for i := range rng.IntN(20) {
		junk()
		b.WriteString(pick("<url>", `<url id="u">`, "<url >"))
		parts := []func(){
			func() {
				b.WriteString("<loc>" + pick("", " ", "\n\t"))
				value(fmt.Sprintf("https://a.test/%d/%s", i, pick("", "p?a=1&b=2", "x+y", "ü", "a<b")))
				b.WriteString(pick("", " ", "\n") + "</loc>")
			},
		}
		if rng.IntN(2) == 0 {
			parts = append(parts, func() {
				b.WriteString("<lastmod>")
				value(pick("2024", "2024-05", "2024-05-06", "2024-05-06T07:08Z", "2024-05-06T07:08:09+02:00", "2024-05-06T07:08:09.123-05:30", "bad date"))
				b.WriteString("</lastmod>")
			})
		}
		if rng.IntN(2) == 0 {
			parts = append(parts, func() { b.WriteString("<changefreq>" + pick("daily", "weekly", "never") + "</changefreq>") })
		}
		if rng.IntN(2) == 0 {
			parts = append(parts, func() {
				b.WriteString("<image:image><image:loc>https://img.test/" + pick("1", "2") + ".png</image:loc></image:image>")
			})
		}
		rng.Shuffle(len(parts), func(i, j int) { parts[i], parts[j] = parts[j], parts[i] })
		for _, p := range parts {
			junk()
			p()
		}
		junk()
		b.WriteString("</url>")
	}
	junk()
	b.WriteString("</urlset>")
	junk()
	return b.String()
}

// TestReader_MatchesEncodingXML: on well-formed sitemaps the tokenizer
// finds exactly what encoding/xml finds (URLs trimmed; dates parsed with
// ParseLastMod).
func TestReader_MatchesEncodingXML(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for n := range 500 {
		doc := genWellFormed(rng)
		var want struct {
			URLs []struct {
				Loc     string `xml:"loc"`
				LastMod string `xml:"lastmod"`
			} `xml:"url"`
		}
		if err := xml.Unmarshal([]byte(strings.TrimPrefix(doc, "\ufeff")), &want); err != nil {
			t.Fatalf("doc %d: encoding/xml: %v\n%s", n, err, doc)
		}
		got, r := collect(t, []byte(doc), nil)
		if r.Err() != nil || len(got) != len(want.URLs) {
			t.Fatalf("doc %d: %d entries (err %v), encoding/xml %d\n%s", n, len(got), r.Err(), len(want.URLs), doc)
		}
		for i, w := range want.URLs {
			if got[i].Loc != strings.TrimSpace(w.Loc) {
				t.Fatalf("doc %d entry %d: %q, encoding/xml %q\n%s", n, i, got[i].Loc, w.Loc, doc)
			}
			lm, err := ParseLastMod(w.LastMod)
			switch {
			case strings.TrimSpace(w.LastMod) == "":
				if got[i].HasLastMod || got[i].LastModErr != nil {
					t.Fatalf("doc %d entry %d: lastmod %+v, none in encoding/xml", n, i, got[i])
				}
			case err != nil:
				if got[i].HasLastMod || got[i].LastModErr == nil {
					t.Fatalf("doc %d entry %d: lastmod %+v, want error for %q", n, i, got[i], w.LastMod)
				}
			case !got[i].HasLastMod || !got[i].LastMod.Equal(lm):
				t.Fatalf("doc %d entry %d: lastmod %v, encoding/xml %q\n%s", n, i, got[i].LastMod, w.LastMod, doc)
			}
		}
	}
}
