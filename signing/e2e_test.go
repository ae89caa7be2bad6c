package signing_test

import (
	"crypto"
	"crypto/ed25519"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/goodbot-go/goodbot/signing"
	"github.com/goodbot-go/goodbot/signing/signingtest"
)

var forms = []signing.AgentForm{signing.BareURL, signing.QuotedString, signing.Dictionary}

// TestEndToEnd_B2_B12_D2_Loopback: a client signing through Transport
// against verifying httptest servers on loopback, the key fetched from a
// real (TLS) directory server, through a redirect from one host to another,
// for each Signature-Agent form. The WAF rule of B12 (agent header contains
// the bot's domain) is checked on every request as well.
func TestEndToEnd_B2_B12_D2_Loopback(t *testing.T) {
	key := signingtest.BothyKey()
	dirSrv := httptest.NewTLSServer(http.NotFoundHandler())
	defer dirSrv.Close()
	dirSrv.Config.Handler = pathHandler(signing.DirectoryPath, &signing.Directory{Keys: signers(key, signingtest.NextKey())})

	for _, form := range forms {
		t.Run(form.String(), func(t *testing.T) {
			v := &signing.Verifier{Client: dirSrv.Client(), Agents: []string{dirSrv.URL}, Mode: signing.Enforce, AllowInternal: loopback}
			var seen []string
			site := func(next http.Handler) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.Header.Get("Signature") != "" && !strings.Contains(r.Header.Get("Signature-Agent"), strings.TrimPrefix(dirSrv.URL, "https://")) {
						t.Errorf("B12: Signature-Agent %q lacks the agent's domain", r.Header.Get("Signature-Agent"))
					}
					v.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
						res, _ := signing.ResultFromContext(r.Context())
						seen = append(seen, r.Host+" "+res.Form.String())
						next.ServeHTTP(w, r)
					})).ServeHTTP(w, r)
				})
			}
			b := httptest.NewServer(site(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.WriteString(w, "end")
			})))
			defer b.Close()
			a := httptest.NewServer(site(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, b.URL+"/end", http.StatusFound)
			})))
			defer a.Close()

			base := &http.Transport{}
			defer base.CloseIdleConnections()
			client := &http.Client{Transport: &signing.Transport{Base: base, Signer: &signing.Signer{
				Key: key, Agent: dirSrv.URL, Form: form, Nonce: true,
			}}}
			resp, err := client.Get(a.URL + "/start")
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || string(body) != "end" {
				t.Fatalf("status %d body %q", resp.StatusCode, body)
			}
			if len(seen) != 2 {
				t.Fatalf("verified hops %v, want 2", seen)
			}
			// Unsigned requests are turned away by the same servers.
			resp, err = (&http.Client{Transport: base}).Get(b.URL)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized {
				t.Fatalf("unsigned request got %d", resp.StatusCode)
			}
		})
	}
}

// loopback lets a test's Verifier fetch from httptest servers.
var loopback = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}

func pathHandler(path string, h http.Handler) http.Handler {
	mux := http.NewServeMux()
	mux.Handle(path, h)
	return mux
}

// TestLongWait_B2_SignedAtSendTime: in fake time, a request that waits two
// hours (a politeness queue) before it is sent still verifies, because
// Transport signs when it sends; a request signed before the wait does not.
// The verifier refetches the directory whose max-age ran out meanwhile.
func TestLongWait_B2_SignedAtSendTime(t *testing.T) {
	for _, form := range forms {
		t.Run(form.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				mem := newMem()
				key := signingtest.BothyKey()
				mem.handle("bothy.tools", pathHandler(signing.DirectoryPath, &signing.Directory{Keys: signers(key)}))
				v := &signing.Verifier{Client: &http.Client{Transport: mem}, Mode: signing.Enforce}
				mem.handle("site.example", v.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					io.WriteString(w, "ok")
				})))
				signer := &signing.Signer{Key: key, Agent: "https://bothy.tools", Form: form}
				client := &http.Client{Transport: &signing.Transport{Base: mem, Signer: signer}}

				get := func(c *http.Client, req *http.Request) int {
					resp, err := c.Do(req)
					if err != nil {
						t.Fatal(err)
					}
					resp.Body.Close()
					return resp.StatusCode
				}
				req, _ := http.NewRequest(http.MethodGet, "https://site.example/page", nil)
				if code := get(client, req); code != 200 {
					t.Fatalf("first request: %d", code)
				}
				presigned, _ := http.NewRequest(http.MethodGet, "https://site.example/page", nil)
				if err := signer.Sign(presigned); err != nil {
					t.Fatal(err)
				}
				time.Sleep(2 * time.Hour) // the politeness wait
				req, _ = http.NewRequest(http.MethodGet, "https://site.example/page", nil)
				if code := get(client, req); code != 200 {
					t.Fatalf("request after the wait: %d", code)
				}
				if n := mem.count("bothy.tools"); n != 2 {
					t.Errorf("directory fetched %d times, want 2 (max-age 1h passed)", n)
				}
				if code := get(&http.Client{Transport: mem}, presigned); code != http.StatusUnauthorized {
					t.Fatalf("signature made before the wait: %d, want 401", code)
				}
				_, err := v.Verify(httptest.NewRequest(http.MethodGet, "https://site.example/page", nil))
				if !errors.Is(err, signing.ErrUnverified) {
					t.Fatal(err)
				}
			})
		})
	}
}

// TestDirectoryCache: max-age honoured, a failed refresh keeps known keys, a
// failed fetch or unknown key is negatively cached for at most 5 minutes.
func TestDirectoryCache(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := newMem()
		key := signingtest.BothyKey()
		dir := &signing.Directory{Keys: signers(key), MaxAge: 10 * time.Minute}
		var down bool
		mem.handle("bothy.tools", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if down {
				http.Error(w, "down", http.StatusServiceUnavailable)
				return
			}
			dir.ServeHTTP(w, r)
		}))
		v := &signing.Verifier{Client: &http.Client{Transport: mem}, NegativeTTL: time.Hour}
		signer := &signing.Signer{Key: key, Agent: "https://bothy.tools"}
		verify := func(s *signing.Signer) error {
			req := httptest.NewRequest(http.MethodGet, "https://site.example/", nil)
			if err := s.Sign(req); err != nil {
				t.Fatal(err)
			}
			_, err := v.Verify(req)
			return err
		}
		fetches := func() int64 { return mem.count("bothy.tools") }
		must := func(err error) {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
		}
		must(verify(signer))
		must(verify(signer))
		if fetches() != 1 {
			t.Fatalf("fetches %d, want 1 (cached)", fetches())
		}
		time.Sleep(10*time.Minute + time.Second)
		must(verify(signer))
		if fetches() != 2 {
			t.Fatalf("fetches %d, want 2 (max-age over)", fetches())
		}

		// Directory down after expiry: the known key keeps verifying.
		down = true
		time.Sleep(10*time.Minute + time.Second)
		must(verify(signer))
		must(verify(signer))
		if fetches() != 3 {
			t.Fatalf("fetches %d, want 3 (one failed refresh, then negative cache)", fetches())
		}
		// Unknown key: negative cache, capped at 5 minutes despite NegativeTTL 1h.
		impostor := &signing.Signer{Key: signingtest.OtherKey(), Agent: "https://bothy.tools"}
		down = false
		time.Sleep(5*time.Minute + time.Second)
		err := verify(impostor)
		var ve *signing.VerifyError
		if !errors.As(err, &ve) || ve.Reason != signing.ReasonUnknownKey {
			t.Fatalf("impostor: %v", err)
		}
		n := fetches()
		for range 3 {
			if err := verify(impostor); !errors.Is(err, signing.ErrUnverified) {
				t.Fatal(err)
			}
		}
		if fetches() != n {
			t.Fatalf("unknown key refetched within the negative TTL")
		}
		time.Sleep(5*time.Minute + time.Second)
		verify(impostor)
		if fetches() != n+1 {
			t.Fatalf("fetches %d, want %d (negative cache at most 5 min)", fetches(), n+1)
		}

		// Unreachable directory of a new agent: unverified, not invalid.
		stranger := &signing.Signer{Key: key, Agent: "https://nowhere.example"}
		err = verify(stranger)
		if !errors.As(err, &ve) || !ve.Unverified() {
			t.Fatalf("unreachable directory: %v", err)
		}
	})
}

// TestDirectory_D2_Proof: keys are used only when the directory response is
// signed by them for the authority it came from (unless the verifier is told
// otherwise).
func TestDirectory_D2_Proof(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		key := signingtest.DirectoriesKey()
		dir := &signing.Directory{Keys: signers(key)}
		body, err := dir.JWKS()
		if err != nil {
			t.Fatal(err)
		}
		// Served without signatures.
		unsigned := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", signing.DirectoryMediaType)
			w.Write(body)
		})
		// A copy of the real, signed response replayed by another host.
		rec := httptest.NewRecorder()
		dir.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "https://directories.prosvita.io"+signing.DirectoryPath, nil))
		replayed := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			for k, vv := range rec.Header() {
				w.Header()[k] = vv
			}
			w.Write(rec.Body.Bytes())
		})
		for _, tc := range []struct {
			name    string
			h       http.Handler
			lenient bool
			ok      bool
		}{
			{"signed", dir, false, true},
			{"unsigned", unsigned, false, false},
			{"unsigned lenient", unsigned, true, true},
			{"replayed on another authority", replayed, false, false},
		} {
			mem := newMem()
			mem.handle("mirror.example", tc.h)
			v := &signing.Verifier{Client: &http.Client{Transport: mem}, AcceptUnsignedDirectory: tc.lenient}
			s := &signing.Signer{Key: key, Agent: "https://mirror.example", Form: signing.QuotedString}
			req := httptest.NewRequest(http.MethodGet, "https://site.example/", nil)
			if err := s.Sign(req); err != nil {
				t.Fatal(err)
			}
			_, err := v.Verify(req)
			if (err == nil) != tc.ok {
				t.Errorf("%s: Verify err = %v, want ok=%v", tc.name, err, tc.ok)
			}
		}
	})
}

// TestDirectory_D2_Served: media type, Cache-Control, Content-Digest, one
// signature per key, kid = thumbprint, and no private member anywhere.
func TestDirectory_D2_Served(t *testing.T) {
	keys := signers(signingtest.BothyKey(), signingtest.NextKey())
	d := &signing.Directory{Keys: keys}
	rec := httptest.NewRecorder()
	d.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "https://bothy.tools"+signing.DirectoryPath, nil))
	h := rec.Header()
	if rec.Code != 200 || h.Get("Content-Type") != "application/http-message-signatures-directory+json" {
		t.Fatalf("code %d type %q", rec.Code, h.Get("Content-Type"))
	}
	if h.Get("Cache-Control") != "public, max-age=3600" || !strings.HasPrefix(h.Get("Content-Digest"), "sha-256=:") {
		t.Errorf("headers %v", h)
	}
	in := h.Get("Signature-Input")
	if strings.Count(in, `tag="http-message-signatures-directory"`) != 2 || strings.Count(in, `("@authority";req "content-digest")`) != 2 {
		t.Errorf("Signature-Input %s", in)
	}
	for _, k := range keys {
		kid, _ := signing.Thumbprint(k.Public().(ed25519.PublicKey))
		if !strings.Contains(rec.Body.String(), `"kid":"`+kid+`"`) || !strings.Contains(in, `keyid="`+kid+`"`) {
			t.Errorf("kid %s missing", kid)
		}
	}
	rec = httptest.NewRecorder()
	d.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, signing.DirectoryPath, nil))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST: %d", rec.Code)
	}
}

// TestConcurrent: many requests verified at once share one directory fetch,
// and one Signer signs from many goroutines (run with -race).
func TestConcurrent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := newMem()
		key := signingtest.BothyKey()
		mem.handle("bothy.tools", &signing.Directory{Keys: signers(key)})
		v := &signing.Verifier{Client: &http.Client{Transport: mem}}
		s := &signing.Signer{Key: key, Agent: "https://bothy.tools", Form: signing.Dictionary, Nonce: true}
		errs := make(chan error, 20)
		for range 20 {
			go func() {
				req := httptest.NewRequest(http.MethodGet, "https://site.example/", nil)
				if err := s.Sign(req); err != nil {
					errs <- err
					return
				}
				_, err := v.Verify(req)
				errs <- err
			}()
		}
		for range 20 {
			if err := <-errs; err != nil {
				t.Error(err)
			}
		}
		if n := mem.count("bothy.tools"); n != 1 {
			t.Errorf("directory fetched %d times, want 1", n)
		}
	})
}

// TestVerifier_AgentPolicy: only https agents, only listed agents when
// Agents is set, and MaxLifetime.
func TestVerifier_AgentPolicy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := newMem()
		key := signingtest.BothyKey()
		mem.handle("bothy.tools", &signing.Directory{Keys: signers(key)})
		mem.handle("plain.example", &signing.Directory{Keys: signers(key)})
		for _, tc := range []struct {
			name   string
			v      *signing.Verifier
			signer *signing.Signer
			want   signing.Reason
		}{
			{"listed", &signing.Verifier{Agents: []string{"https://BOTHY.tools:443/"}}, &signing.Signer{Agent: "https://bothy.tools"}, ""},
			{"not listed", &signing.Verifier{Agents: []string{"https://other.example"}}, &signing.Signer{Agent: "https://bothy.tools"}, signing.ReasonAgent},
			{"http agent", &signing.Verifier{}, &signing.Signer{Agent: "http://plain.example", Form: signing.QuotedString}, signing.ReasonAgent},
			{"lifetime too long", &signing.Verifier{MaxLifetime: time.Hour}, &signing.Signer{Agent: "https://bothy.tools", Expires: 2 * time.Hour}, signing.ReasonTooLong},
		} {
			tc.v.Client = &http.Client{Transport: mem}
			tc.signer.Key = key
			req := httptest.NewRequest(http.MethodGet, "https://site.example/", nil)
			must(t, tc.signer.Sign(req))
			_, err := tc.v.Verify(req)
			var ve *signing.VerifyError
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("%s: %v", tc.name, err)
			case tc.want != "" && (!errors.As(err, &ve) || ve.Reason != tc.want):
				t.Errorf("%s: %v, want %s", tc.name, err, tc.want)
			}
		}
	})
}

// TestRotation_B2: the directory lists the old and the new key; requests
// signed with either verify; once the old key is dropped from the
// directory, it stops verifying when the cached copy expires (max-age).
func TestRotation_B2(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := newMem()
		oldKey, newKey := signingtest.BothyKey(), signingtest.NextKey()
		dir := &signing.Directory{Keys: signers(oldKey, newKey), MaxAge: 30 * time.Minute}
		mem.handle("bothy.tools", dir)
		v := &signing.Verifier{Client: &http.Client{Transport: mem}}
		verify := func(k crypto.Signer) error {
			req := httptest.NewRequest(http.MethodGet, "https://site.example/", nil)
			must(t, (&signing.Signer{Key: k, Agent: "https://bothy.tools"}).Sign(req))
			_, err := v.Verify(req)
			return err
		}
		must(t, verify(oldKey))
		must(t, verify(newKey))
		dir.Keys = signers(newKey) // rotation done
		must(t, verify(oldKey))    // still cached
		time.Sleep(30*time.Minute + time.Second)
		must(t, verify(newKey))
		var ve *signing.VerifyError
		if err := verify(oldKey); !errors.As(err, &ve) || ve.Reason != signing.ReasonUnknownKey {
			t.Fatalf("removed key after max-age: %v", err)
		}
	})
}
