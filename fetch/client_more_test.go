package fetch_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/fetch/fetchtest"
	"github.com/goodbot-go/goodbot/politeness"
)

// D11, Wrap: the client takes existing's Timeout when bot.Limits.Timeout
// is zero, and keeps the bot's own otherwise; the time limit runs from the
// moment the request is sent (fake time), through existing's Transport.
func TestWrap_D11_TimeoutFromExistingOnlyWhenTheBotHasNone(t *testing.T) {
	for _, tt := range []struct {
		name        string
		bot, client time.Duration
		want        time.Duration
	}{
		{"existing's when the bot has none", 0, 3 * time.Second, 3 * time.Second},
		{"the bot's over existing's", 5 * time.Second, 20 * time.Second, 5 * time.Second},
		{"the bot's, existing has none", 5 * time.Second, 0, 5 * time.Second},
		{"neither: the 30 s default", 0, 0, 30 * time.Second},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := fetchtest.New()
				defer w.Close()
				site(w, "a.test", "").Handle("/hang", fetchtest.Hang())
				bot := fetch.Bot{UserAgent: testUA, Politeness: politeness.Policy{MinDelay: -1},
					Limits: fetch.Limits{Timeout: tt.bot}}
				existing := &http.Client{Transport: w.RoundTripper(), Timeout: tt.client}
				c, err := fetch.Wrap(bot, existing)
				if err != nil {
					t.Fatal(err)
				}
				resp, err := c.Get("http://a.test/hang")
				if err == nil {
					resp.Body.Close()
					t.Fatal("a request that never gets an answer succeeded")
				}
				end := time.Now()
				rs := w.RequestsTo("a.test", "/hang")
				if len(rs) != 1 {
					t.Fatalf("%d requests for /hang reached the web through existing's Transport, want 1", len(rs))
				}
				if o := fetch.OutcomeOf(err); o != fetch.Timeout {
					t.Errorf("outcome %v (%v), want Timeout", o, err)
				}
				if d := end.Sub(rs[0].Start); d != tt.want {
					t.Errorf("gave up %v after the request was sent, want %v", d, tt.want)
				}
			})
		})
	}
}

// Wrap: an *http.Transport of existing's is cloned and given the checked
// dialer only when bot.LocalAddr is valid, and existing's own transport is
// never changed; without LocalAddr it dials on its own, like any other
// transport.
func TestWrap_HTTPTransportDialer(t *testing.T) {
	addr := closingListener(t)
	for _, tt := range []struct {
		name    string
		local   netip.Addr
		refused bool
	}{
		{"no LocalAddr: existing's dialer", netip.Addr{}, false},
		{"LocalAddr: the checked dialer", netip.MustParseAddr("127.0.0.1"), true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var dials atomic.Int32
			var d net.Dialer
			own := func(ctx context.Context, network, addr string) (net.Conn, error) {
				dials.Add(1)
				return d.DialContext(ctx, network, addr)
			}
			tr := &http.Transport{DialContext: own}
			existing := &http.Client{Transport: tr}
			c, err := fetch.Wrap(fetch.Bot{UserAgent: testUA, LocalAddr: tt.local}, existing)
			if err != nil {
				t.Fatal(err)
			}
			conn, err, ok := fetch.BaseDial(context.Background(), c, addr)
			if !ok {
				t.Fatal("base transport not reachable")
			}
			if conn != nil {
				conn.Close()
			}
			if refused := errors.Is(err, fetch.ErrInternalAddress); refused != tt.refused || (!tt.refused && err != nil) {
				t.Errorf("dial %s: %v, want refused %v", addr, err, tt.refused)
			}
			if got, want := dials.Load(), map[bool]int32{false: 1, true: 0}[tt.refused]; got != want {
				t.Errorf("existing's dialer called %d times, want %d", got, want)
			}
			// existing's transport still dials with its own dialer.
			if existing.Transport != tr {
				t.Fatal("existing's Transport replaced")
			}
			before := dials.Load()
			if conn, err := tr.DialContext(context.Background(), "tcp", addr); err != nil {
				t.Errorf("existing's transport: %v", err)
			} else {
				conn.Close()
			}
			if dials.Load() != before+1 {
				t.Error("existing's transport no longer dials with its own dialer")
			}
		})
	}
}

// Wrap calls existing's CheckRedirect for each hop within the bot's own
// limit (2 here), with the hops so far, and stops at what it says; a hop
// past the limit fails with ErrTooManyRedirects before existing is asked.
func TestWrap_D4_ExistingCheckRedirectAfterTheHopLimit(t *testing.T) {
	for _, tt := range []struct {
		name   string
		stopAt int // the hop existing's CheckRedirect refuses; 0: none
		calls  []int
		served int // requests for /r/...
		err    error
	}{
		{"existing allows all", 0, []int{1, 2}, 3, fetch.ErrTooManyRedirects},
		{"existing stops the second hop", 2, []int{1, 2}, 2, errStopHere},
		{"existing stops the first hop", 1, []int{1}, 1, errStopHere},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := fetchtest.New()
				defer w.Close()
				w.Host("a.test").Handle("/robots.txt", fetchtest.Robots("")).HandleChain("/r", 5, fetchtest.HTML("end"))
				var calls []int
				existing := &http.Client{Transport: w.RoundTripper(), CheckRedirect: func(req *http.Request, via []*http.Request) error {
					calls = append(calls, len(via))
					if len(via) == tt.stopAt {
						return errStopHere
					}
					return nil
				}}
				c, err := fetch.Wrap(fetch.Bot{UserAgent: testUA, Limits: fetch.Limits{MaxRedirects: 2}}, existing)
				if err != nil {
					t.Fatal(err)
				}
				resp, err := c.Get("http://a.test/r/0")
				if err == nil {
					resp.Body.Close()
				}
				if n := len(w.Requests()) - w.Count("a.test", "/robots.txt"); n != tt.served {
					t.Fatalf("%d requests along the chain, want %d", n, tt.served)
				}
				if !errors.Is(err, tt.err) {
					t.Errorf("err %v, want %v", err, tt.err)
				}
				if len(calls) != len(tt.calls) {
					t.Fatalf("existing's CheckRedirect called with %v hops, want %v", calls, tt.calls)
				}
				for i := range calls {
					if calls[i] != tt.calls[i] {
						t.Errorf("existing's CheckRedirect called with %v hops, want %v", calls, tt.calls)
					}
				}
			})
		})
	}
}

var errStopHere = errors.New("stop here")
