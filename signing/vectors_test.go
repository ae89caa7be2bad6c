package signing

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/dunglas/httpsfv"
	"github.com/goodbot-go/goodbot/signing/signingtest"
	"github.com/yaronf/httpsign"
)

type b26Vector struct {
	Seed       string      `json:"key_seed_b64url"`
	X          string      `json:"key_x_b64url"`
	KeyID      string      `json:"keyid"`
	Method     string      `json:"method"`
	Target     string      `json:"target"`
	Host       string      `json:"host"`
	Headers    [][2]string `json:"headers"`
	Components []string    `json:"components"`
	Created    int64       `json:"created"`
	Label      string      `json:"label"`
	Base       string      `json:"signature_base"`
	Input      string      `json:"signature_input"`
	Signature  string      `json:"signature"`
}

func loadJSON(t testing.TB, name string, v any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatal(err)
	}
}

func (v *b26Vector) key(t testing.TB) ed25519.PrivateKey {
	seed, err := base64.RawURLEncoding.DecodeString(v.Seed)
	if err != nil {
		t.Fatal(err)
	}
	priv := ed25519.NewKeyFromSeed(seed)
	x, _ := base64.RawURLEncoding.DecodeString(v.X)
	if !bytes.Equal(priv.Public().(ed25519.PublicKey), x) {
		t.Fatal("seed and x of the RFC key disagree")
	}
	return priv
}

func (v *b26Vector) request() *http.Request {
	req := httptest.NewRequest(v.Method, v.Target, strings.NewReader(`{"hello": "world"}`))
	req.Host = v.Host
	for _, h := range v.Headers {
		req.Header.Set(h[0], h[1])
	}
	return req
}

// TestRFC9421_B26_ByteForByte reproduces RFC 9421 Appendix B.2.6 with this
// package's engine: the signature base, Signature-Input and (Ed25519 being
// deterministic) the Signature, byte for byte.
func TestRFC9421_B26_ByteForByte(t *testing.T) {
	var v b26Vector
	loadJSON(t, "rfc9421_b26.json", &v)
	priv := v.key(t)
	if !bytes.Equal(priv, signingtest.RFC9421Key()) {
		t.Fatal("signingtest.RFC9421Key is not test-key-ed25519")
	}
	req := v.request()
	var comps []component
	for _, c := range v.Components {
		comps = append(comps, newComponent(c, "", false))
	}
	p := httpsfv.NewParams()
	p.Add("created", v.Created)
	p.Add("keyid", v.KeyID)
	params, err := signParams(comps, p)
	if err != nil {
		t.Fatal(err)
	}
	msg := requestMessage(req.Method, "https", normaliseAuthority(req.Host, "https"), req.URL, req.Header)
	base, err := signatureBase(msg, comps, params)
	if err != nil {
		t.Fatal(err)
	}
	if base != v.Base {
		t.Fatalf("signature base:\n%s\nwant:\n%s", base, v.Base)
	}
	if got := v.Label + "=" + params; got != v.Input {
		t.Errorf("Signature-Input %s, want %s", got, v.Input)
	}
	sig, err := dictMember(v.Label, httpsfv.NewItem(ed25519.Sign(priv, []byte(base))))
	if err != nil {
		t.Fatal(err)
	}
	if sig != v.Signature {
		t.Errorf("Signature %s, want %s", sig, v.Signature)
	}

	// The parsing side rebuilds the same base from the received fields.
	inputs, err := parseSignatureInput([]string{v.Input})
	if err != nil {
		t.Fatal(err)
	}
	sigs, err := parseSignatures([]string{v.Signature})
	if err != nil {
		t.Fatal(err)
	}
	base2, err := signatureBase(msg, inputs[0].comps, inputs[0].raw)
	if err != nil || base2 != v.Base {
		t.Fatalf("parsed base %q, %v", base2, err)
	}
	if !ed25519.Verify(priv.Public().(ed25519.PublicKey), []byte(base2), sigs[v.Label]) {
		t.Fatal("RFC signature does not verify")
	}

	// The Web Bot Auth verifier refuses it: the RFC example has no expires
	// and no tag, both mandatory in the profile.
	req.Header.Set("Signature-Input", v.Input)
	req.Header.Set("Signature", v.Signature)
	vf := &Verifier{Keys: KeySet{v.KeyID: priv.Public().(ed25519.PublicKey)}}
	_, err = vf.Verify(req)
	var ve *VerifyError
	if !errors.As(err, &ve) || ve.Reason != ReasonMissingParam {
		t.Fatalf("Verify of the RFC example: %v, want missing_parameter (no tag)", err)
	}
}

// TestRFC9421_B26_Httpsign shows that httpsign, which this package signs
// requests with, reproduces B.2.6 too once fake time stands at the RFC's
// created (httpsign reads time.Now and offers no setter).
func TestRFC9421_B26_Httpsign(t *testing.T) {
	var v b26Vector
	loadJSON(t, "rfc9421_b26.json", &v)
	priv := v.key(t)
	synctest.Test(t, func(t *testing.T) {
		time.Sleep(time.Until(time.Unix(v.Created, 0)))
		cfg := httpsign.NewSignConfig().SignAlg(false).SetKeyID(v.KeyID)
		fields := httpsign.Headers(v.Components...)
		s, err := httpsign.NewEd25519Signer(priv, cfg, fields)
		if err != nil {
			t.Fatal(err)
		}
		input, sig, err := httpsign.SignRequest(v.Label, *s, v.request())
		if err != nil {
			t.Fatal(err)
		}
		if input != v.Input || sig != v.Signature {
			t.Fatalf("httpsign gave\n%s\n%s", input, sig)
		}
	})
}

type wbaVectors struct {
	KeyID   string `json:"keyid"`
	Target  string `json:"target"`
	Vectors []struct {
		Name      string `json:"name"`
		Created   int64  `json:"created"`
		Expires   int64  `json:"expires"`
		Agent     string `json:"signature_agent"`
		Base      string `json:"signature_base"`
		Erratum   string `json:"erratum"`
		ErrBase   string `json:"erratum_base"`
		Form      string `json:"form"`
		Input     string `json:"signature_input"`
		Signature string `json:"signature"`
	} `json:"vectors"`
}

// TestWebBotAuthDraftVectors_B2_D2 verifies the Ed25519 examples of the Web Bot
// Auth drafts (String and Dictionary Signature-Agent) with the Verifier, in
// fake time just after their created.
func TestWebBotAuthDraftVectors_B2_D2(t *testing.T) {
	var vs wbaVectors
	loadJSON(t, "webbotauth_ed25519.json", &vs)
	pub := signingtest.RFC9421Key().Public().(ed25519.PublicKey)
	if kid, _ := Thumbprint(pub); kid != vs.KeyID {
		t.Fatalf("thumbprint %s, want %s", kid, vs.KeyID)
	}
	for _, tc := range vs.Vectors {
		t.Run(tc.Name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				time.Sleep(time.Until(time.Unix(tc.Created+30, 0)))
				req := httptest.NewRequest(http.MethodGet, vs.Target, nil)
				req.Header.Set("Signature-Input", tc.Input)
				req.Header.Set("Signature", tc.Signature)
				if tc.Agent != "" {
					req.Header.Set("Signature-Agent", tc.Agent)
				}
				if tc.Base != "" { // the draft prints the base: rebuild it byte for byte
					inputs, err := parseSignatureInput([]string{tc.Input})
					if err != nil {
						t.Fatal(err)
					}
					msg := requestMessage(req.Method, "https", "example.com", req.URL, req.Header)
					base, err := signatureBase(msg, inputs[0].comps, inputs[0].raw)
					if err != nil || base != tc.Base {
						t.Fatalf("signature base\n%s\nwant\n%s (%v)", base, tc.Base, err)
					}
				}
				vf := &Verifier{Keys: KeySet{vs.KeyID: pub}}
				if tc.Erratum != "" {
					// The draft's signature is over a non-conforming base:
					// prove the transcription right, and that we reject it.
					sigs, _ := parseSignatures([]string{tc.Signature})
					for _, sig := range sigs {
						if !ed25519.Verify(pub, []byte(tc.ErrBase), sig) {
							t.Fatal("erratum base does not verify either: transcription error?")
						}
					}
					if _, err := vf.Verify(req); !errors.Is(err, ErrInvalidSignature) {
						t.Fatalf("non-conforming signature accepted: %v", err)
					}
					return
				}
				res, err := vf.Verify(req)
				if err != nil {
					t.Fatal(err)
				}
				if res.KeyID != vs.KeyID || res.Created.Unix() != tc.Created || res.Expires.Unix() != tc.Expires {
					t.Errorf("result %+v", res)
				}
				if tc.Agent != "" && (res.Agent != "https://signature-agent.test" || res.Form.String() != tc.Form) {
					t.Errorf("agent %q form %v", res.Agent, res.Form)
				}
				// One byte changed anywhere covered breaks it.
				req.Host = "example.org"
				if _, err := vf.Verify(req); !errors.Is(err, ErrInvalidSignature) {
					t.Errorf("tampered authority verified: %v", err)
				}
			})
		})
	}
}

// TestHttpsignCrossCheck: a request signed by Signer (httpsign inside)
// verifies with httpsign's own verifier too, in all three forms.
func TestHttpsignCrossCheck(t *testing.T) {
	key := signingtest.BothyKey()
	for _, form := range []AgentForm{QuotedString, BareURL, Dictionary} {
		s := &Signer{Key: key, Agent: "https://bothy.tools", Form: form, Nonce: true}
		req := httptest.NewRequest(http.MethodGet, "https://Example.COM:443/a?b=c", nil)
		req.Host = "example.com"
		if err := s.Sign(req); err != nil {
			t.Fatal(err)
		}
		fields := httpsign.Headers(DefaultComponents()...)
		if form == Dictionary {
			fields.AddDictHeader("signature-agent", "sig1")
		} else {
			fields.AddHeader("signature-agent")
		}
		hv, err := httpsign.NewEd25519Verifier(key.Public().(ed25519.PublicKey),
			httpsign.NewVerifyConfig().SetVerifyCreated(false), fields)
		if err != nil {
			t.Fatal(err)
		}
		clone := req.Clone(req.Context())
		if err := httpsign.VerifyRequest("sig1", *hv, clone); err != nil {
			t.Errorf("%v: httpsign rejects our signature: %v\n%s", form, err, req.Header)
		}
	}
}
