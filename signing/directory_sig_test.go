package signing_test

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goodbot-go/goodbot/signing"
	"github.com/goodbot-go/goodbot/signing/signingtest"
)

// TestDirectory_D2_SignatureBase: the directory response signature verifies
// over the signature base built by hand as RFC 9421 §2.5 defines it, with
// "@authority";req the authority the directory was requested at, normalised
// as §2.2.3 asks (lowercased, the scheme's default port dropped: 80 over
// plain HTTP, 443 over TLS, and only that one), and expires - created the
// signature lifetime (24 hours when SignatureLifetime is zero).
func TestDirectory_D2_SignatureBase(t *testing.T) {
	key := signingtest.BothyKey()
	kid, err := signing.Thumbprint(pub(key))
	must(t, err)
	for _, tc := range []struct {
		url       string
		lifetime  time.Duration
		authority string
		wantLife  int64
	}{
		{"http://bothy.tools" + signing.DirectoryPath, 0, "bothy.tools", 86400},
		{"http://Bothy.Tools:80" + signing.DirectoryPath, 0, "bothy.tools", 86400},
		{"https://bothy.tools:443" + signing.DirectoryPath, 0, "bothy.tools", 86400},
		{"https://bothy.tools:80" + signing.DirectoryPath, 0, "bothy.tools:80", 86400},
		{"http://bothy.tools:443" + signing.DirectoryPath, 0, "bothy.tools:443", 86400},
		{"https://bothy.tools:8443" + signing.DirectoryPath, time.Hour, "bothy.tools:8443", 3600},
	} {
		t.Run(tc.url, func(t *testing.T) {
			d := &signing.Directory{Keys: signers(key), SignatureLifetime: tc.lifetime}
			rec := httptest.NewRecorder()
			d.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tc.url, nil))
			h := rec.Header()
			sum := sha256.Sum256(rec.Body.Bytes())
			digest := "sha-256=:" + base64.StdEncoding.EncodeToString(sum[:]) + ":" // RFC 9530 §2
			if got := h.Get("Content-Digest"); got != digest {
				t.Errorf("Content-Digest %q, want %q", got, digest)
			}
			params, ok := strings.CutPrefix(h.Get("Signature-Input"), "sig1=")
			if !ok || !strings.HasPrefix(params, `("@authority";req "content-digest");`) ||
				!strings.Contains(params, `;keyid="`+kid+`"`) || !strings.Contains(params, `;tag="http-message-signatures-directory"`) {
				t.Errorf("Signature-Input %q", h.Get("Signature-Input"))
				return
			}
			created := intParam(t, params, "created")
			if life := intParam(t, params, "expires") - created; life != tc.wantLife {
				t.Errorf("expires - created = %d, want %d", life, tc.wantLife)
			}
			if now := time.Now().Unix(); created > now || created < now-60 {
				t.Errorf("created %d, now %d", created, now)
			}
			b64, ok := strings.CutPrefix(h.Get("Signature"), "sig1=:")
			sig, err := base64.StdEncoding.DecodeString(strings.TrimSuffix(b64, ":"))
			if !ok || err != nil {
				t.Errorf("Signature %q", h.Get("Signature"))
				return
			}
			base := `"@authority";req: ` + tc.authority + "\n" +
				`"content-digest": ` + digest + "\n" +
				`"@signature-params": ` + params
			if !ed25519.Verify(pub(key), []byte(base), sig) {
				t.Errorf("the signature does not verify over\n%s", base)
			}
		})
	}
}

func intParam(t *testing.T, params, name string) int64 {
	t.Helper()
	m := regexp.MustCompile(`;` + name + `=(\d+)(;|$)`).FindStringSubmatch(params)
	if m == nil {
		t.Fatalf("no %s in %s", name, params)
	}
	n, err := strconv.ParseInt(m[1], 10, 64)
	must(t, err)
	return n
}

// TestDirectory_Methods: HEAD gets the header fields of GET (RFC 9110
// §9.3.2), Content-Length among them, and no content; any other method gets
// 405 with the Allow field the origin server MUST send (RFC 9110 §15.5.6).
func TestDirectory_Methods(t *testing.T) {
	d := &signing.Directory{Keys: signers(signingtest.BothyKey())}
	get := httptest.NewRecorder()
	d.ServeHTTP(get, httptest.NewRequest(http.MethodGet, "https://bothy.tools"+signing.DirectoryPath, nil))
	if get.Code != http.StatusOK || get.Body.Len() == 0 {
		t.Fatalf("GET: %d, %d bytes", get.Code, get.Body.Len())
	}
	head := httptest.NewRecorder()
	d.ServeHTTP(head, httptest.NewRequest(http.MethodHead, "https://bothy.tools"+signing.DirectoryPath, nil))
	if head.Code != http.StatusOK || head.Body.Len() != 0 {
		t.Errorf("HEAD: %d, %d bytes of content", head.Code, head.Body.Len())
	}
	for _, f := range []string{"Content-Type", "Cache-Control", "Content-Digest"} {
		if head.Header().Get(f) != get.Header().Get(f) {
			t.Errorf("HEAD %s %q, GET %q", f, head.Header().Get(f), get.Header().Get(f))
		}
	}
	if cl := head.Header().Get("Content-Length"); cl != strconv.Itoa(get.Body.Len()) {
		t.Errorf("HEAD Content-Length %q, want %d (the GET content's length)", cl, get.Body.Len())
	}
	for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodOptions, http.MethodPatch} {
		t.Run(m, func(t *testing.T) {
			rec := httptest.NewRecorder()
			d.ServeHTTP(rec, httptest.NewRequest(m, "https://bothy.tools"+signing.DirectoryPath, nil))
			var allow []string
			for _, a := range strings.Split(rec.Header().Get("Allow"), ",") {
				allow = append(allow, strings.TrimSpace(a))
			}
			slices.Sort(allow)
			if rec.Code != http.StatusMethodNotAllowed || !slices.Equal(allow, []string{"GET", "HEAD"}) || rec.Header().Get("Signature") != "" {
				t.Errorf("%d, Allow %q, Signature %q; want 405, Allow GET and HEAD, no signature", rec.Code, rec.Header().Get("Allow"), rec.Header().Get("Signature"))
			}
		})
	}
}
