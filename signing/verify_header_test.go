package signing_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/goodbot-go/goodbot/signing"
	"github.com/goodbot-go/goodbot/signing/signingtest"
)

// A key set's answer is read with its header bounded (64 KiB unless the
// client's transport sets its own bound): a directory whose answer carries
// 32 KiB of header fields verifies, one with 1 MiB of them is a failed
// fetch (net/http's own bound would have read 10 MiB), and a transport
// with a bound of its own keeps it.
func TestVerifier_DirectoryHeaderBounded(t *testing.T) {
	key := signingtest.BothyKey()
	dir := record(&signing.Directory{Keys: signers(key)})
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var size int
		fmt.Sscanf(r.Host, "h%d.", &size)
		for i := 0; i*64 < size; i++ {
			w.Header().Set(fmt.Sprintf("X-F%08d", i), strings.Repeat("a", 48))
		}
		dir.ServeHTTP(w, r)
	}))
	defer srv.Close()
	own := srv.Client().Transport.(*http.Transport).Clone()
	own.MaxResponseHeaderBytes = 4 << 20
	for _, tt := range []struct {
		name     string
		size     int
		client   *http.Client
		verifies bool
	}{
		{"32 KiB", 32 << 10, srv.Client(), true},
		{"1 MiB", 1 << 20, srv.Client(), false},
		{"1 MiB, the transport's own 4 MiB bound", 1 << 20, &http.Client{Transport: own}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			// httptest's client takes example.com to the server; the host
			// name tells the handler how much header to send.
			agent := fmt.Sprintf("https://h%d.example.com", tt.size)
			n := dir.total()
			v := &signing.Verifier{Client: tt.client, AllowInternal: loopback}
			res, err := v.Verify(signedBy(t, key, agent, signing.Dictionary))
			if dir.total() != n+1 {
				t.Fatalf("the directory was asked %d times, want 1", dir.total()-n)
			}
			switch {
			case tt.verifies && err != nil:
				t.Fatalf("Verify: %v", err)
			case tt.verifies && res.Agent == "":
				t.Fatalf("verified without an agent: %+v", res)
			case !tt.verifies && (err == nil || signing.OutcomeOf(err) != signing.Unverified):
				t.Fatalf("Verify: %v, want unverified", err)
			case !tt.verifies && !strings.Contains(err.Error(), "exceeded"):
				t.Errorf("Verify: %v, want the header bound as the cause", err)
			}
			if errors.Is(err, signing.ErrAddressRefused) {
				t.Errorf("refused the address: %v", err)
			}
		})
	}
}

// The zero Client starts from net/http's default transport settings, also
// when a program replaced http.DefaultTransport: a wrapper there is not
// used (no panic, the guard still refuses loopback), and a customised
// *http.Transport there is cloned with the header bound added.
func TestVerifier_ZeroClientDefaultTransport(t *testing.T) {
	key := signingtest.BothyKey()
	dir := record(&signing.Directory{Keys: signers(key)})
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i*64 < 1<<20; i++ {
			w.Header().Set(fmt.Sprintf("X-F%08d", i), strings.Repeat("a", 48))
		}
		dir.ServeHTTP(w, r)
	}))
	defer srv.Close()
	orig := http.DefaultTransport
	defer func() { http.DefaultTransport = orig }()

	http.DefaultTransport = struct{ http.RoundTripper }{orig}
	v := &signing.Verifier{}
	if _, err := v.Verify(signedBy(t, key, srv.URL, signing.Dictionary)); !errors.Is(err, signing.ErrAddressRefused) {
		t.Errorf("DefaultTransport wrapped: %v, want ErrAddressRefused", err)
	}
	if dir.total() != 0 {
		t.Fatalf("the loopback directory was reached %d times", dir.total())
	}

	http.DefaultTransport = srv.Client().Transport.(*http.Transport).Clone() // trusts the server's certificate
	v = &signing.Verifier{AllowInternal: loopback}
	_, err := v.Verify(signedBy(t, key, srv.URL, signing.Dictionary))
	if dir.total() != 1 {
		t.Fatalf("the directory was asked %d times, want 1", dir.total())
	}
	if err == nil || !strings.Contains(err.Error(), "exceeded") {
		t.Errorf("1 MiB of header through the zero Client: %v, want the header bound as the cause", err)
	}
}
