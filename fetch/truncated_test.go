package fetch_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/politeness"
)

// rawServer is a loopback HTTP/1.1 server written by hand, so that it can
// lie: /cl/N/M announces Content-Length N and sends M bytes, /chunked/N/M
// sends M of N bytes in chunks and ends with the last chunk only if M == N.
// Either way it then closes the connection. Every answer carries an ETag.
type rawServer struct {
	ln   net.Listener
	wg   sync.WaitGroup
	mu   sync.Mutex
	seen []http.Header // request headers, by arrival, robots.txt excluded
}

func newRawServer(t *testing.T) *rawServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &rawServer{ln: ln}
	s.wg.Add(1)
	go s.serve()
	t.Cleanup(func() { ln.Close(); s.wg.Wait() })
	return s
}

func (s *rawServer) serve() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer c.Close()
			s.answer(c)
		}()
	}
}

func (s *rawServer) answer(c net.Conn) {
	req, err := http.ReadRequest(bufio.NewReader(c))
	if err != nil {
		return
	}
	if req.URL.Path == "/robots.txt" {
		io.WriteString(c, "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
		return
	}
	s.mu.Lock()
	s.seen = append(s.seen, req.Header)
	s.mu.Unlock()
	var kind string
	var n, m int
	if _, err := fmt.Sscanf(strings.ReplaceAll(req.URL.Path, "/", " "), "%s %d %d", &kind, &n, &m); err != nil {
		io.WriteString(c, "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
		return
	}
	w := bufio.NewWriter(c)
	defer w.Flush()
	io.WriteString(w, "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nETag: \"v1\"\r\nConnection: close\r\n")
	body := strings.Repeat("x", m)
	if kind == "cl" {
		io.WriteString(w, "Content-Length: "+strconv.Itoa(n)+"\r\n\r\n"+body)
		return
	}
	io.WriteString(w, "Transfer-Encoding: chunked\r\n\r\n")
	for len(body) > 0 {
		k := min(len(body), 4096)
		fmt.Fprintf(w, "%x\r\n%s\r\n", k, body[:k])
		body = body[k:]
	}
	if m == n {
		io.WriteString(w, "0\r\n\r\n")
	}
}

func (s *rawServer) requests() []http.Header {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]http.Header(nil), s.seen...)
}

// A body shorter than its Content-Length, or a chunked body cut by the
// peer, is not ok, wherever the cut falls (inside the bytes sniffed for
// challenges, the first 64 KiB, or after them): the fetch is not counted
// as done (the URL is fetched again) and its validators are not kept (the
// refetch is unconditional, so a 304 cannot keep the cut copy). Bodies that
// arrive whole are ok, counted, and their validators kept.
func TestTruncatedBody_NotOK(t *testing.T) {
	const inside, beyond = 500, 100_000
	for _, tt := range []struct {
		kind   string
		n, got int
	}{
		{"cl", inside, inside / 2},
		{"cl", beyond, beyond / 2},
		{"cl", beyond, 64 << 10},
		{"cl", inside, 0},
		{"chunked", inside, inside / 2},
		{"chunked", beyond, beyond / 2},
		{"chunked", inside, 0},
		{"cl", inside, inside},
		{"cl", beyond, beyond},
		{"chunked", inside, inside},
		{"chunked", beyond, beyond},
	} {
		name := fmt.Sprintf("%s/%d/%d", tt.kind, tt.n, tt.got)
		t.Run(name, func(t *testing.T) {
			srv := newRawServer(t)
			vals := &fetch.MemoryValidators{}
			f := mustFetcher(t, fetch.Bot{UserAgent: testUA, Politeness: politeness.Policy{MinDelay: -1},
				AllowInternal: loopbackOnly, Once: true, Validators: vals})
			defer f.CloseIdleConnections()
			u := "http://" + srv.ln.Addr().String() + "/" + name
			cut := tt.got < tt.n
			p, err := f.Get(context.Background(), u)
			if len(srv.requests()) != 1 {
				t.Fatalf("%d requests, want 1", len(srv.requests()))
			}
			key, _ := fetch.Normalize(u)
			_, kept, _ := vals.Load(context.Background(), key)
			if !cut {
				if p.Outcome != fetch.OK || len(p.Body) != tt.n || !kept {
					t.Fatalf("whole body: %v (%v), %d bytes, validators kept %v", p.Outcome, err, len(p.Body), kept)
				}
				get(t, f, u, fetch.Duplicate)
				return
			}
			if p.Outcome == fetch.OK || !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Errorf("cut body: outcome %v, err %v; want not ok, with io.ErrUnexpectedEOF", p.Outcome, err)
			}
			if kept {
				t.Error("cut body: its validators were kept")
			}
			if p2, err := f.Get(context.Background(), u); p2.Outcome == fetch.Duplicate {
				t.Fatalf("cut body marked fetched: second Get %v", err)
			}
			reqs := srv.requests()
			if len(reqs) != 2 {
				t.Fatalf("%d requests after the second Get, want 2", len(reqs))
			}
			if v := reqs[1].Get("If-None-Match"); v != "" {
				t.Errorf("refetch of a cut body was conditional (If-None-Match %s)", v)
			}
		})
	}
}
