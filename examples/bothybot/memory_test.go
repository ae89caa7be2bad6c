package main

import (
	"bufio"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goodbot-go/goodbot/examples/internal/bothy"
	"github.com/goodbot-go/goodbot/examples/internal/bottest"
	"github.com/goodbot-go/goodbot/fetch/fetchtest"
)

// Size of the generated sitemap: an index of bigFiles sitemaps of
// bigPerFile URLs each, 1,000,000 in all: legal under sitemaps.org and
// within the sitemap walker's defaults.
const (
	bigFiles   = 20
	bigPerFile = 50_000
)

// bigSitemap serves, on host big.test, an index of bigFiles child
// sitemaps, each generated on the fly (streamed, never held in memory)
// with bigPerFile URLs, all with an ETag that never changes. It counts
// the page entries it wrote.
func bigSitemap(w *fetchtest.Web) *atomic.Int64 {
	var written atomic.Int64
	unchanged := func(rw http.ResponseWriter, r *http.Request) bool {
		rw.Header().Set("ETag", `"v1"`)
		if r.Header.Get("If-None-Match") == `"v1"` {
			rw.WriteHeader(http.StatusNotModified)
			return true
		}
		rw.Header().Set("Content-Type", "application/xml")
		return false
	}
	h := w.Host("big.test")
	h.Handle("/robots.txt", fetchtest.Robots("User-agent: *\nAllow: /\n\nSitemap: /sitemap_index.xml\n"))
	h.Handle("/", fetchtest.HTML(`<p>home</p>`))
	h.Handle("/sitemap_index.xml", http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if unchanged(rw, r) {
			return
		}
		var b strings.Builder
		b.WriteString(`<?xml version="1.0" encoding="UTF-8"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
		for i := range bigFiles {
			fmt.Fprintf(&b, "<sitemap><loc>http://big.test/sitemaps/%d.xml</loc></sitemap>", i)
		}
		b.WriteString(`</sitemapindex>`)
		rw.Write([]byte(b.String()))
	}))
	for i := range bigFiles {
		h.Handle(fmt.Sprintf("/sitemaps/%d.xml", i), http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			if unchanged(rw, r) {
				return
			}
			bw := bufio.NewWriterSize(rw, 64<<10)
			bw.WriteString(`<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
			for j := range bigPerFile {
				if _, err := fmt.Fprintf(bw, "<url><loc>http://big.test/p/%d/%d</loc><lastmod>2024-05-06</lastmod></url>\n", i, j); err != nil {
					return // the reader stopped
				}
				written.Add(1)
			}
			bw.WriteString(`</urlset>`)
			bw.Flush()
		}))
	}
	h.Fallback(fetchtest.HTML(`<p>a page</p>`))
	return &written
}

// peakHeap samples the heap in use until stop is closed.
func peakHeap(stop <-chan struct{}) func() uint64 {
	var peak atomic.Uint64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var ms runtime.MemStats
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	return func() uint64 { wg.Wait(); return peak.Load() }
}

// vmHWM is the process's peak resident set size (Linux), or 0.
func vmHWM() uint64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// TestBothy_SitemapMemoryBoundedByPageCap: a legal 1,000,000-URL sitemap
// (an index of 20 × 50,000, within the walker's defaults), served over
// loopback and generated on the fly, does not drive a 3-page crawl's
// memory or state file: the walker takes no more entries than the page
// cap, stops reading there, and the state file keeps only those; the
// freshness check that follows costs two 304s.
func TestBothy_SitemapMemoryBoundedByPageCap(t *testing.T) {
	if testing.Short() {
		t.Skip("reads a generated 1,000,000-URL sitemap over loopback")
	}
	w := fetchtest.New()
	defer w.Close()
	written := bigSitemap(w)
	state := filepath.Join(t.TempDir(), "state.db")
	args := crawlArgs(t, state, "-max-pages", "3", "http://big.test/")

	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	stop := make(chan struct{})
	peak := peakHeap(stop)
	start := time.Now()
	tr := w.Transport()
	defer tr.CloseIdleConnections()
	out := bottest.RunScaled(t, bothy.Run, tr, 0.001, 0, args...)
	close(stop)
	took := time.Since(start)
	heap := peak()
	fi, err := os.Stat(state)
	if err != nil {
		t.Fatal(err)
	}
	ok := 0
	for _, r := range out.Results {
		if r.Outcome == "ok" {
			ok++
		}
	}
	smReqs := 0
	for _, r := range w.RequestsTo("big.test") {
		if strings.HasPrefix(r.Path, "/sitemap") {
			smReqs++
		}
	}
	t.Logf("1,000,000-URL sitemap, -max-pages 3: %d pages ok, %d sitemap requests, %d entries served, peak heap in use %.1f MiB (%.1f MiB before), process peak RSS %.1f MiB, state file %d KiB, %v",
		ok, smReqs, written.Load(), float64(heap)/(1<<20), float64(before.HeapInuse)/(1<<20), float64(vmHWM())/(1<<20), fi.Size()>>10, took.Round(time.Millisecond))
	// The crawl happened, and read the sitemap: 3 pages in all (the cap,
	// the home page counted), the others from the sitemap.
	if out.Code != 0 || ok != 3 || smReqs < 2 {
		t.Fatalf("exit %d, %d pages ok, %d sitemap requests; want 0, 3, >= 2\n%s", out.Code, ok, smReqs, out.Stderr)
	}
	// Bounded by the cap: the index and the first child only, a heap and a
	// state file far below what 1,000,000 entries cost.
	if smReqs != 2 {
		t.Errorf("%d sitemap requests, want 2 (the index and the first child)", smReqs)
	}
	if heap > before.HeapInuse+64<<20 {
		t.Errorf("peak heap %d MiB, want under %d MiB", heap>>20, (before.HeapInuse+64<<20)>>20)
	}
	if fi.Size() > 1<<20 {
		t.Errorf("state file %d KiB, want under 1 MiB", fi.Size()>>10)
	}

	// -fresh on the unchanged site: the index and the cut file answer 304
	// (the cut file kept its validators), nothing else is requested.
	w.Reset()
	out = bottest.RunScaled(t, bothy.Run, tr, 0.001, 0, crawlArgs(t, state, "-max-pages", "3", "-fresh", "http://big.test/")...)
	var got []string
	for _, r := range w.RequestsTo("big.test") {
		got = append(got, fmt.Sprintf("%s %d", r.Path, r.Status))
	}
	if want := "[/sitemap_index.xml 304 /sitemaps/0.xml 304]"; out.Code != 0 || fmt.Sprint(got) != want {
		t.Errorf("-fresh: exit %d, requests %v; want %s\n%s", out.Code, got, want, out.Stderr)
	}
}
