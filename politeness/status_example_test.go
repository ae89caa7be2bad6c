package politeness_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/goodbot-go/goodbot/politeness"
)

// Hosts tells which hosts are paused, why and until when: here a host that
// answered 429 with Retry-After: 120.
func ExampleTransport_Hosts() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "120")
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	defer srv.Close()

	tr := &politeness.Transport{Base: &http.Transport{}, Policy: politeness.Policy{MaxRetryAfter: time.Hour}}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Get(srv.URL + "/page")
	if err != nil {
		fmt.Println(err)
		return
	}
	resp.Body.Close()

	now := time.Now()
	for _, h := range tr.Hosts() {
		reason, until, paused := h.Paused(now)
		fmt.Println("last status:", h.LastStatus, "queued:", h.Queued, "in flight:", h.InFlight != "")
		fmt.Println("paused:", paused, reason, until.Sub(now).Round(time.Minute))
		fmt.Println("slow-down level:", h.State.Slow, "breaker:", h.Breaker(now))
	}
	// Output:
	// last status: 429 queued: 0 in flight: false
	// paused: true retry-after 2m0s
	// slow-down level: 1 breaker: closed
}
