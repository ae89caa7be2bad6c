package fetch_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/fetch/fetchtest"
)

// chargeWarnings is a slog handler that keeps the value of every
// "crawler-charged not understood" warning.
type chargeWarnings struct {
	mu     sync.Mutex
	values []string
}

func (h *chargeWarnings) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }
func (h *chargeWarnings) WithAttrs([]slog.Attr) slog.Handler           { return h }
func (h *chargeWarnings) WithGroup(string) slog.Handler                { return h }
func (h *chargeWarnings) Handle(_ context.Context, r slog.Record) error {
	if !strings.HasPrefix(r.Message, "fetch: crawler-charged not understood") {
		return nil
	}
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "value" {
			h.mu.Lock()
			h.values = append(h.values, a.Value.String())
			h.mu.Unlock()
		}
		return true
	})
	return nil
}

// payingBot is a signing bot over w's in-memory transport that pays up to
// maxPrice a request, budget in all (USD micros).
func payingBot(w *fetchtest.Web, maxPrice, budget int64) fetch.Bot {
	bot := memBot(w)
	bot.UserAgent = bothyUA
	bot.Signer = bothySigner(0)
	bot.Pay = &fetch.PayPolicy{MaxPrice: fetch.Price{Currency: "USD", Micros: maxPrice}, Budget: fetch.Price{Currency: "USD", Micros: budget}}
	return bot
}

// What crawler-charged says is added to the total and to the site; a
// charge that does not parse or is in another currency counts as the whole
// max price, with a warning quoting the value (cut to 48 bytes); a charge of
// zero adds nothing and no site.
func TestPayment_ChargedHeader(t *testing.T) {
	long := strings.Repeat("x", 60)
	tests := []struct {
		name    string
		charged string
		total   int64
		hosts   map[string]int64
		warning string // the logged value; "" for none
	}{
		{"price", "USD 0.01", 10000, map[string]int64{"http://a.test:80": 10000}, ""},
		{"one micro", "USD 0.000001", 1, map[string]int64{"http://a.test:80": 1}, ""},
		{"zero", "USD 0", 0, map[string]int64{}, ""},
		{"other currency", "EUR 0.01", 20000, map[string]int64{"http://a.test:80": 20000}, `"EUR 0.01"`},
		{"no price", "free", 20000, map[string]int64{"http://a.test:80": 20000}, `"free"`},
		{"long", long, 20000, map[string]int64{"http://a.test:80": 20000}, `"` + long[:43] + `"...`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := fetchtest.New()
				defer w.Close()
				site(w, "a.test", "User-agent: *\nAllow: /\n").
					Handle("/p", fetchtest.Page{Body: "<p>paid</p>", Header: http.Header{"Crawler-Charged": {tt.charged}}})
				bot := payingBot(w, 20000, 1000000)
				logs := &chargeWarnings{}
				bot.Logger = slog.New(logs)
				f := mustFetcher(t, bot)
				get(t, f, "http://a.test/p", fetch.OK)
				if n := len(w.RequestsTo("a.test", "/p")); n != 1 {
					t.Fatalf("%d requests for /p, want 1", n)
				}
				s := f.Spent()
				if s.Total != (fetch.Price{Currency: "USD", Micros: tt.total}) {
					t.Errorf("Spent().Total = %+v, want USD %d micros", s.Total, tt.total)
				}
				if len(s.Hosts) != len(tt.hosts) {
					t.Errorf("Spent().Hosts = %+v, want %v", s.Hosts, tt.hosts)
				}
				for h, m := range tt.hosts {
					if s.Hosts[h] != (fetch.Price{Currency: "USD", Micros: m}) {
						t.Errorf("Spent().Hosts[%s] = %+v, want USD %d micros", h, s.Hosts[h], m)
					}
				}
				var want []string
				if tt.warning != "" {
					want = []string{tt.warning}
				}
				if strings.Join(logs.values, "\n") != strings.Join(want, "\n") {
					t.Errorf("warned with values %q, want %q", logs.values, want)
				}
			})
		})
	}
}

// A charge for robots.txt counts against the budget like any other: the
// page request that the rest of the budget cannot cover is refused unsent,
// and its body (through the Client's transport) is closed once.
func TestPayment_RobotsTxtChargeCounts(t *testing.T) {
	for _, client := range []bool{false, true} {
		name := "Fetcher"
		if client {
			name = "Client"
		}
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := fetchtest.New()
				defer w.Close()
				w.Host("a.test").
					Handle("/robots.txt", fetchtest.Page{Body: "User-agent: *\nAllow: /\n", ContentType: "text/plain",
						Header: http.Header{"Crawler-Charged": {"USD 0.02"}}}).
					Handle("/page", fetchtest.HTML("<p>page</p>"))
				bot := payingBot(w, 20000, 20000)
				var err error
				if client {
					c := mustClient(t, bot)
					body := &closeCounter{Reader: strings.NewReader("x")}
					req, _ := http.NewRequest(http.MethodGet, "http://a.test/page", body)
					var resp *http.Response
					if resp, err = c.Transport.RoundTrip(req); err == nil {
						resp.Body.Close()
					}
					if n := body.closed.Load(); n != 1 {
						t.Errorf("request body closed %d times, want 1", n)
					}
				} else {
					var p *fetch.Page
					f := mustFetcher(t, bot)
					p, err = f.Get(context.Background(), "http://a.test/page")
					if p == nil || p.Outcome != fetch.PaymentRequired {
						t.Errorf("page %+v, want payment_required", p)
					}
					if s := f.Spent(); s.Total != (fetch.Price{Currency: "USD", Micros: 20000}) {
						t.Errorf("Spent().Total = %+v, want USD 0.02", s.Total)
					}
				}
				if n := len(w.RequestsTo("a.test", "/robots.txt")); n != 1 {
					t.Fatalf("%d requests for robots.txt, want 1", n)
				}
				if !errors.Is(err, fetch.ErrBudgetSpent) {
					t.Errorf("err %v, want ErrBudgetSpent", err)
				}
				if n := len(w.RequestsTo("a.test", "/page")); n != 0 {
					t.Errorf("%d requests for /page, want 0 (the budget was spent on robots.txt)", n)
				}
			})
		})
	}
}

// While a request is on its way its max price is held: a Get that the rest
// cannot cover is refused unsent, and once the answer came (charging
// nothing) the hold is given back.
func TestPayment_InFlightReservation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := fetchtest.New()
		defer w.Close()
		release := make(chan struct{})
		site(w, "a.test", "User-agent: *\nAllow: /\n").
			Handle("/slow", http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
				<-release
				rw.Header().Set("Content-Type", "text/html")
				_, _ = rw.Write([]byte("<p>slow</p>"))
			}))
		site(w, "b.test", "User-agent: *\nAllow: /\n")
		f := mustFetcher(t, payingBot(w, 20000, 20000))
		ctx := context.Background()
		get(t, f, "http://a.test/", fetch.OK)
		get(t, f, "http://b.test/", fetch.OK)
		done := make(chan error)
		go func() {
			_, err := f.Get(ctx, "http://a.test/slow")
			done <- err
		}()
		synctest.Wait()
		if n := len(w.RequestsTo("a.test", "/slow")); n != 1 {
			t.Fatalf("%d requests for /slow on its way, want 1", n)
		}
		p, err := f.Get(ctx, "http://b.test/x")
		if p == nil || p.Outcome != fetch.PaymentRequired || !errors.Is(err, fetch.ErrBudgetSpent) {
			t.Errorf("Get while /slow is on its way: page %+v, err %v; want payment_required with ErrBudgetSpent", p, err)
		}
		if n := len(w.RequestsTo("b.test", "/x")); n != 0 {
			t.Errorf("%d requests for b.test/x while the budget was held, want 0", n)
		}
		if s := f.Spent(); s.Total != (fetch.Price{Currency: "USD"}) || len(s.Hosts) != 0 {
			t.Errorf("Spent() while /slow is on its way = %+v, want USD 0 and no host", s)
		}
		close(release)
		if err := <-done; err != nil {
			t.Fatalf("Get(/slow): %v", err)
		}
		get(t, f, "http://b.test/", fetch.OK)
		if n := len(w.RequestsTo("b.test", "/")); n != 2 {
			t.Errorf("%d requests for b.test/ after the hold was given back, want 2", n)
		}
	})
}

// Spent of a Fetcher that cannot pay (nil, zero, no Bot.Pay) is the zero
// Spending.
func TestPayment_SpentWithoutPayer(t *testing.T) {
	_, bot := loopback(t)
	tests := []struct {
		name string
		f    *fetch.Fetcher
	}{
		{"nil", nil},
		{"zero", &fetch.Fetcher{}},
		{"no Pay", mustFetcher(t, bot)},
	}
	for _, tt := range tests {
		if s := tt.f.Spent(); s.Total != (fetch.Price{}) || s.Hosts != nil {
			t.Errorf("%s: Spent() = %+v, want the zero Spending", tt.name, s)
		}
	}
}
