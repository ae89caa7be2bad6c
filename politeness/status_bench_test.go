package politeness_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/goodbot-go/goodbot/politeness"
)

// BenchmarkHosts is the cost of one snapshot of a Transport that knows
// 10,000 hosts (a status page or metrics scrape).
func BenchmarkHosts(b *testing.B) {
	tr := &politeness.Transport{Policy: politeness.Policy{MinDelay: -1},
		Base: rtFunc(func(r *http.Request) (*http.Response, error) { return answer(200, nil) })}
	c := &http.Client{Transport: tr}
	for i := range 10_000 {
		resp, err := c.Get(fmt.Sprintf("http://h%d.test/", i))
		if err != nil {
			b.Fatal(err)
		}
		resp.Body.Close()
	}
	b.ReportAllocs()
	for b.Loop() {
		if n := len(tr.Hosts()); n != 10_000 {
			b.Fatalf("%d hosts", n)
		}
	}
}
