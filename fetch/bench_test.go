package fetch_test

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/internal/coldcache"
	"github.com/goodbot-go/goodbot/internal/cputime"
	"github.com/goodbot-go/goodbot/politeness"
	"github.com/goodbot-go/goodbot/signing"
	"github.com/goodbot-go/goodbot/signing/signingtest"
)

// The benchmarks share one loopback server; compare each against
// BenchmarkBareClient from the same run:
//
//	go test -run '^$' -bench . -benchtime 20000x -count 5 ./fetch
func benchServer(b *testing.B) *httptest.Server {
	body := []byte("<!doctype html><title>bench</title><p>a small page</p>")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			w.Header().Set("Content-Type", "text/plain")
			_, _ = io.WriteString(w, "User-agent: *\nDisallow: /private\n")
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write(body)
	}))
	b.Cleanup(srv.Close)
	return srv
}

// getter returns a function that GETs url with c (header: name, value
// pairs) and drains and closes the body.
func getter(b *testing.B, c *http.Client, url string, header ...string) func() {
	return func() {
		req, err := http.NewRequest(http.MethodGet, url, nil)
		if err != nil {
			b.Fatal(err)
		}
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		resp, err := c.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}

func benchGet(b *testing.B, c *http.Client, url string, header ...string) {
	b.Helper()
	b.ReportAllocs()
	get := getter(b, c, url, header...)
	get() // warm: connection, robots.txt
	cpu0 := cputime.Self()
	for b.Loop() {
		get()
	}
	b.ReportMetric(float64(cputime.Self()-cpu0)/float64(b.N), "cpu-ns/op")
}

func bareTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = 1
	return t
}

// BenchmarkBareClient is the baseline: net/http alone.
func BenchmarkBareClient(b *testing.B) {
	srv := benchServer(b)
	tr := bareTransport()
	defer tr.CloseIdleConnections()
	benchGet(b, &http.Client{Transport: tr}, srv.URL+"/page")
}

// BenchmarkBareClientSameHeaders is the baseline sending the headers the
// bot sends (User-Agent, From, Accept): the server's work is then the same.
func BenchmarkBareClientSameHeaders(b *testing.B) {
	srv := benchServer(b)
	tr := bareTransport()
	defer tr.CloseIdleConnections()
	benchGet(b, &http.Client{Transport: tr}, srv.URL+"/page",
		"User-Agent", benchUA, "From", "bot@bench.example",
		"Accept", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8")
}

const benchUA = "BenchBot/1.0 (+https://bench.example/bot)"

func benchBot(tr http.RoundTripper) fetch.Bot {
	return fetch.Bot{
		UserAgent:  benchUA,
		From:       "bot@bench.example",
		Transport:  tr,
		Politeness: politeness.Policy{MinDelay: -1},
		// The bench server is on loopback.
		AllowInternal: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
	}
}

// BenchmarkComposedClient: robots gate, politeness (no delay), challenge
// sniffing and limits, unsigned.
func BenchmarkComposedClient(b *testing.B) {
	srv := benchServer(b)
	tr := bareTransport()
	defer tr.CloseIdleConnections()
	c, err := fetch.New(benchBot(tr))
	if err != nil {
		b.Fatal(err)
	}
	benchGet(b, c, srv.URL+"/page")
}

// BenchmarkComposedClientSigned adds Web Bot Auth signing; compare with
// BenchmarkBareClient plus BenchmarkEd25519Sign.
func BenchmarkComposedClientSigned(b *testing.B) {
	srv := benchServer(b)
	tr := bareTransport()
	defer tr.CloseIdleConnections()
	bot := benchBot(tr)
	bot.Signer = &signing.Signer{Key: signingtest.BothyKey(), Agent: "https://bothy.tools"}
	c, err := fetch.New(bot)
	if err != nil {
		b.Fatal(err)
	}
	benchGet(b, c, srv.URL+"/page")
}

// BenchmarkEd25519Sign is one raw signature, the floor of signing's cost.
func BenchmarkEd25519Sign(b *testing.B) {
	key := signingtest.BothyKey()
	msg := make([]byte, 160)
	b.ReportAllocs()
	cpu0 := cputime.Self()
	for b.Loop() {
		_ = ed25519.Sign(key, msg)
	}
	b.ReportMetric(float64(cputime.Self()-cpu0)/float64(b.N), "cpu-ns/op")
}

// cannedBase answers every request in memory, so the two benchmarks below
// measure the chain's own cost per request, without the network.
func cannedBase() http.RoundTripper {
	body := "<!doctype html><title>bench</title><p>a small page</p>"
	return rtFunc(func(r *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 200, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
			Header:  http.Header{"Content-Type": {"text/html; charset=utf-8"}},
			Body:    io.NopCloser(strings.NewReader(body)),
			Request: r, ContentLength: int64(len(body))}, nil
	})
}

// BenchmarkBareInMemory is http.Client over the canned base.
func BenchmarkBareInMemory(b *testing.B) {
	benchGet(b, &http.Client{Transport: cannedBase()}, "http://bench.test/page")
}

// BenchmarkComposedInMemory is the composed client over the same base: the
// difference to BenchmarkBareInMemory is the chain's overhead per request.
func BenchmarkComposedInMemory(b *testing.B) {
	c, err := fetch.New(benchBot(cannedBase()))
	if err != nil {
		b.Fatal(err)
	}
	benchGet(b, c, "http://bench.test/page")
}

// BenchmarkFetcherInMemory is Fetcher.Get over the canned base: the chain
// plus what Get does around it (URL key, validators, reading the page, its
// robots rules and usage). The base is a Bot.Transport, so the chain also
// watches for resends (resend.go), which a bot with the default base does
// not.
func BenchmarkFetcherInMemory(b *testing.B) {
	f, err := fetch.NewFetcher(benchBot(cannedBase()))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if _, err := f.Get(ctx, "http://bench.test/page"); err != nil { // warm: robots.txt
		b.Fatal(err)
	}
	b.ReportAllocs()
	cpu0 := cputime.Self()
	for b.Loop() {
		if _, err := f.Get(ctx, "http://bench.test/page"); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cputime.Self()-cpu0)/float64(b.N), "cpu-ns/op")
}

// BenchmarkFetcherInMemoryColdHosts is BenchmarkFetcherInMemory over 2,000
// hosts in turn, with 512 scattered writes over 32 MiB between Gets, as a
// crawl's other work does to the CPU's caches between two requests to one
// host; get-ns/op is the time in Get alone:
//
//	go test -run '^$' -bench InMemoryColdHosts -benchtime 100000x -cpu 1 -count 5 ./fetch
func BenchmarkFetcherInMemoryColdHosts(b *testing.B) {
	const hosts = 2000
	f, err := fetch.NewFetcher(benchBot(cannedBase()))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	urls := make([]string, hosts)
	for i := range urls {
		urls[i] = fmt.Sprintf("http://h%d.example:8080/page", i)
		if _, err := f.Get(ctx, urls[i]); err != nil { // warm: robots.txt
			b.Fatal(err)
		}
	}
	spent := coldcache.EachHost(b, hosts, func(h int) {
		if _, err := f.Get(ctx, urls[h]); err != nil {
			b.Fatal(err)
		}
	})
	b.ReportMetric(float64(spent.Nanoseconds())/float64(b.N), "get-ns/op")
}

// BenchmarkComposedInMemorySigned is BenchmarkComposedInMemory with Web Bot
// Auth signing: compare with BenchmarkBareInMemory plus BenchmarkEd25519Sign.
func BenchmarkComposedInMemorySigned(b *testing.B) {
	bot := benchBot(cannedBase())
	bot.Signer = &signing.Signer{Key: signingtest.BothyKey(), Agent: "https://bothy.tools"}
	c, err := fetch.New(bot)
	if err != nil {
		b.Fatal(err)
	}
	benchGet(b, c, "http://bench.test/page")
}

// BenchmarkRatio runs the bare client, the composed client, the composed
// signed client, raw ed25519.Sign, and the composed client preceded by a raw
// ed25519.Sign in the same goroutine, in alternating blocks on one loopback
// server, and reports the CPU-time ratios the goals are stated in:
// composed/bare (goal <= 1.1) and signed/(bare+sign) (goal <= 1.1), plus
// signed/(composed+in-flow sign), the signing layer's own share,
// composed/(bare client with the bot's default 30 s Timeout), composed/(bare
// client sending the bot's headers), composed/(both: x-bare-equiv, the
// chain's own share), and the in-flow sign penalty: a bare client with a raw
// ed25519.Sign just before each request against the two measured apart.
// Alternating blocks keep the ratios steady on a shared, loaded machine,
// where separate benchmarks drift apart:
//
//	go test -run '^$' -bench Ratio -benchtime 40000x -count 5 ./fetch
func BenchmarkRatio(b *testing.B) {
	srv := benchServer(b)
	url := srv.URL + "/page"
	trBare, trComp, trSign := bareTransport(), bareTransport(), bareTransport()
	defer trBare.CloseIdleConnections()
	defer trComp.CloseIdleConnections()
	defer trSign.CloseIdleConnections()
	bare := &http.Client{Transport: trBare}
	comp, err := fetch.New(benchBot(trComp))
	if err != nil {
		b.Fatal(err)
	}
	bot := benchBot(trSign)
	bot.Signer = &signing.Signer{Key: signingtest.BothyKey(), Agent: "https://bothy.tools"}
	signed, err := fetch.New(bot)
	if err != nil {
		b.Fatal(err)
	}
	key := signingtest.BothyKey()
	msg := make([]byte, 160)
	get := func(c *http.Client, header ...string) func() { return getter(b, c, url, header...) }
	trTimed := bareTransport()
	defer trTimed.CloseIdleConnections()
	bareTimed := &http.Client{Transport: trTimed, Timeout: 30 * time.Second} // the bot's default time limit
	getComp := get(comp)
	trHeaders := bareTransport()
	defer trHeaders.CloseIdleConnections()
	bareHeaders := &http.Client{Transport: trHeaders} // sending the bot's User-Agent, From and Accept
	trEquiv := bareTransport()
	defer trEquiv.CloseIdleConnections()
	// The bare client doing what the bot must do anyway: its headers and
	// its time limit.
	bareEquiv := &http.Client{Transport: trEquiv, Timeout: 30 * time.Second}
	botHeaders := []string{"User-Agent", benchUA, "From", "bot@bench.example",
		"Accept", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}
	getBare := get(bare)
	runs := []func(){getBare, getComp, get(signed), func() { _ = ed25519.Sign(key, msg) },
		func() { _ = ed25519.Sign(key, msg); getComp() }, get(bareTimed),
		func() { _ = ed25519.Sign(key, msg); getBare() },
		get(bareHeaders, botHeaders...), get(bareEquiv, botHeaders...)}
	for _, run := range runs {
		run() // warm: connections, robots.txt
	}
	const block = 100
	var cpu [9]time.Duration
	for i := 0; i < b.N; i += block {
		for j, run := range runs {
			t0 := cputime.Self()
			for range block {
				run()
			}
			cpu[j] += cputime.Self() - t0
		}
	}
	if cpu[0] > 0 {
		n := float64(b.N)
		b.ReportMetric(float64(cpu[0])/n, "bare-ns/op")
		b.ReportMetric(float64(cpu[3])/n, "sign-ns/op")
		b.ReportMetric(float64(cpu[1])/float64(cpu[0]), "x-bare")
		b.ReportMetric(float64(cpu[1])/float64(cpu[5]), "x-bare-timeout")
		b.ReportMetric(float64(cpu[1])/float64(cpu[7]), "x-bare-same-headers")
		b.ReportMetric(float64(cpu[1])/float64(cpu[8]), "x-bare-equiv")
		b.ReportMetric(float64(cpu[2])/float64(cpu[0]+cpu[3]), "x-bare+sign")
		// The signed client against the unsigned one with a raw
		// ed25519.Sign made in the same flow, just before each request:
		// what the signing layer itself adds.
		b.ReportMetric(float64(cpu[2])/float64(cpu[4]), "x-comp+inflow-sign")
		// The bare client with a raw ed25519.Sign just before each
		// request, against the two measured apart: what running a 25 us
		// computation between requests costs by itself (threads that went
		// idle meanwhile are woken again), chain or no chain.
		b.ReportMetric(float64(cpu[6])/float64(cpu[0]+cpu[3]), "inflow-sign-penalty")
		b.ReportMetric(float64(cpu[2])/float64(cpu[6]), "x-bare+inflow-sign")
	}
}

// BenchmarkRatioInMemory runs BenchmarkBareInMemory's,
// BenchmarkComposedInMemory's and BenchmarkFetcherInMemory's requests in
// alternating blocks and reports the chain's own CPU per request (composed
// minus bare) and what a Fetcher.Get costs over a bare client's request
// (get minus bare, and get/bare), steadier than the benchmarks apart:
//
//	go test -run '^$' -bench RatioInMemory -benchtime 400000x -count 5 ./fetch
func BenchmarkRatioInMemory(b *testing.B) {
	comp, err := fetch.New(benchBot(cannedBase()))
	if err != nil {
		b.Fatal(err)
	}
	f, err := fetch.NewFetcher(benchBot(cannedBase()))
	if err != nil {
		b.Fatal(err)
	}
	const url = "http://bench.test/page"
	get := func(c *http.Client) func() {
		return func() {
			req, err := http.NewRequest(http.MethodGet, url, nil)
			if err != nil {
				b.Fatal(err)
			}
			resp, err := c.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}
	gets := []func(){get(&http.Client{Transport: cannedBase()}), get(comp), func() {
		if _, err := f.Get(context.Background(), url); err != nil {
			b.Fatal(err)
		}
	}}
	for _, g := range gets {
		g() // warm: robots.txt
	}
	const block = 100
	var cpu [3]time.Duration
	for i := 0; i < b.N; i += block {
		for j, g := range gets {
			t0 := cputime.Self()
			for range block {
				g()
			}
			cpu[j] += cputime.Self() - t0
		}
	}
	if cpu[0] > 0 {
		n := float64(b.N)
		b.ReportMetric(float64(cpu[0])/n, "bare-ns/op")
		b.ReportMetric(float64(cpu[1]-cpu[0])/n, "chain-ns/op")
		b.ReportMetric(float64(cpu[2]-cpu[0])/n, "get-ns/op")
		b.ReportMetric(float64(cpu[2])/float64(cpu[0]), "get/bare")
	}
}
