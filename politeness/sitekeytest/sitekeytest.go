// Package sitekeytest reads the site key decision table,
// politeness/testdata/sitekeys.txt, for the tests of politeness.HostKey, of
// the site key it is built on and of the packages that key their state by
// site with it (robots, sitemap): one table for all. A program that keys
// its own state by site can check its key function against the same table.
package sitekeytest

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// Row is one line of the table: a URL and the site key of every spelling
// of its site.
type Row struct {
	Line int    // line number in the file
	URL  string // as written, for url.Parse
	Key  string // "scheme://host:port"
}

// HTTP reports whether the row's key is an http or https site.
func (r Row) HTTP() bool {
	return strings.HasPrefix(r.Key, "http://") || strings.HasPrefix(r.Key, "https://")
}

// Path returns the table's path on this machine.
func Path() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "testdata", "sitekeys.txt")
}

// Rows reads the table; it fails t if the file is missing or malformed.
func Rows(t testing.TB) []Row {
	t.Helper()
	raw, err := os.ReadFile(Path())
	if err != nil {
		t.Fatalf("site key table: %v", err)
	}
	var rows []Row
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		in, key, ok := strings.Cut(line, "\t")
		if !ok || in == "" || key == "" || strings.Contains(key, "\t") {
			t.Fatalf("%s:%d: want URL<TAB>KEY, got %q", Path(), n, line)
		}
		rows = append(rows, Row{n, in, key})
	}
	if len(rows) < 50 {
		t.Fatalf("%s: %d rows; the table has more", Path(), len(rows))
	}
	return rows
}

// Spellings returns, by key, the URLs of the http and https sites that the
// table spells more than one way.
func Spellings(t testing.TB) map[string][]string {
	t.Helper()
	by := map[string][]string{}
	for _, r := range Rows(t) {
		if r.HTTP() {
			by[r.Key] = append(by[r.Key], r.URL)
		}
	}
	for k, v := range by {
		if len(v) < 2 {
			delete(by, k)
		}
	}
	return by
}
