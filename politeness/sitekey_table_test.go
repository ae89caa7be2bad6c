package politeness_test

import (
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/goodbot-go/goodbot/politeness"
	"github.com/goodbot-go/goodbot/politeness/sitekeytest"
)

func TestHostKey_Table(t *testing.T) {
	for _, r := range sitekeytest.Rows(t) {
		u, err := url.Parse(r.URL)
		if err != nil {
			t.Errorf("line %d: %v", r.Line, err)
			continue
		}
		if got := politeness.HostKey(u); got != r.Key {
			t.Errorf("line %d: HostKey(%s) = %s, want %s", r.Line, r.URL, got, r.Key)
		}
		// The key names its own site (a zone's '%' aside, it is a URL).
		if strings.Contains(r.Key, "%") {
			continue
		}
		if k, err := url.Parse(r.Key); err != nil {
			t.Errorf("line %d: key %s does not parse: %v", r.Line, r.Key, err)
		} else if got := politeness.HostKey(k); got != r.Key {
			t.Errorf("line %d: HostKey(%s) = %s, not a fixed point", r.Line, r.Key, got)
		}
	}
}

// TestTransport_C3_SpellingsOfOneHostAreOneHost sends one request per
// spelling of a site at once (trailing dots, case, default and zero-padded
// ports, IDNA dots, full-width letters, Unicode and punycode): the site sees
// them one at a time, each gap exactly the 2 s delay.
func TestTransport_C3_SpellingsOfOneHostAreOneHost(t *testing.T) {
	groups := sitekeytest.Spellings(t)
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

// SiteOrigin is the site key with the default port left out, and only that.
func TestSiteOrigin(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"HTTPS://Example.COM.:443/x", "https://example.com"},
		{"http://example.com:080/", "http://example.com"},
		{"http://example.com:443/", "http://example.com:443"},
		{"https://example.com:80/", "https://example.com:80"},
		{"https://[::1]:443/", "https://[::1]"},
		{"http://a.test:8080/", "http://a.test:8080"},
	} {
		u, err := url.Parse(tt.in)
		if err != nil {
			t.Fatal(err)
		}
		if got := politeness.SiteOrigin(u); got != tt.want {
			t.Errorf("SiteOrigin(%s) = %s, want %s", tt.in, got, tt.want)
		}
	}
}
