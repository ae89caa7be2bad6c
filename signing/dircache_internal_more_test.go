package signing

import (
	"context"
	"crypto/ed25519"
	"crypto/sha512"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/goodbot-go/goodbot/signing/signingtest"
)

// TestVerifier_CachesBounded: the agent-location memo and the cache of
// agents not yet seen to verify never hold more than MaxDirectories
// entries, whatever number of agents requests name; making room for a new
// agent drops one entry, not all, and keeps the newcomer.
func TestVerifier_CachesBounded(t *testing.T) {
	v := &Verifier{}
	for i := range MaxDirectories + 10 {
		if _, err := v.locate(fmt.Sprintf("https://a%d.test", i)); err != nil {
			t.Fatal(err)
		}
		if len(v.locs) > MaxDirectories {
			t.Fatalf("after %d agents the location memo holds %d, want at most %d", i+1, len(v.locs), MaxDirectories)
		}
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	for i := range MaxDirectories + 10 {
		id := fmt.Sprintf("https://p%d.test", i)
		e := &dirEntry{}
		v.admitProbation(id, e)
		want := min(i+1, MaxDirectories)
		if len(v.probation) != want || v.probation[id] != e {
			t.Fatalf("after %d agents: %d on probation (newcomer kept %v), want %d", i+1, len(v.probation), v.probation[id] == e, want)
		}
	}
}

// TestVerifier_AdmitRecordsUse: each verification by a known key set marks
// it used, so the one evicted to make room is the one verified longest ago,
// not the one admitted first.
func TestVerifier_AdmitRecordsUse(t *testing.T) {
	t0 := time.Unix(1_750_000_000, 0)
	v := &Verifier{}
	for i := range MaxDirectories {
		id := fmt.Sprint("k", i)
		e := &dirEntry{}
		v.probation = map[string]*dirEntry{id: e}
		v.admit(id, e, t0.Add(time.Duration(i)*time.Second))
	}
	v.admit("k0", v.known["k0"], t0.Add(time.Hour)) // k0 verifies again: k1 is now the oldest
	e := &dirEntry{}
	v.probation["new"] = e
	v.admit("new", e, t0.Add(2*time.Hour))
	_, k0 := v.known["k0"]
	_, k1 := v.known["k1"]
	if len(v.known) != MaxDirectories || !k0 || k1 || v.known["new"] != e {
		t.Errorf("after admitting one more: %d known, k0 kept %v, k1 kept %v, new known %v; want k1 evicted", len(v.known), k0, k1, v.known["new"] == e)
	}
}

// TestProvenKeys_DigestAndWindow: a directory signature proves its key only
// when the Content-Digest it covers carries the sha-256 digest of the body
// actually received (not that of another body, not a digest of another
// algorithm alone), and only within its created/expires window widened by
// the skew on both sides, boundaries included.
func TestProvenKeys_DigestAndWindow(t *testing.T) {
	key := signingtest.BothyKey()
	pub := key.Public().(ed25519.PublicKey)
	kid, _ := Thumbprint(pub)
	body := []byte(`{"keys":[]}`)
	now := time.Unix(1_750_000_000, 0)
	n := now.Unix()
	sum := sha512.Sum512(body)
	comps := []component{newComponent("@authority", "", true), newComponent("content-digest", "", false)}
	for _, tc := range []struct {
		name, digest     string
		created, expires int64
		proven           bool
	}{
		{"digest of the body", contentDigest(body), n, n + 300, true},
		// The skew (60 s) applies as to request signatures: up to it, not past it.
		{"created 60 s ahead, at the skew", contentDigest(body), n + 60, n + 300, true},
		{"created 61 s ahead", contentDigest(body), n + 61, n + 300, false},
		{"expired 60 s ago, at the skew", contentDigest(body), n - 300, n - 60, true},
		{"expired 61 s ago", contentDigest(body), n - 300, n - 61, false},
		{"digest of the body among others", "sha-512=:" + base64.StdEncoding.EncodeToString(sum[:]) + ":, " + contentDigest(body), n, n + 300, true},
		{"digest of another body", contentDigest([]byte(`{"keys": []}`)), n, n + 300, false},
		{"sha-512 only", "sha-512=:" + base64.StdEncoding.EncodeToString(sum[:]) + ":", n, n + 300, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{"Content-Digest": {tc.digest}}
			params := []param{{"created", tc.created}, {"expires", tc.expires}, {"keyid", kid}, {"tag", TagDirectory}}
			if got := provenBy(t, key, h, comps, params, body, KeySet{kid: pub}, now); (got == 1) != tc.proven {
				t.Fatalf("proven keys %d, want proven %v", got, tc.proven)
			}
		})
	}
}

// TestNonceCache_EarliestAfterSweep: after a sweep the cache knows when its
// earliest remaining entry ends, so a full cache makes room from that
// instant on (not later).
func TestNonceCache_EarliestAfterSweep(t *testing.T) {
	t0 := time.Unix(1_750_000_000, 0)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	type step struct {
		key        string
		until, now int
		full       bool
	}
	for _, tc := range []struct {
		name  string
		max   int
		steps []step
	}{
		{"one left after the sweep", 2, []step{{"a", 10, 0, false}, {"b", 60, 0, false}, {"c", 100, 10, false}, {"d", 100, 60, false}}},
		{"two left after the sweep", 3, []step{{"a", 10, 0, false}, {"b", 60, 0, false}, {"c", 30, 0, false}, {"d", 100, 10, false}, {"e", 100, 30, false}}},
		// e, recorded after the sweep, ends before every entry the sweep
		// kept: from its end on a full cache has room again.
		{"shorter entry after the sweep", 3, []step{{"a", 10, 0, false}, {"b", 10, 0, false}, {"c", 100, 0, false}, {"d", 200, 20, false}, {"e", 30, 20, false}, {"f", 300, 40, false}, {"g", 300, 40, true}}},
	} {
		c := &NonceCache{Max: tc.max}
		for i, s := range tc.steps {
			if seen, full := c.record(s.key, at(s.until), at(s.now)); seen || full != s.full {
				t.Errorf("%s: step %d (%s until %d at %d): seen, full = %v, %v; want false, %v", tc.name, i, s.key, s.until, s.now, seen, full, s.full)
			}
		}
	}
}

// TestNonceCache_ZeroValueCapacity: the zero NonceCache holds
// DefaultMaxNonces live nonces and no more.
func TestNonceCache_ZeroValueCapacity(t *testing.T) {
	t0 := time.Unix(1_750_000_000, 0)
	c := &NonceCache{}
	for i := range DefaultMaxNonces {
		if _, full := c.record(fmt.Sprint(i), t0.Add(time.Minute), t0); full {
			t.Fatalf("full after %d nonces, want room for %d", i, DefaultMaxNonces)
		}
	}
	if _, full := c.record("one more", t0.Add(time.Minute), t0); !full {
		t.Fatalf("room for more than %d live nonces", DefaultMaxNonces)
	}
}

// fakeConn is a connection that only knows its remote address and whether
// it was closed.
type fakeConn struct {
	net.Conn
	remote net.Addr
	closed bool
}

func (c *fakeConn) RemoteAddr() net.Addr { return c.remote }
func (c *fakeConn) Close() error         { c.closed = true; return nil }

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "pipe" }

// TestDialGuard_OwnDial: with a transport's own dial functions (plain and
// TLS), an internal IP address is refused before dialling, and a connection
// whose remote end is internal or not an IP address at all is refused and
// closed before a byte is sent; an external one is kept.
func TestDialGuard_OwnDial(t *testing.T) {
	for _, tc := range []struct {
		name, addr string
		remote     net.Addr
		dials      int
		ok         bool
	}{
		{"internal IP, refused before dialling", "127.0.0.1:443", nil, 0, false},
		{"name reaching loopback", "bot.test:443", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 443}, 1, false},
		{"name reaching no IP address", "bot.test:443", pipeAddr{}, 1, false},
		{"name reaching a public address", "bot.test:443", &net.TCPAddr{IP: net.IPv4(93, 184, 215, 14), Port: 443}, 1, true},
	} {
		for _, tls := range []bool{false, true} {
			dials := 0
			var conn *fakeConn
			dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
				dials++
				conn = &fakeConn{remote: tc.remote}
				return conn, nil
			}
			tr := &http.Transport{DialContext: dial}
			if tls {
				tr = &http.Transport{DialTLSContext: dial}
			}
			newDialGuard(nil).guardTransport(tr)
			guarded := tr.DialContext
			if tls {
				guarded = tr.DialTLSContext
			}
			c, err := guarded(t.Context(), "tcp", tc.addr)
			if dials != tc.dials || (err == nil) != tc.ok || (!tc.ok && !errors.Is(err, ErrAddressRefused)) {
				t.Errorf("%s (TLS dial %v): %d dials, %v; want %d dials, ok %v", tc.name, tls, dials, err, tc.dials, tc.ok)
				continue
			}
			if conn != nil && conn.closed == tc.ok {
				t.Errorf("%s (TLS dial %v): connection closed %v, want %v", tc.name, tls, conn.closed, !tc.ok)
			}
			if tc.ok && c != conn {
				t.Errorf("%s (TLS dial %v): got another connection than the one dialled", tc.name, tls)
			}
		}
	}
}

// TestVerify_PlainHTTPComponents: a request that came without TLS has the
// scheme http (RFC 9421 §2.2.4 and §2.2.2), so signatures over @scheme and
// @target-uri made for http verify; a covered field the request lacks is a
// components failure, not a forged signature.
func TestVerify_PlainHTTPComponents(t *testing.T) {
	key := signingtest.BothyKey()
	kid, _ := Thumbprint(key.Public().(ed25519.PublicKey))
	n := time.Now().Unix()
	params := []param{{"created", n}, {"expires", n + 60}, {"keyid", kid}, {"tag", TagWebBotAuth}}
	agent := newComponent("signature-agent", "", false)
	for _, tc := range []struct {
		name  string
		comps []component
		after func(r *http.Request)
		want  Reason
	}{
		{"@target-uri", []component{newComponent("@target-uri", "", false), agent}, nil, ""},
		{"@scheme", []component{newComponent("@authority", "", false), newComponent("@scheme", "", false), agent}, nil, ""},
		{"covered field gone", []component{newComponent("@authority", "", false), newComponent("x-covered", "", false), agent},
			func(r *http.Request) { r.Header.Del("X-Covered") }, ReasonComponents},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, "http://example.com/x?y=1", nil)
			req.Header.Set("Signature-Agent", `"https://bothy.tools"`)
			req.Header.Set("X-Covered", "1")
			signCustom(t, req, key, tc.comps, params)
			if tc.after != nil {
				tc.after(req)
			}
			res, err := (&Verifier{Keys: KeySet{kid: key.Public().(ed25519.PublicKey)}}).Verify(req)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Verify = %+v, %v; want verified", res, err)
				}
				return
			}
			var ve *VerifyError
			if !errors.As(err, &ve) || ve.Reason != tc.want {
				t.Fatalf("Verify = %+v, %v; want reason %s", res, err, tc.want)
			}
		})
	}
}
