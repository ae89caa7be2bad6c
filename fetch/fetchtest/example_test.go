package fetchtest_test

import (
	"fmt"
	"io"
	"net/http"

	"github.com/goodbot-go/goodbot/fetch/fetchtest"
)

func ExampleWeb() {
	w := fetchtest.New()
	defer w.Close()
	w.Host("a.test").
		Handle("/robots.txt", fetchtest.Robots("User-agent: *\nDisallow: /private\n")).
		Handle("/", fetchtest.HTML("<p>hello</p>")).
		Handle("/busy", fetchtest.RetryAfter(http.StatusTooManyRequests, "120"))
	w.Host("b.test").Handle("/", fetchtest.Challenge(http.StatusForbidden))

	tr := w.Transport() // dials every host name to the loopback server
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	for _, u := range []string{"http://a.test/", "http://a.test/busy", "http://b.test/", "http://a.test/"} {
		resp, err := client.Get(u)
		if err != nil {
			panic(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		fmt.Println(u, resp.StatusCode, len(body) > 0)
	}
	for _, r := range w.Requests() {
		fmt.Println(r.Seq, r.Host, r.Path, r.Status)
	}
	// A careless client: the last request came during the 120 s pause.
	v := fetchtest.Violations(w.Requests(), fetchtest.HonoursRetryAfter(), fetchtest.NoCookies())
	fmt.Println(len(v), "violation")
	// Output:
	// http://a.test/ 200 true
	// http://a.test/busy 429 true
	// http://b.test/ 403 true
	// http://a.test/ 200 true
	// 0 a.test / 200
	// 1 a.test /busy 429
	// 2 b.test / 403
	// 3 a.test / 200
	// 1 violation
}

// The in-memory transport needs no sockets, so it also works inside a
// testing/synctest bubble, where a server that sends one byte a second
// takes no real time (see the package tests).
func ExampleWeb_RoundTripper() {
	w := fetchtest.New()
	defer w.Close()
	w.Host("a.test").Handle("/", fetchtest.SetCookie("sid", "1", fetchtest.HTML("hi")))
	resp, err := (&http.Client{Transport: w.RoundTripper()}).Get("http://a.test/")
	if err != nil {
		panic(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Println(resp.StatusCode, string(body), resp.Header.Get("Set-Cookie"))
	fmt.Println(w.Requests()[0].RemoteAddr)
	// Output:
	// 200 hi sid=1; Path=/; HttpOnly
	// mem
}
