package fetch_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strconv"
	"testing"

	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/politeness"
)

// pageOf is a body of n bytes whose content tells where each byte is.
func pageOf(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = 'a' + byte(i%26)
	}
	return b
}

// memSite answers every request with body (robots.txt: 404), with its
// Content-Length or, when known is false, without one.
func memSite(body []byte, known bool) http.RoundTripper {
	return rtFunc(func(r *http.Request) (*http.Response, error) {
		resp := &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/html"}},
			Body: io.NopCloser(bytes.NewReader(body)), ContentLength: -1, Request: r}
		if r.URL.Path == "/robots.txt" {
			resp.StatusCode = 404
			resp.Body = http.NoBody
			return resp, nil
		}
		if known {
			resp.ContentLength = int64(len(body))
			resp.Header.Set("Content-Length", strconv.Itoa(len(body)))
		}
		return resp, nil
	})
}

// A body is handed over whole, whatever its size relative to the sizes of
// the buffers it is first read into, with or without a Content-Length: to
// a client's caller, and as a Fetcher's page (whose body goes on in the
// buffer the sniff read its start into).
func TestSniff_BodyWholeAtEverySize(t *testing.T) {
	sizes := []int{0, 1, 3000, 4095, 4096, 4097, 16383, 16384, 16385, 65535, 65536, 65537, 200 << 10, 300 << 10}
	reads := []struct {
		name string
		read func(t *testing.T, bot fetch.Bot) []byte
	}{
		{"client", func(t *testing.T, bot fetch.Bot) []byte {
			resp, err := mustClient(t, bot).Get("http://a.test/page")
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			got, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			return got
		}},
		{"Fetcher", func(t *testing.T, bot fetch.Bot) []byte {
			f, err := fetch.NewFetcher(bot)
			if err != nil {
				t.Fatal(err)
			}
			page, err := f.Get(context.Background(), "http://a.test/page")
			if err != nil {
				t.Fatal(err)
			}
			return page.Body
		}},
	}
	cases := 0
	for _, r := range reads {
		for _, n := range sizes {
			for _, known := range []bool{true, false} {
				t.Run(fmt.Sprintf("%s, %d bytes, length known %v", r.name, n, known), func(t *testing.T) {
					want := pageOf(n)
					got := r.read(t, fetch.Bot{UserAgent: testUA, Politeness: politeness.Policy{MinDelay: -1},
						Transport: memSite(want, known)})
					if !bytes.Equal(got, want) {
						t.Errorf("got %d bytes, want the %d sent (first difference at %d)", len(got), n, firstDiff(got, want))
					}
				})
				cases++
			}
		}
	}
	if cases != 56 {
		t.Fatalf("ran %d cases, want 56", cases)
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// A response held open holds memory in proportion to its page, not to the
// largest page the challenge detector could read: 200 open responses of
// 3,000 bytes each hold well under 16 KiB apiece (a 64 KiB buffer each
// before), with or without a Content-Length.
func TestSniff_MemoryProportionalToPage(t *testing.T) {
	for _, known := range []bool{true, false} {
		t.Run(fmt.Sprintf("length known %v", known), func(t *testing.T) {
			const open, size = 200, 3000
			page := pageOf(size)
			c := mustClient(t, fetch.Bot{UserAgent: testUA, Politeness: politeness.Policy{MinDelay: -1},
				Transport: memSite(page, known)})
			get := func(i int) *http.Response {
				resp, err := c.Get(fmt.Sprintf("http://h%d.test/", i))
				if err != nil {
					t.Fatal(err)
				}
				return resp
			}
			// Warm up: robots.txt of every host cached, pools filled.
			for i := range open {
				resp := get(i)
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			var before, after runtime.MemStats
			runtime.GC()
			runtime.GC() // empty the buffer pools too
			runtime.ReadMemStats(&before)
			held := make([]*http.Response, open)
			for i := range held {
				held[i] = get(i)
			}
			runtime.GC()
			runtime.ReadMemStats(&after)
			perResp := (int64(after.HeapAlloc) - int64(before.HeapAlloc)) / open
			for i, resp := range held {
				got, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if !bytes.Equal(got, page) {
					t.Fatalf("response %d: %d bytes, want the %d sent", i, len(got), size)
				}
			}
			if perResp > 16<<10 {
				t.Errorf("each open %d-byte response holds %d bytes of heap, want under 16 KiB", size, perResp)
			}
			t.Logf("%d bytes of heap per open response", perResp)
		})
	}
}

// A Fetcher hands over every body whole, whether its Content-Length is
// right, missing, too small or too large.
func TestFetcher_BodyWholeWhateverItsLength(t *testing.T) {
	cases := 0
	for _, n := range []int{0, 1, 3000, 4096, 65537, 300 << 10} {
		for _, claim := range []struct {
			name string
			cl   func(n int) int64
		}{
			{"right", func(n int) int64 { return int64(n) }},
			{"missing", func(int) int64 { return -1 }},
			{"too small", func(n int) int64 { return int64(n / 2) }},
			{"too large", func(n int) int64 { return int64(n)*2 + 10 }},
		} {
			t.Run(fmt.Sprintf("%d bytes, length %s", n, claim.name), func(t *testing.T) {
				want := pageOf(n)
				site := rtFunc(func(r *http.Request) (*http.Response, error) {
					if r.URL.Path == "/robots.txt" {
						return &http.Response{StatusCode: 404, Body: http.NoBody, Request: r, Header: http.Header{}}, nil
					}
					return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/html"}},
						Body: io.NopCloser(bytes.NewReader(want)), ContentLength: claim.cl(n), Request: r}, nil
				})
				f := mustFetcher(t, fetch.Bot{UserAgent: testUA, Politeness: politeness.Policy{MinDelay: -1}, Transport: site})
				p, err := f.Get(context.Background(), "http://a.test/page")
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(p.Body, want) {
					t.Errorf("got %d bytes, want the %d sent (first difference at %d)", len(p.Body), n, firstDiff(p.Body, want))
				}
			})
			cases++
		}
	}
	if cases != 24 {
		t.Fatalf("ran %d cases, want 24", cases)
	}
}

// A page sent without a Content-Length (chunked) but read whole by the
// challenge sniff costs no more allocations than one with a Content-Length:
// its buffer is sized once, not grown by copying.
func TestFetcher_UnknownLengthPageSizedOnce(t *testing.T) {
	allocs := map[bool]float64{}
	for _, known := range []bool{true, false} {
		f := mustFetcher(t, fetch.Bot{UserAgent: testUA, Politeness: politeness.Policy{MinDelay: -1},
			Transport: memSite(pageOf(3000), known)})
		get := func() {
			p, err := f.Get(context.Background(), "http://a.test/page")
			if err != nil || len(p.Body) != 3000 {
				t.Fatalf("Get: %v, %d bytes, want 3000", err, len(p.Body))
			}
		}
		get() // robots.txt
		allocs[known] = testing.AllocsPerRun(50, get)
	}
	if allocs[false] > allocs[true] {
		t.Errorf("a 3,000-byte page costs %v allocations without a Content-Length, %v with one; want no more",
			allocs[false], allocs[true])
	}
}

// A Content-Length sizes a Fetcher's page buffer up front only up to
// 256 KiB: a page of exactly 256 KiB is read into one allocation of its
// size (not grown by copying), while a larger claim is not trusted (a
// 3,000-byte body claiming 256 KiB + 1 allocates a few KiB, not 256). A
// small page of unknown length, read whole by the sniff, is copied once
// into a buffer of its size and the byte for the end, not regrown.
func TestFetcher_ContentLengthTrustedUpTo256KiB(t *testing.T) {
	tests := []struct {
		name     string
		body     int   // bytes sent
		claim    int64 // Content-Length
		maxBytes uint64
	}{
		{"256 KiB told", 256 << 10, 256 << 10, 256<<10 + 32<<10},
		{"claims 256 KiB + 1, sends 3000", 3000, 256<<10 + 1, 64 << 10},
		{"3000 bytes, length unknown", 3000, -1, 9000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := pageOf(tt.body)
			site := rtFunc(func(r *http.Request) (*http.Response, error) {
				if r.URL.Path == "/robots.txt" {
					return &http.Response{StatusCode: 404, Body: http.NoBody, Request: r, Header: http.Header{}}, nil
				}
				return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/html"}},
					Body: io.NopCloser(bytes.NewReader(want)), ContentLength: tt.claim, Request: r}, nil
			})
			f := mustFetcher(t, fetch.Bot{UserAgent: testUA, Politeness: politeness.Policy{MinDelay: -1}, Transport: site})
			get := func() {
				p, err := f.Get(context.Background(), "http://a.test/page")
				if err != nil || !bytes.Equal(p.Body, want) {
					t.Fatalf("Get: %v, %d bytes, want the %d sent", err, len(p.Body), tt.body)
				}
			}
			get() // robots.txt, pools filled
			const runs = 20
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			for range runs {
				get()
			}
			runtime.ReadMemStats(&after)
			if per := (after.TotalAlloc - before.TotalAlloc) / runs; per > tt.maxBytes {
				t.Errorf("each Get allocates %d bytes, want at most %d", per, tt.maxBytes)
			} else {
				t.Logf("%d bytes allocated per Get", per)
			}
		})
	}
}
