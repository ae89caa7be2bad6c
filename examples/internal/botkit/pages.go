package botkit

import (
	"bytes"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/goodbot-go/goodbot/examples/internal/links"
	"github.com/goodbot-go/goodbot/fetch"
)

// PageStore writes the text of crawled pages under Dir, one file per page
// (Dir/host/path.txt). Only pages fetched "ok" as HTML are stored: a
// challenge or block page is never stored as content (C6, B7, H8). An empty
// Dir stores nothing.
type PageStore struct {
	Dir string
}

// Save stores p's text if it is an HTML page fetched ok. It returns the
// error of writing the file (a read-only directory, a full disk); the
// caller reports it ([Crawl] does, with [Session.WorkFailed]).
func (ps *PageStore) Save(u *url.URL, p *fetch.Page, r Result) error {
	if ps == nil || ps.Dir == "" || p == nil || r.Outcome != "ok" || !IsHTML(p) {
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

// PageFile maps a URL to a relative file name: host/path.txt, with every
// character outside [A-Za-z0-9._-] replaced and no ".." segments.
func PageFile(u *url.URL) string {
	p := strings.Trim(u.EscapedPath(), "/")
	if p == "" {
		p = "index"
	}
	if u.RawQuery != "" {
		p += "_" + u.RawQuery
	}
	p = strings.Map(func(r rune) rune {
		if r == '/' || r == '-' || r == '_' || r == '.' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, p)
	p = strings.ReplaceAll(p, "..", "__")
	return filepath.Join(strings.ReplaceAll(u.Host, ":", "_"), filepath.FromSlash(p)+".txt")
}
