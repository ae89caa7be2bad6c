package challenge_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"

	"github.com/goodbot-go/goodbot/challenge"
)

func ExampleDetect() {
	// A Cloudflare managed challenge, as a crawler receives it.
	h := http.Header{}
	h.Set("Server", "cloudflare")
	h.Set("Cf-Mitigated", "challenge")
	v := challenge.Detect(403, h, []byte(`<!DOCTYPE html><html><head><title>Just a moment...</title>`))
	fmt.Println(v.Blocked, v.Vendor, v.Kind, v.Evidence)

	// An ordinary page that merely sits behind Cloudflare.
	h = http.Header{}
	h.Set("Server", "cloudflare")
	h.Set("Cf-Ray", "8a1b2c3d4e5f6a7b-LHR")
	v = challenge.Detect(200, h, []byte(`<!DOCTYPE html><title>Village news</title><p>The roof is fixed.</p>`))
	fmt.Println(v.Blocked, v)

	// Output:
	// true cloudflare js_challenge [header:Cf-Mitigated: challenge]
	// false not blocked
}

func ExampleSniff() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// A DataDome CAPTCHA wall, served with 403.
		w.WriteHeader(http.StatusForbidden)
		io.WriteString(w, `<html><head><title>shop.example</title></head><body>`+
			`<p id="cmsg">Please enable JS and disable any ad blocker</p>`+
			`<script>var dd={'rt':'c','cid':'x','host':'geo.captcha-delivery.com'}</script></body></html>`)
	}))
	defer srv.Close()

	resp, err := http.Get(srv.URL)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	v, err := challenge.Sniff(resp)
	if err != nil {
		fmt.Println(err)
		return
	}
	body, _ := io.ReadAll(resp.Body) // the whole body is still there
	fmt.Println(v.Vendor, v.Kind, len(body))

	// Output:
	// datadome captcha 204
}

func ExampleDetector() {
	// The default table plus the site's own wall.
	d := &challenge.Detector{Rules: append(challenge.DefaultRules(), challenge.Rule{
		Name: "acme/shield", Vendor: "acme", Kind: challenge.JSChallenge,
		Status: []int{403, 503},
		Body:   [][]string{{`<div id="acme-shield"`}, {"checking your connection"}},
	})}
	v := d.Detect(503, nil, []byte(`<div id="acme-shield">Checking your connection...</div>`))
	fmt.Println(v.Vendor, v.Kind, v.Rule)

	// Output:
	// acme js_challenge acme/shield
}

func ExampleChallengeError() {
	v := challenge.Detect(403, nil, []byte("error code: 1020"))
	var err error = &challenge.ChallengeError{URL: "https://example.com/", Verdict: v}
	err = &url.Error{Op: "Get", URL: "https://example.com/", Err: err} // as http.Client wraps it

	var ce *challenge.ChallengeError
	fmt.Println(errors.Is(err, challenge.ErrChallenged), errors.As(err, &ce), ce.Verdict.Kind)
	fmt.Println(err)

	// Output:
	// true true block
	// Get "https://example.com/": challenge: https://example.com/: cloudflare block
}
