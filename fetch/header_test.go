package fetch_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/politeness"
)

// floodServer answers on a raw TCP listener, so that it can send a header
// of any size and see when the client stops reading: GET /h/N answers with
// about N bytes of header fields, then a two-byte body; /robots.txt of a
// host named flood-robots.test the same with 64 MiB, of any other host a
// 404.
type floodServer struct {
	ln   net.Listener
	port string

	mu   sync.Mutex
	sent map[string]floodSend // by host and path
	done map[string]chan struct{}
}

type floodSend struct {
	wrote int64 // header bytes written
	cut   bool  // a write failed: the client closed the connection
}

func newFloodServer(t *testing.T) *floodServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &floodServer{ln: ln, sent: map[string]floodSend{}, done: map[string]chan struct{}{}}
	_, s.port, _ = net.SplitHostPort(ln.Addr().String())
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() { s.serve(c) })
		}
	})
	t.Cleanup(func() {
		ln.Close()
		wg.Wait()
	})
	return s
}

func (s *floodServer) serve(c net.Conn) {
	defer c.Close()
	br := bufio.NewReader(c)
	for {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		host, _, _ := net.SplitHostPort(req.Host)
		var size int64 = -1
		switch {
		case req.URL.Path == "/robots.txt" && host == "flood-robots.test":
			size = 64 << 20
		case strings.HasPrefix(req.URL.Path, "/h/"):
			size, _ = strconv.ParseInt(strings.TrimPrefix(req.URL.Path, "/h/"), 10, 64)
		}
		if size < 0 {
			if _, err := fmt.Fprint(c, "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"); err != nil {
				return
			}
			continue
		}
		sent := s.flood(c, size)
		s.mu.Lock()
		s.sent[host+req.URL.Path] = sent
		close(s.doneCh(host + req.URL.Path))
		s.mu.Unlock()
		if sent.cut {
			return
		}
	}
}

// flood writes an answer with size bytes of header fields of 64 bytes each.
// It allocates nothing per field: the server shares the test's process, and
// the test measures the client's allocations with the process's counters,
// while the server may still be writing into the socket's buffers.
func (s *floodServer) flood(c net.Conn, size int64) floodSend {
	w := bufio.NewWriterSize(c, 64<<10)
	var sent floodSend
	write := func(b []byte) bool {
		n, err := w.Write(b)
		sent.wrote += int64(n)
		if err != nil {
			sent.cut = true
		}
		return err == nil
	}
	if !write([]byte("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n")) {
		return sent
	}
	line := []byte("X-F00000000: " + strings.Repeat("a", 48) + "\r\n")
	for i := 0; sent.wrote < size; i++ {
		for j, n := 10, i; j >= 3; j, n = j-1, n/10 { // the field's eight digits: X-F%08d
			line[j] = byte('0' + n%10)
		}
		if !write(line) {
			return sent
		}
	}
	if !write([]byte("Content-Length: 2\r\n\r\nok")) || w.Flush() != nil {
		sent.cut = true
	}
	return sent
}

// doneCh is closed once the answer to hostPath is written or cut; s.mu
// is held.
func (s *floodServer) doneCh(hostPath string) chan struct{} {
	ch := s.done[hostPath]
	if ch == nil {
		ch = make(chan struct{})
		s.done[hostPath] = ch
	}
	return ch
}

// sentFor waits for the answer to hostPath to be written or cut, and
// returns what was sent (ok false if it was not asked for within 10 s).
func (s *floodServer) sentFor(hostPath string) (floodSend, bool) {
	s.mu.Lock()
	ch := s.doneCh(hostPath)
	s.mu.Unlock()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		return floodSend{}, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sent[hostPath], true
}

// asked reports whether hostPath was asked for (and answered) so far.
func (s *floodServer) asked(hostPath string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.sent[hostPath]
	return ok
}

// An answer's header is read up to Limits.MaxHeaderBytes (256 KiB by
// default, the bound a browser keeps), over the default base transport: a
// header under the bound is a page, one over it ends the fetch as
// TooLarge with ErrHeaderTooLarge, no status, and the connection closed
// (the server's writes fail long before its 64 MiB end) at a cost to the
// fetch of about the bound, not of the header sent. A negative limit is
// net/http's own (10 MiB).
func TestLimits_HeaderBoundedByDefault(t *testing.T) {
	srv := newFloodServer(t)
	for i, tt := range []struct {
		name  string
		limit int64
		size  int64
		want  fetch.Outcome
	}{
		{"default, 200 KiB", 0, 200 << 10, fetch.OK},
		{"default, 1 MiB", 0, 1 << 20, fetch.TooLarge},
		{"default, 64 MiB", 0, 64 << 20, fetch.TooLarge},
		{"16 KiB, 8 KiB", 16 << 10, 8 << 10, fetch.OK},
		{"16 KiB, 32 KiB", 16 << 10, 32 << 10, fetch.TooLarge},
		{"negative, 1 MiB", -1, 1 << 20, fetch.OK},
		{"negative, 64 MiB", -1, 64 << 20, fetch.TooLarge},
	} {
		t.Run(tt.name, func(t *testing.T) {
			host := fmt.Sprintf("h%d.test", i) // a host of its own: the server keeps what it sent by host and path
			bot := fetch.Bot{UserAgent: testUA, Politeness: politeness.Policy{MinDelay: -1}, AllowInternal: loopbackOnly,
				Limits: fetch.Limits{MaxHeaderBytes: tt.limit}}
			f, tr, err := fetch.NewFetcherWithLookup(bot, map[string]string{host: "127.0.0.1"}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer tr.CloseIdleConnections()
			path := "/h/" + strconv.FormatInt(tt.size, 10)
			if _, err := f.Get(context.Background(), "http://"+host+":"+srv.port+"/robots.txt"); err != nil {
				t.Fatal(err) // robots.txt read before the measure
			}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			p, err := f.Get(context.Background(), "http://"+host+":"+srv.port+path)
			runtime.ReadMemStats(&after)
			sent, ok := srv.sentFor(host + path)
			if !ok || sent.wrote == 0 {
				t.Fatalf("the server answered nothing for %s", path)
			}
			if p.Outcome != tt.want {
				t.Fatalf("outcome %v (err %v), want %v", p.Outcome, err, tt.want)
			}
			if tt.want == fetch.OK {
				if string(p.Body) != "ok" || p.Header.Get("X-F00000000") == "" || sent.cut {
					t.Errorf("body %q, first field %q, cut %v: the answer was not read whole", p.Body, p.Header.Get("X-F00000000"), sent.cut)
				}
				return
			}
			if !errors.Is(err, fetch.ErrTooLarge) || !errors.Is(err, fetch.ErrHeaderTooLarge) || fetch.OutcomeOf(err) != fetch.TooLarge {
				t.Errorf("err %v: want TooLarge with ErrHeaderTooLarge", err)
			}
			if p.Status != 0 || p.Body != nil || p.Truncated {
				t.Errorf("status %d, %d body bytes, truncated %v: nothing of the answer should be kept", p.Status, len(p.Body), p.Truncated)
			}
			if tt.size == 64<<20 && !sent.cut {
				t.Errorf("the server wrote all %d bytes: the connection was not closed at the bound", sent.wrote)
			}
			// Reading 256 KiB of header fields into a map allocates about
			// 1.1 MiB (measured, with or without -race); with net/http's own
			// 10 MiB bound (the negative case) a 64 MiB header costs 37 MiB.
			// The counters are the process's: the flood server allocates
			// nothing per field, so they count the client's work.
			if got := after.TotalAlloc - before.TotalAlloc; tt.limit == 0 && got > 5<<20 {
				t.Errorf("the fetch allocated %.1f MiB for a header cut at 256 KiB", float64(got)/(1<<20))
			}
		})
	}
}

// A robots.txt whose answer passes the header bound counts as unreachable
// (RFC 9309: the site may not be crawled): the page is not requested.
func TestLimits_RobotsHeaderFloodIsUnreachable(t *testing.T) {
	srv := newFloodServer(t)
	bot := fetch.Bot{UserAgent: testUA, Politeness: politeness.Policy{MinDelay: -1}, AllowInternal: loopbackOnly}
	f, tr, err := fetch.NewFetcherWithLookup(bot, map[string]string{"flood-robots.test": "127.0.0.1"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.CloseIdleConnections()
	p, err := f.Get(context.Background(), "http://flood-robots.test:"+srv.port+"/h/10")
	robots, ok := srv.sentFor("flood-robots.test/robots.txt")
	if !ok || robots.wrote == 0 {
		t.Fatal("robots.txt was not requested")
	}
	if p.Outcome != fetch.Unreachable || !errors.Is(err, fetch.ErrUnreachable) {
		t.Errorf("outcome %v, err %v: want unreachable", p.Outcome, err)
	}
	if !robots.cut {
		t.Errorf("the server wrote all %d bytes of robots.txt's header", robots.wrote)
	}
	if srv.asked("flood-robots.test/h/10") {
		t.Error("the page was requested although robots.txt could not be read")
	}
}

// Over HTTP/2 the bound is the header list size the transport advertises:
// a header list under it is read; one far over it ends the fetch (net/http
// closes the connection: TooLarge, or a protocol error of the connection,
// Unreachable, when the list's frames pass the bound by more than twice
// what was left).
func TestLimits_HeaderBoundHTTP2(t *testing.T) {
	var h2 atomic.Int32
	header := func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor == 2 {
			h2.Add(1)
		}
		size, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/h/"))
		for i := 0; i*64 < size; i++ {
			w.Header().Set(fmt.Sprintf("X-F%08d", i), strings.Repeat("a", 48))
		}
		fmt.Fprint(w, "ok")
	}
	for i, tt := range []struct {
		limit int64
		size  int
		want  []fetch.Outcome
	}{
		{0, 100 << 10, []fetch.Outcome{fetch.OK}},
		{0, 4 << 20, []fetch.Outcome{fetch.TooLarge, fetch.Unreachable}},
		{16 << 10, 24 << 10, []fetch.Outcome{fetch.TooLarge}}, // past the bound within its last frame
	} {
		bot := fetch.Bot{UserAgent: testUA, Politeness: politeness.Policy{MinDelay: -1}, AllowInternal: loopbackOnly,
			Limits: fetch.Limits{MaxHeaderBytes: tt.limit}}
		srv, f := h2Fetcher(t, bot, header)
		p, err := f.Get(context.Background(), srv.URL+"/h/"+strconv.Itoa(tt.size))
		if int(h2.Load()) != i+1 {
			t.Fatalf("%d bytes: %d HTTP/2 requests so far, want %d", tt.size, h2.Load(), i+1)
		}
		if !slices.Contains(tt.want, p.Outcome) {
			t.Errorf("limit %d, %d bytes: outcome %v (err %v), want one of %v", tt.limit, tt.size, p.Outcome, err, tt.want)
			continue
		}
		switch p.Outcome {
		case fetch.OK:
			if p.Header.Get("X-F00000000") == "" {
				t.Errorf("%d bytes: the page's header was not read", tt.size)
			}
		case fetch.TooLarge:
			if !errors.Is(err, fetch.ErrHeaderTooLarge) {
				t.Errorf("%d bytes: err %v, want ErrHeaderTooLarge", tt.size, err)
			}
		}
	}
}

// roundTripWrapper stands for a program's wrapper of http.DefaultTransport
// (tracing, metrics).
type roundTripWrapper struct{ http.RoundTripper }

// A program that replaced http.DefaultTransport with a wrapper still gets
// the default base transport, bounded and guarded: no panic, the page
// fetched, an internal address the bot was not told it may reach refused.
func TestBaseTransport_DefaultTransportReplaced(t *testing.T) {
	orig := http.DefaultTransport
	http.DefaultTransport = roundTripWrapper{orig}
	defer func() { http.DefaultTransport = orig }()
	srv := newFloodServer(t)
	bot := fetch.Bot{UserAgent: testUA, Politeness: politeness.Policy{MinDelay: -1}, AllowInternal: loopbackOnly}
	f, tr, err := fetch.NewFetcherWithLookup(bot, map[string]string{"a.test": "127.0.0.1"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.CloseIdleConnections()
	if tr.MaxResponseHeaderBytes != fetch.DefaultMaxHeaderBytes || tr.MaxConnsPerHost != 1 {
		t.Errorf("base transport's header bound %d, conns per host %d", tr.MaxResponseHeaderBytes, tr.MaxConnsPerHost)
	}
	if p, err := f.Get(context.Background(), "http://a.test:"+srv.port+"/h/100"); err != nil || string(p.Body) != "ok" {
		t.Fatalf("Get: %v, body %q", err, p.Body)
	}
	bot.AllowInternal = nil
	strict, err := fetch.NewFetcher(bot)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := strict.Get(context.Background(), "http://127.0.0.1:"+srv.port+"/h/100"); !errors.Is(err, fetch.ErrInternalAddress) {
		t.Errorf("loopback without AllowInternal: %v, want ErrInternalAddress", err)
	}
}
