package robots_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"
	"testing/synctest"
	"time"

	"github.com/goodbot-go/goodbot/robots"
	"github.com/goodbot-go/goodbot/robots/robotstest"
)

// FetchedAt gives the fetch time of the copy in memory: the time of the
// fetch, or the stored copy's own time when it came from the Store; none
// before a copy exists; and it does not fetch.
func TestCache_FetchedAt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		stored := start.Add(-3 * time.Hour)
		cases := []struct {
			name  string
			store robots.Store
			want  time.Time
		}{
			{"fetched", nil, start.Add(time.Minute)},
			{"from the store", &robots.MemoryStore{}, stored},
		}
		for _, tc := range cases {
			requests := 0
			tr := robotstest.Transport(robotstest.Handler("User-agent: *\nDisallow:\n"))
			c := &robots.Cache{Store: tc.store, Transport: countRT(tr, &requests)}
			u, _ := url.Parse("https://Example.TEST/a/page")
			if tc.store != nil {
				_ = tc.store.Save(context.Background(), "https://example.test:443", robots.Entry{Status: 200, Fetched: stored})
			}
			if _, ok := c.FetchedAt(u); ok || requests != 0 {
				t.Errorf("%s: a copy before any check (%d requests)", tc.name, requests)
			}
			time.Sleep(time.Minute)
			if _, err := c.Get(context.Background(), u); err != nil {
				t.Fatal(err)
			}
			got, ok := c.FetchedAt(u)
			if !ok || !got.Equal(tc.want) {
				t.Errorf("%s: FetchedAt = %v %v, want %v", tc.name, got, ok, tc.want)
			}
			other, _ := url.Parse("https://example.test./other")
			if got2, ok := c.FetchedAt(other); !ok || !got2.Equal(got) {
				t.Errorf("%s: another spelling of the site: %v %v", tc.name, got2, ok)
			}
		}
	})
}

type countingRT struct {
	rt http.RoundTripper
	n  *int
}

func (c countingRT) RoundTrip(r *http.Request) (*http.Response, error) {
	*c.n++
	return c.rt.RoundTrip(r)
}

func countRT(rt http.RoundTripper, n *int) http.RoundTripper { return countingRT{rt, n} }
