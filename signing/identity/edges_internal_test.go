package identity

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestCardFields: the card's derived fields, each on its edge cases.
func TestCardFields(t *testing.T) {
	for ua, want := range map[string]string{
		"BothyBot/1.0":              "BothyBot/1.0",
		"BothyBot/{version} ({os})": "BothyBot/* (*)",
		"BothyBot/1.0 {unclosed":    "BothyBot/1.0 {unclosed",
		"BothyBot} {v}":             "BothyBot} *",
		"{name}/1.0":                "*/1.0",
		"Bot/{}":                    "Bot/*",
	} {
		if got := expectedUserAgent(ua); got != want {
			t.Errorf("expectedUserAgent(%q) = %q, want %q", ua, got, want)
		}
	}
	if got := rateControl([]int{429, 503}); got != "robots.txt Crawl-delay; 429, 503 with Retry-After (pauses the whole host)" {
		t.Errorf("rateControl(429, 503) = %q", got)
	}
	// Nil is politeness.Policy's default, which pauses on 429 and 503.
	if got := rateControl(nil); got != "robots.txt Crawl-delay; 429, 503 with Retry-After (pauses the whole host)" {
		t.Errorf("rateControl(nil) = %q", got)
	}
	// Empty: no status pauses the host.
	if got := rateControl([]int{}); got != "robots.txt Crawl-delay" {
		t.Errorf("rateControl([]) = %q", got)
	}
	for d, want := range map[time.Duration]string{
		0:                "max=1rps per host; one request at a time per host",
		-1:               "one request at a time per host",
		-time.Second:     "one request at a time per host",
		time.Second / 4:  "max=4rps per host; one request at a time per host",
		10 * time.Second: "max=0.1rps per host; one request at a time per host",
		3 * time.Second:  "max=0.333rps per host; one request at a time per host",
		time.Second / 3:  "max=3rps per host; one request at a time per host",
	} {
		if got := rateExpectation(d); got != want {
			t.Errorf("rateExpectation(%v) = %q, want %q", d, got, want)
		}
	}
	for agent, want := range map[string]string{
		"https://bot.test":        "https://bot.test/.well-known/http-message-signatures-directory",
		"https://bot.test/":       "https://bot.test/.well-known/http-message-signatures-directory",
		"https://bot.test/k.json": "https://bot.test/k.json",
		"https://u:p@bot.test":    "",
		"http://bot.test":         "",
	} {
		got, err := keyDirectoryURL(agent)
		if got != want || (err != nil) != (want == "") {
			t.Errorf("keyDirectoryURL(%q) = %q, %v; want %q", agent, got, err, want)
		}
	}
}

// TestJSONDoc_Methods: GET gets the document, HEAD its header only, any
// other method 405 with Allow.
func TestJSONDoc_Methods(t *testing.T) {
	h := jsonDoc("application/json", []byte(`{"a":1}`))
	for _, c := range []struct {
		method string
		status int
		body   string
	}{
		{http.MethodGet, 200, `{"a":1}`},
		{http.MethodHead, 200, ""},
		{http.MethodPost, 405, ""},
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(c.method, "https://bot.test/card.json", nil))
		body := rec.Body.String()
		if c.status == 405 {
			body = ""
		}
		if rec.Code != c.status || body != c.body {
			t.Errorf("%s: %d %q, want %d %q", c.method, rec.Code, rec.Body.String(), c.status, c.body)
		}
		if c.status == 200 && rec.Header().Get("Content-Length") != "7" {
			t.Errorf("%s: Content-Length %q, want 7", c.method, rec.Header().Get("Content-Length"))
		}
		if c.status == 200 && (rec.Header().Get("Cache-Control") != "public, max-age=3600" || rec.Header().Get("Content-Type") != "application/json") {
			t.Errorf("%s: Cache-Control %q, Content-Type %q", c.method, rec.Header().Get("Cache-Control"), rec.Header().Get("Content-Type"))
		}
		if c.status == 405 && rec.Header().Get("Allow") != "GET, HEAD" {
			t.Errorf("%s: Allow %q", c.method, rec.Header().Get("Allow"))
		}
	}
}
