package signing_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/goodbot-go/goodbot/signing"
	"github.com/goodbot-go/goodbot/signing/signingtest"
)

// TestSigner_DefaultIsDictionary: a Signer with no Form sends the
// draft's dictionary form, covered as "signature-agent";key="sig1", and
// covers @method, @authority and @path.
func TestSigner_DefaultIsDictionary(t *testing.T) {
	s := &signing.Signer{Key: signingtest.BothyKey(), Agent: "https://bothy.tools"}
	req := httptest.NewRequest(http.MethodGet, "https://example.com/a/b?c=d", nil)
	must(t, s.Sign(req))
	if got := req.Header.Get("Signature-Agent"); got != `sig1="https://bothy.tools"` {
		t.Errorf("Signature-Agent %q", got)
	}
	want := `sig1=("@method" "@authority" "@path" "signature-agent";key="sig1");created=`
	if got := req.Header.Get("Signature-Input"); !strings.HasPrefix(got, want) {
		t.Errorf("Signature-Input %s, want prefix %s", got, want)
	}
	if got := signing.DefaultComponents(); strings.Join(got, " ") != "@method @authority @path" {
		t.Errorf("DefaultComponents %v", got)
	}
}

// TestSigner_Config: every unusable configuration fails Sign with a typed
// error before anything is signed, and the request is left alone.
func TestSigner_Config(t *testing.T) {
	key := signingtest.BothyKey()
	for _, tc := range []struct {
		name   string
		s      *signing.Signer
		header map[string]string
		want   error
		comp   string // the ComponentError's component
	}{
		{"expires 24h is allowed", &signing.Signer{Expires: 24 * time.Hour}, nil, nil, ""},
		{"expires 24h+1s", &signing.Signer{Expires: 24*time.Hour + time.Second}, nil, signing.ErrExpiresTooLong, ""},
		{"expires a week", &signing.Signer{Expires: 7 * 24 * time.Hour}, nil, signing.ErrExpiresTooLong, ""},
		{"dictionary over http", &signing.Signer{Agent: "http://bothy.tools"}, nil, signing.ErrSignerConfig, ""},
		{"quoted over http (legacy opt-in)", &signing.Signer{Agent: "http://bothy.tools", Form: signing.QuotedString}, nil, nil, ""},
		{"no anchor", &signing.Signer{Components: []string{"@method", "@path"}}, nil, signing.ErrSignerConfig, ""},
		{"target-uri anchors", &signing.Signer{Components: []string{"@target-uri"}}, nil, nil, ""},
		{"query-param", &signing.Signer{Components: []string{"@authority", "@query-param"}}, nil, signing.ErrComponent, "@query-param"},
		{"status", &signing.Signer{Components: []string{"@authority", "@status"}}, nil, signing.ErrComponent, "@status"},
		{"agent listed", &signing.Signer{Components: []string{"@authority", "signature-agent"}}, nil, signing.ErrComponent, "signature-agent"},
		{"agent listed, request has one", &signing.Signer{Components: []string{"@authority", "signature-agent"}}, map[string]string{"Signature-Agent": `sig1="https://other.example"`}, signing.ErrComponent, "signature-agent"},
		{"empty header name", &signing.Signer{Components: []string{"@authority", ""}}, map[string]string{"": "v"}, signing.ErrComponent, ""},
		{"uppercase header", &signing.Signer{Components: []string{"@authority", "X-Price"}}, nil, signing.ErrComponent, "X-Price"},
		{"twice", &signing.Signer{Components: []string{"@authority", "@authority"}}, nil, signing.ErrComponent, "@authority"},
		{"header present", &signing.Signer{Components: []string{"@authority", "x-price"}}, map[string]string{"X-Price": "0.01"}, nil, ""},
		{"header name with a, z, 0 and 9", &signing.Signer{Components: []string{"@authority", "x-az09"}}, map[string]string{"X-Az09": "1"}, nil, ""},
		{"header name with tchar !", &signing.Signer{Components: []string{"@authority", "x!y"}}, map[string]string{"X!y": "1"}, nil, ""},
		{"header name with a space, request has it", &signing.Signer{Components: []string{"@authority", "x price"}}, map[string]string{"x price": "1"}, signing.ErrComponent, "x price"},
		{"header absent", &signing.Signer{Components: []string{"@authority", "x-price"}}, nil, signing.ErrComponent, "x-price"},
		{"header line break", &signing.Signer{Components: []string{"@authority", "x-price"}}, map[string]string{"X-Price": "1\n2"}, signing.ErrComponent, "x-price"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.s
			s.Key = key
			if s.Agent == "" {
				s.Agent = "https://bothy.tools"
			}
			req := httptest.NewRequest(http.MethodGet, "https://example.com/", nil)
			for k, v := range tc.header {
				req.Header[k] = []string{v}
			}
			err := s.Sign(req)
			if tc.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				if req.Header.Get("Signature") == "" {
					t.Fatal("not signed")
				}
				return
			}
			if !errors.Is(err, tc.want) || !strings.HasPrefix(err.Error(), "signing: ") {
				t.Fatalf("err %v, want %v", err, tc.want)
			}
			if req.Header.Get("Signature") != "" || req.Header.Get("Signature-Input") != "" {
				t.Error("a failed Sign left signature fields")
			}
			var ce *signing.ComponentError
			if tc.comp != "" && (!errors.As(err, &ce) || ce.Component != tc.comp) {
				t.Errorf("component error %v, want component %q", err, tc.comp)
			}
		})
	}
}

// TestSigner_ComponentsVerify: signatures over each supported component
// verify, and a change to a covered component breaks them.
func TestSigner_ComponentsVerify(t *testing.T) {
	key := signingtest.BothyKey()
	ks, _ := signing.NewKeySet(pub(key))
	v := &signing.Verifier{Keys: ks}
	for _, tc := range []struct {
		comps  []string
		tamper func(r *http.Request)
	}{
		{nil, func(r *http.Request) { r.URL.Path = "/other" }},
		{nil, func(r *http.Request) { r.Method = http.MethodPost }},
		{[]string{"@authority", "@query"}, func(r *http.Request) { r.URL.RawQuery = "q=2" }},
		{[]string{"@target-uri"}, func(r *http.Request) { r.URL.RawQuery = "q=2" }},
		{[]string{"@authority", "@request-target"}, func(r *http.Request) { r.URL.Path = "/x" }},
		{[]string{"@authority", "x-price"}, func(r *http.Request) { r.Header.Set("X-Price", "0.02") }},
	} {
		req := httptest.NewRequest(http.MethodGet, "https://example.com/p?q=1", nil)
		req.Header.Set("X-Price", "0.01")
		s := &signing.Signer{Key: key, Agent: "https://bothy.tools", Components: tc.comps}
		must(t, s.Sign(req))
		if _, err := v.Verify(req); err != nil {
			t.Fatalf("%v: %v", tc.comps, err)
		}
		tc.tamper(req)
		if _, err := v.Verify(req); !errors.Is(err, signing.ErrInvalidSignature) {
			t.Errorf("%v: tampered request verified: %v", tc.comps, err)
		}
	}
}
