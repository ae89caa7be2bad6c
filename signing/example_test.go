package signing_test

import (
	"crypto"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"

	"github.com/goodbot-go/goodbot/signing"
	"github.com/goodbot-go/goodbot/signing/signingtest"
)

func ExampleThumbprint() {
	key := signingtest.RFC9421Key()
	kid, err := signing.Thumbprint(pub(key))
	if err != nil {
		panic(err)
	}
	fmt.Println(kid)
	// Output: poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U
}

func ExampleSigner_Sign() {
	s := &signing.Signer{
		Key:   signingtest.DirectoriesKey(),
		Agent: "https://directories.prosvita.io",
		Form:  signing.QuotedString,
	}
	req, _ := http.NewRequest(http.MethodGet, "https://Example.com:443/links", nil)
	if err := s.Sign(req); err != nil {
		panic(err)
	}
	kid, _ := s.KeyID()
	input := req.Header.Get("Signature-Input")
	fmt.Println("Signature-Agent:", req.Header.Get("Signature-Agent"))
	fmt.Println("covered:", input[len("sig1="):strings.Index(input, ";")])
	fmt.Println("keyid is thumbprint:", strings.Contains(input, `keyid="`+kid+`"`))
	fmt.Println("tag:", strings.Contains(input, `tag="web-bot-auth"`))
	// Output:
	// Signature-Agent: "https://directories.prosvita.io"
	// covered: ("@method" "@authority" "@path" "signature-agent")
	// keyid is thumbprint: true
	// tag: true
}

func ExampleTransport() {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Println("Signature-Agent:", r.Header.Get("Signature-Agent"))
		fmt.Println("signed:", r.Header.Get("Signature") != "")
	}))
	defer site.Close()

	client := &http.Client{Transport: &signing.Transport{
		Signer: &signing.Signer{Key: signingtest.BothyKey(), Agent: "https://bothy.tools", Form: signing.BareURL},
	}}
	resp, err := client.Get(site.URL)
	if err != nil {
		panic(err)
	}
	resp.Body.Close()
	client.CloseIdleConnections()
	// Output:
	// Signature-Agent: https://bothy.tools
	// signed: true
}

func ExampleDirectory() {
	d := &signing.Directory{Keys: []crypto.Signer{signingtest.BothyKey()}}
	rec := httptest.NewRecorder()
	d.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "https://bothy.tools"+signing.DirectoryPath, nil))
	fmt.Println(rec.Header().Get("Content-Type"))
	fmt.Println(rec.Header().Get("Cache-Control"))
	fmt.Println(rec.Body.String())
	// Output:
	// application/http-message-signatures-directory+json
	// public, max-age=3600
	// {"keys":[{"crv":"Ed25519","kid":"WASx7Tre-igcn8liqhYoOBBgvqQa8RTaQ4TDddEqj_o","kty":"OKP","use":"sig","x":"0lEe_9Gno80Ut7sqHxofREyU6UgEC413FLJucbPhW8M"}]}
}

func ExampleVerifier_Middleware() {
	key := signingtest.BothyKey()
	dirSrv := httptest.NewTLSServer(&signing.Directory{Keys: []crypto.Signer{key}})
	defer dirSrv.Close()

	v := &signing.Verifier{
		Client: dirSrv.Client(),
		Agents: []string{dirSrv.URL},
		// The directory is on loopback: refused unless allowed.
		AllowInternal: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
	}
	// Annotate (the default): every request reaches the handler, with the
	// verdict in its context.
	site := httptest.NewServer(v.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		outcome, res, err, _ := signing.VerdictFromContext(r.Context())
		if outcome == signing.Verified {
			fmt.Fprintf(w, "hello %s (%s)", res.Label, res.Form)
			return
		}
		var ve *signing.VerifyError
		errors.As(err, &ve)
		fmt.Fprintf(w, "hello, %s visitor (%s)", outcome, ve.Reason)
	})))
	defer site.Close()

	for _, signer := range []*signing.Signer{
		{Key: key, Agent: dirSrv.URL},                    // the bot
		{Key: signingtest.OtherKey(), Agent: dirSrv.URL}, // an impostor
		nil, // a person
	} {
		client := &http.Client{}
		if signer != nil {
			client.Transport = &signing.Transport{Signer: signer}
		}
		resp, err := client.Get(site.URL)
		if err != nil {
			panic(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		client.CloseIdleConnections()
		fmt.Println(resp.StatusCode, strings.TrimSpace(string(body)))
	}
	// Output:
	// 200 hello sig1 (dictionary)
	// 200 hello, unverified visitor (unknown_key)
	// 200 hello, unverified visitor (missing_signature)
}

func ExampleVerifier_Verify() {
	// A fixed key set: nothing is fetched (tests, or a site that pins keys).
	key := signingtest.DirectoriesKey()
	keys, _ := signing.NewKeySet(key.Public().(ed25519.PublicKey))
	v := &signing.Verifier{Keys: keys}

	s := &signing.Signer{Key: key, Agent: "https://directories.prosvita.io", Form: signing.Dictionary}
	req := httptest.NewRequest(http.MethodGet, "https://example.com/", nil)
	if err := s.Sign(req); err != nil {
		panic(err)
	}
	res, err := v.Verify(req)
	fmt.Println(res.Agent, res.Form, err)

	req.Header.Set("Signature-Agent", `sig1="https://impostor.example"`)
	_, err = v.Verify(req)
	fmt.Println(errors.Is(err, signing.ErrInvalidSignature), err)
	// Output:
	// https://directories.prosvita.io dictionary <nil>
	// true signing: invalid signature: bad_signature (sig1)
}

func ExampleMarshalPrivateKeyPEM() {
	pemBytes, err := signing.MarshalPrivateKeyPEM(signingtest.BothyKey())
	if err != nil {
		panic(err)
	}
	key, err := signing.ParsePrivateKeyPEM(pemBytes)
	if err != nil {
		panic(err)
	}
	kid, _ := signing.Thumbprint(key.Public().(ed25519.PublicKey))
	fmt.Println(strings.SplitN(string(pemBytes), "\n", 2)[0])
	fmt.Println(kid)
	// Output:
	// -----BEGIN PRIVATE KEY-----
	// WASx7Tre-igcn8liqhYoOBBgvqQa8RTaQ4TDddEqj_o
}
