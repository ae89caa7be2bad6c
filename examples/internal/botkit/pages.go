package botkit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/fetch/links"
)

// PageStore writes the text of crawled pages under Dir, one file per page
// (Dir/host/path.txt, see [PageFile]). Only pages fetched "ok" as HTML are stored: a
// challenge or block page is never stored as content (C6, B7, H8). An empty
// Dir stores nothing.
type PageStore struct {
	Dir string
}

// Save stores p's text if it is an HTML page fetched ok that its
// directives let the bot keep (not r.NotKept). It returns the
// error of writing the file (a read-only directory, a full disk); the
// caller reports it ([Crawl] does, with [Session.WorkFailed]).
func (ps *PageStore) Save(u *url.URL, p *fetch.Page, r Result) error {
	if ps == nil || ps.Dir == "" || p == nil || r.Outcome != "ok" || r.NotKept || !IsHTML(p) {
		return nil
	}
	title, text, _ := links.Text(bytes.NewReader(p.Body))
	name := filepath.Join(ps.Dir, PageFile(u))
	err := os.MkdirAll(filepath.Dir(name), 0o755)
	if err == nil {
		err = os.WriteFile(name, fmt.Appendf(nil, "%s\n%s\n\n%s", u, title, text), 0o644)
	}
	return err
}

// PageFile maps a URL to a relative file name, one file per page and never
// two pages to one file: host/dir/.../name.txt (host_https/... for an https
// page), from the URL as
// normalised for the fetched set (links.Normalize), so two spellings of one
// page share a file and distinct pages never do, also on a case-insensitive
// file system. Each path segment is kept readable: a-z, 0-9, "-" and "." as
// they are, a percent-escape as it is ("%20"), an upper-case letter as "^"
// and the letter ("/About" → "^about"), any other byte as "_" and two hex
// digits. An empty last segment ("/", "/a/") is "index_", an empty inner one
// "_", the query follows the last segment after "_3f", and a directory
// never ends in ".txt" (its dot is "_2e"), so no file and directory share a
// name. A name longer than 200 bytes keeps 150 and ends with "~" and a hash
// of the whole name; a path longer than 1,000 bytes becomes
// host/~long/HASH.txt. "~" appears only there ("~" in a URL is
// "_7e"), and ".." never appears as a segment.
func PageFile(u *url.URL) string {
	key := links.Normalize(u)
	scheme, rest, _ := strings.Cut(key, "://")
	host, pathQuery := rest, "/"
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		host, pathQuery = rest[:i], rest[i:]
	}
	path, query, hasQuery := strings.Cut(pathQuery, "?")
	top := encodeSegment(host)
	if scheme != "http" {
		top += "_" + scheme // "_h" is no escape: never the name of an http site
	}
	segs := strings.Split(strings.TrimPrefix(path, "/"), "/")
	top = shortName(top, "")
	parts := []string{top}
	for i, seg := range segs {
		e := encodeSegment(seg)
		if i < len(segs)-1 {
			if seg == "" {
				e = "_"
			} else if strings.HasSuffix(e, ".txt") {
				e = strings.TrimSuffix(e, ".txt") + "_2etxt"
			}
			parts = append(parts, shortName(e, ""))
			continue
		}
		if seg == "" {
			e = "index_"
		}
		if hasQuery {
			e += "_3f" + encodeSegment(query)
		}
		parts = append(parts, shortName(e, ".txt"))
	}
	rel := filepath.Join(parts...)
	if len(rel) > maxPagePath {
		rel = filepath.Join(top, "~long", hashOf(key)+".txt")
	}
	return rel
}

const (
	maxPageName = 200  // bytes of one encoded name before it is shortened
	keptOfName  = 150  // bytes kept of a shortened name
	maxPagePath = 1000 // bytes of a relative page path before it is hashed
)

// encodeSegment writes s (a host, path segment or query of a normalised
// URL) as described on [PageFile]; "." and ".." become "_2e" and "_2e_2e".
func encodeSegment(s string) string {
	if s == "." || s == ".." {
		return strings.Repeat("_2e", len(s))
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '-', c == '.':
			b.WriteByte(c)
		case c >= 'A' && c <= 'Z':
			b.WriteByte('^')
			b.WriteByte(c + ('a' - 'A'))
		case c == '%' && i+2 < len(s) && upperHex(s[i+1]) && upperHex(s[i+2]):
			b.WriteString(s[i : i+3])
			i += 2
		default:
			fmt.Fprintf(&b, "_%02x", c)
		}
	}
	return b.String()
}

func upperHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'A' && c <= 'F' }

// shortName returns name+suffix, or, when name is too long, its first bytes,
// "~" and a hash of all of it, then suffix.
func shortName(name, suffix string) string {
	if len(name) <= maxPageName {
		return name + suffix
	}
	return name[:keptOfName] + "~" + hashOf(name) + suffix
}

// hashOf returns 128 bits of s's SHA-256, in hex.
func hashOf(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:16])
}
