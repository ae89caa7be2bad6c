package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/goodbot-go/goodbot/examples/internal/botkit"
	"github.com/goodbot-go/goodbot/examples/internal/bottest"
	"github.com/goodbot-go/goodbot/examples/internal/sofya"
	"github.com/goodbot-go/goodbot/internal/manyhosts"
)

// BenchmarkSofyaManyHosts runs sofyabot's crawl (sofya.Run, through
// botkit.Crawl, its state file and defaults: -parallel 64) on a loopback
// web of 500 hosts (internal/manyhosts, a child process) with its
// politeness profile scaled by 0.1 (the test-only knob botkit.Env.Scale):
// a 100 ms floor plus up to 50 ms of jitter, Crawl-delay: 1 on every
// tenth host, 10 ms latency. It reports the pages per second of a
// measured window against sofyabot's own ceiling, Σ 1/(max(100 ms,
// Crawl-delay) + 25 ms (the mean jitter) + latency), and the web's count
// of violations (it fails on any).
func BenchmarkSofyaManyHosts(b *testing.B) {
	const (
		hosts  = 500
		scale  = 0.1
		warm   = 3 * time.Second
		window = 6 * time.Second
	)
	floor, jitter := time.Duration(scale*float64(time.Second)), time.Duration(scale*float64(500*time.Millisecond))
	web := manyhosts.Start(b, manyhosts.Config{Delay: floor, Latency: 10 * time.Millisecond, Links: 2})
	cfg := web.Config()
	var ceiling float64
	for n := range hosts {
		ceiling += 1 / (cfg.HostDelay(n) + jitter/2 + cfg.Latency).Seconds()
	}
	for i := 0; b.Loop(); i++ {
		prefix := fmt.Sprintf("s%d-", i)
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.MaxConnsPerHost, tr.MaxIdleConnsPerHost, tr.MaxIdleConns = 1, 1, 0
		tr.IdleConnTimeout = 2 * time.Minute
		tr.DialContext = web.DialContext
		var urls []string
		for h := range hosts {
			urls = append(urls, web.Root(prefix, h))
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan int, 1)
		env := botkit.Env{Stdout: io.Discard, Stderr: io.Discard, Transport: tr, Scale: scale}
		go func() { done <- sofya.Run(ctx, bottest.Args(b, nil, "", urls...), env) }()
		time.Sleep(warm)
		before, start := web.Stats(b, prefix), time.Now()
		time.Sleep(window)
		after, end := web.Stats(b, prefix), time.Now()
		cancel()
		<-done
		tr.CloseIdleConnections()
		got := after.Sub(before)
		rate := float64(got.Pages) / end.Sub(start).Seconds()
		b.ReportMetric(rate, "pages/s")
		b.ReportMetric(100*rate/ceiling, "%ceiling")
		b.ReportMetric(float64(after.Violations()), "violations")
		if v := after.Violations(); v != 0 {
			b.Errorf("%d politeness violations: %+v", v, after)
		}
	}
	b.ReportMetric(ceiling, "ceiling-pages/s")
}
