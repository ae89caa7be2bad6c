package sitekey

import (
	"net/url"
	"strings"
	"testing"

	"github.com/goodbot-go/goodbot/politeness/sitekeytest"
)

// TestAppend_Table checks the key against the module's decision table: each
// row's URL has its key, and a key (a URL itself, a zone's '%' aside) is
// its own key.
func TestAppend_Table(t *testing.T) {
	rows := sitekeytest.Rows(t)
	if len(rows) < 50 {
		t.Fatalf("%d rows in the table, want at least 50", len(rows))
	}
	for _, r := range rows {
		u, err := url.Parse(r.URL)
		if err != nil {
			t.Errorf("line %d: %v", r.Line, err)
			continue
		}
		if got := string(Append(nil, u)); got != r.Key {
			t.Errorf("line %d: Append(%s) = %s, want %s", r.Line, r.URL, got, r.Key)
		}
		if strings.Contains(r.Key, "%") {
			continue
		}
		if k, err := url.Parse(r.Key); err != nil {
			t.Errorf("line %d: key %s does not parse: %v", r.Line, r.Key, err)
		} else if got := string(Append(nil, k)); got != r.Key {
			t.Errorf("line %d: Append(%s) = %s, not a fixed point", r.Line, r.Key, got)
		}
	}
}

// A canonical host costs nothing beyond the key's bytes.
func TestAppend_CanonicalHostDoesNotAllocate(t *testing.T) {
	u, _ := url.Parse("https://example.com/a")
	buf := make([]byte, 0, 64)
	if n := testing.AllocsPerRun(100, func() { buf = Append(buf[:0], u) }); n != 0 {
		t.Errorf("Append allocates %v times for a canonical host, want 0", n)
	}
}

// A URL built by hand, not parsed, may carry an upper-case scheme (url.Parse
// lowers it): the key lowers it too, and still makes the port explicit.
func TestAppend_SchemeCase(t *testing.T) {
	for u, want := range map[*url.URL]string{
		{Scheme: "HTTPS", Host: "Example.COM"}:  "https://example.com:443",
		{Scheme: "Http", Host: "example.com"}:   "http://example.com:80",
		{Scheme: "FTP", Host: "example.com:21"}: "ftp://example.com:21",
	} {
		if got := string(Append(nil, u)); got != want {
			t.Errorf("Append(%s) = %s, want %s", u, got, want)
		}
	}
}
