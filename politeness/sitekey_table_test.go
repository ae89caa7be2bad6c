package politeness_test

import (
	"bufio"
	"bytes"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/goodbot-go/goodbot/politeness"
)

// siteKeyTable is the decision table every copy of the site key is tested
// against.
const siteKeyTable = "testdata/sitekeys.txt"

type siteKeyRow struct {
	line     int
	url, key string
}

// readSiteKeys reads the table at path.
func readSiteKeys(t *testing.T, path string) []siteKeyRow {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rows []siteKeyRow
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		in, key, ok := strings.Cut(line, "\t")
		if !ok || in == "" || key == "" {
			t.Fatalf("%s:%d: want URL<TAB>KEY, got %q", path, n, line)
		}
		rows = append(rows, siteKeyRow{n, in, key})
	}
	if len(rows) < 50 {
		t.Fatalf("%s: %d rows; the table has more", path, len(rows))
	}
	return rows
}

func TestHostKey_Table(t *testing.T) {
	for _, r := range readSiteKeys(t, siteKeyTable) {
		u, err := url.Parse(r.url)
		if err != nil {
			t.Errorf("line %d: %v", r.line, err)
			continue
		}
		if got := politeness.HostKey(u); got != r.key {
			t.Errorf("line %d: HostKey(%s) = %s, want %s", r.line, r.url, got, r.key)
		}
		// The key names its own site (a zone's '%' aside, it is a URL).
		if strings.Contains(r.key, "%") {
			continue
		}
		if k, err := url.Parse(r.key); err != nil {
			t.Errorf("line %d: key %s does not parse: %v", r.line, r.key, err)
		} else if got := politeness.HostKey(k); got != r.key {
			t.Errorf("line %d: HostKey(%s) = %s, not a fixed point", r.line, r.key, got)
		}
	}
}

// TestSiteKey_CopiesEqual keeps the leaf packages' copies of this file
// identical to it below the package clause.
func TestSiteKey_CopiesEqual(t *testing.T) {
	body := func(path string) string {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		_, rest, ok := strings.Cut(string(raw), "\n")
		if !ok || !strings.HasPrefix(string(raw), "package ") {
			t.Fatalf("%s: does not start with a package clause", path)
		}
		return rest
	}
	want := body("sitekey.go")
	for _, p := range []string{"../robots/sitekey.go", "../sitemap/sitekey.go"} {
		if body(p) != want {
			t.Errorf("%s differs from politeness/sitekey.go below the package clause", p)
		}
	}
}

// siteSpellings groups the table's http and https URLs by key: the
// spellings of each site that has more than one.
func siteSpellings(t *testing.T) map[string][]string {
	by := map[string][]string{}
	for _, r := range readSiteKeys(t, siteKeyTable) {
		if strings.HasPrefix(r.key, "http://") || strings.HasPrefix(r.key, "https://") {
			by[r.key] = append(by[r.key], r.url)
		}
	}
	for k, v := range by {
		if len(v) < 2 {
			delete(by, k)
		}
	}
	return by
}

// TestTransport_C3_SpellingsOfOneHostAreOneHost sends one request per
// spelling of a site at once (trailing dots, case, default and zero-padded
// ports, IDNA dots, full-width letters, Unicode and punycode): the site sees
// them one at a time, each gap exactly the 2 s delay.
func TestTransport_C3_SpellingsOfOneHostAreOneHost(t *testing.T) {
	groups := siteSpellings(t)
	if len(groups) < 8 {
		t.Fatalf("%d sites with several spellings in the table, want at least 8", len(groups))
	}
	for key, spellings := range groups {
		t.Run(key, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				const latency = 30 * time.Millisecond
				w := &fakeWeb{server: key, answer: func(string, int) reply { return reply{status: 200, latency: latency} }}
				c, _ := newClient(w, politeness.Policy{MinDelay: 2 * time.Second})
				start := time.Now()
				var wg sync.WaitGroup
				for i, s := range spellings {
					u, err := url.Parse(s)
					if err != nil {
						t.Fatal(err)
					}
					u.Path = fmt.Sprintf("/p%d", i)
					wg.Go(func() { mustGet(t, c, u.String()) })
				}
				wg.Wait()
				n := len(spellings)
				if got := w.requests(key); got != n {
					t.Fatalf("the site saw %d requests, want %d", got, n)
				}
				check(t, w, constGap(2*time.Second))
				for i, g := range gaps(w, key) {
					if g != 2*time.Second {
						t.Errorf("gap %d = %v, want exactly 2s", i, g)
					}
				}
				if got, want := time.Since(start), time.Duration(n-1)*2*time.Second+time.Duration(n)*latency; got != want {
					t.Errorf("%d requests took %v, want exactly %v", n, got, want)
				}
			})
		})
	}
}
