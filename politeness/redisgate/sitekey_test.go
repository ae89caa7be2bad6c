package redisgate

import (
	"context"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goodbot-go/goodbot/politeness"
	"github.com/goodbot-go/goodbot/politeness/sitekeytest"
)

// startRecorder is a RoundTripper that answers 200 at once and records when
// each request started.
type startRecorder struct {
	mu     sync.Mutex
	starts []time.Time
}

func (r *startRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	r.mu.Lock()
	r.starts = append(r.starts, time.Now())
	r.mu.Unlock()
	return &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("ok")), Request: req}, nil
}

// C3 across a fleet: two processes asking for different spellings of one
// host (case, trailing dots, zero-padded ports, IDNA dots, full-width
// letters) share one set of Redis keys, so the host keeps its delay between
// every two requests.
func TestGate_C3_SpellingsShareOneKey(t *testing.T) {
	c := newClient(t, needRedis(t))
	const key = "http://example.com:80"
	spellings := sitekeytest.Spellings(t)[key]
	if len(spellings) < 6 {
		t.Fatalf("%d spellings of %s in the table, want at least 6", len(spellings), key)
	}
	prefix := testPrefix()
	web := &startRecorder{}
	const delay = 200 * time.Millisecond
	var clients []*http.Client
	for range 2 {
		tr := &politeness.Transport{Base: web, Gate: newTestGate(t, c, prefix, nil), Policy: politeness.Policy{MinDelay: delay}}
		clients = append(clients, &http.Client{Transport: tr})
	}
	ctx := context.Background()
	for i, s := range spellings {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, s, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := clients[i%2].Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v", s, err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	web.mu.Lock()
	starts := slices.Clone(web.starts)
	web.mu.Unlock()
	if len(starts) != len(spellings) {
		t.Fatalf("the host saw %d requests, want %d", len(starts), len(spellings))
	}
	for i := 1; i < len(starts); i++ {
		if gap := starts[i].Sub(starts[i-1]); gap < delay {
			t.Errorf("requests %d and %d (%s, %s) %v apart, want at least %v", i-1, i, spellings[i-1], spellings[i], gap, delay)
		}
	}
	keys, err := c.Keys(ctx, prefix+"state:*").Result()
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{prefix + "state:" + key}; !slices.Equal(keys, want) {
		t.Errorf("state keys %q, want %q", keys, want)
	}
}
