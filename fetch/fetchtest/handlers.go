package fetchtest

import (
	"bytes"
	"fmt"
	"html"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// A Page is a static document with optional validators. Its ServeHTTP
// answers conditional requests: 304 when If-None-Match matches ETag, or when
// If-Modified-Since is not before LastModified.
type Page struct {
	Body         string
	ContentType  string    // default "text/html; charset=utf-8"
	ETag         string    // quoted entity tag, e.g. `"v1"`; empty = none
	LastModified time.Time // zero = none
	Status       int       // default 200
	Header       http.Header
}

// ServeHTTP implements [http.Handler].
func (p Page) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	for k, v := range p.Header {
		h[k] = v
	}
	ct := p.ContentType
	if ct == "" {
		ct = "text/html; charset=utf-8"
	}
	h.Set("Content-Type", ct)
	if p.ETag != "" {
		h.Set("ETag", p.ETag)
	}
	if !p.LastModified.IsZero() {
		h.Set("Last-Modified", p.LastModified.UTC().Format(http.TimeFormat))
	}
	status := p.Status
	if status == 0 {
		status = http.StatusOK
	}
	if status == http.StatusOK && p.notModified(r) {
		h.Del("Content-Type")
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Length", strconv.Itoa(len(p.Body)))
	w.WriteHeader(status)
	_, _ = io.WriteString(w, p.Body)
}

func (p Page) notModified(r *http.Request) bool {
	if inm := r.Header.Get("If-None-Match"); inm != "" {
		if p.ETag == "" {
			return false
		}
		for _, t := range strings.Split(inm, ",") {
			t = strings.TrimSpace(t)
			if t == "*" || strings.TrimPrefix(t, "W/") == strings.TrimPrefix(p.ETag, "W/") {
				return true
			}
		}
		return false
	}
	if ims := r.Header.Get("If-Modified-Since"); ims != "" && !p.LastModified.IsZero() {
		t, err := http.ParseTime(ims)
		return err == nil && !p.LastModified.Truncate(time.Second).After(t)
	}
	return false
}

// HTML serves body as a 200 text/html page.
func HTML(body string) http.Handler { return Page{Body: body} }

// Text serves body with the given content type and status 200.
func Text(contentType, body string) http.Handler {
	return Page{Body: body, ContentType: contentType}
}

// Robots serves body as a 200 text/plain robots.txt.
func Robots(body string) http.Handler {
	return Page{Body: body, ContentType: "text/plain; charset=utf-8"}
}

// Status answers code with a short text body and the given header lines
// ("Name: value").
func Status(code int, header ...string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for _, line := range header {
			if k, v, ok := strings.Cut(line, ":"); ok {
				w.Header().Add(strings.TrimSpace(k), strings.TrimSpace(v))
			}
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(code)
		_, _ = fmt.Fprintf(w, "%d %s\n", code, http.StatusText(code))
	})
}

// RetryAfter answers code (429, 503, 509...) with a Retry-After header of
// value (seconds or an HTTP-date); an empty value sends no Retry-After.
func RetryAfter(code int, value string) http.Handler {
	if value == "" {
		return Status(code)
	}
	return Status(code, "Retry-After: "+value)
}

// Redirect answers code (301, 302, 303, 307, 308; 0 means 302) with
// Location to.
func Redirect(to string, code int) http.Handler {
	if code == 0 {
		code = http.StatusFound
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", to)
		w.WriteHeader(code)
	})
}

// HandleChain mounts a chain of n redirects under prefix: prefix+"/0"
// redirects (302) to prefix+"/1" and so on; prefix+"/n" is served by final.
func (h *Host) HandleChain(prefix string, n int, final http.Handler) *Host {
	for i := 0; i < n; i++ {
		h.Handle(fmt.Sprintf("%s/%d", prefix, i), Redirect(fmt.Sprintf("%s/%d", prefix, i+1), http.StatusFound))
	}
	return h.Handle(fmt.Sprintf("%s/%d", prefix, n), final)
}

// ChallengeHTML is the body of [Challenge]: an interstitial in the style of
// the large CDNs' "checking your browser" pages.
const ChallengeHTML = `<!DOCTYPE html><html lang="en-US"><head><title>Just a moment...</title>` +
	`<meta http-equiv="refresh" content="360"></head><body><div id="challenge-running">` +
	`Checking if the site connection is secure</div><noscript>Enable JavaScript and cookies to continue</noscript>` +
	`<script src="/cdn-cgi/challenge-platform/h/b/orchestrate/chl_page/v1?ray=8a1b2c3d4e5f6789"></script>` +
	`<form id="challenge-form" action="/?__cf_chl_f_tk=abc" method="POST"></form></body></html>`

// Challenge serves a bot-protection interstitial with the given status (403,
// 503, or 200 for the ones that hide behind success), with the headers such
// pages carry (Server: cloudflare, cf-mitigated: challenge).
func Challenge(status int) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Type", "text/html; charset=UTF-8")
		h.Set("Server", "cloudflare")
		h.Set("Cf-Mitigated", "challenge")
		h.Set("Cf-Ray", "8a1b2c3d4e5f6789-AMS")
		h.Set("Cache-Control", "private, max-age=0, no-store, no-cache, must-revalidate")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, ChallengeHTML)
	})
}

// RateLimitPage serves a Cloudflare "error 1015: you are being rate
// limited" page with status (Cloudflare sends 429), a vendor's rate-limit
// page rather than a challenge to solve.
func RateLimitPage(status int) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Type", "text/plain; charset=UTF-8")
		h.Set("Server", "cloudflare")
		h.Set("Cf-Ray", "8a1b2c3d4e5f6790-AMS")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, "error code: 1015")
	})
}

// Huge serves an HTML page of exactly n bytes with its Content-Length. A
// client that stops reading early shows up as [Request.Aborted].
func Huge(n int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Length", strconv.FormatInt(n, 10))
		w.WriteHeader(http.StatusOK)
		writeFiller(w, n)
	})
}

// Endless serves an HTML page that never ends (no Content-Length); it stops
// when the client goes away.
func Endless() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusOK)
		writeFiller(w, -1)
	})
}

var filler = bytes.Repeat([]byte("<p>filler filler filler filler filler filler filler filler</p>\n"), 512)

// writeFiller writes n bytes (n < 0: until a write fails).
func writeFiller(w io.Writer, n int64) {
	for n != 0 {
		chunk := filler
		if n > 0 && int64(len(chunk)) > n {
			chunk = chunk[:n]
		}
		m, err := w.Write(chunk)
		if err != nil {
			return
		}
		if n > 0 {
			n -= int64(m)
		}
	}
}

// Trickle serves body one byte every interval (flushing each), the
// slow-loris server. It stops when the client goes away.
func Trickle(every time.Duration, body string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusOK)
		rc := http.NewResponseController(w)
		_ = rc.Flush()
		t := time.NewTicker(every)
		defer t.Stop()
		for i := 0; i < len(body); i++ {
			select {
			case <-r.Context().Done():
				return
			case <-t.C:
			}
			if _, err := w.Write([]byte{body[i]}); err != nil {
				return
			}
			if rc.Flush() != nil {
				return
			}
		}
	})
}

// Hang never answers: it holds the request until the client gives up (or the
// Web closes).
func Hang() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	})
}

// Slow waits d (or until the client gives up) and then serves h.
func Slow(d time.Duration, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-r.Context().Done():
			return
		case <-t.C:
		}
		h.ServeHTTP(w, r)
	})
}

// Reset drops the connection without an answer (a TCP reset on loopback,
// [ErrConnReset] in memory).
func Reset() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if rw, ok := w.(interface{ resetConn() }); ok {
			rw.resetConn()
		}
	})
}

// SetCookie adds a Set-Cookie header with name=value to h's answers.
func SetCookie(name, value string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: name, Value: value, Path: "/", HttpOnly: true})
		h.ServeHTTP(w, r)
	})
}

// LoginRequired answers 401 with a WWW-Authenticate challenge.
func LoginRequired() http.Handler {
	return Status(http.StatusUnauthorized, `WWW-Authenticate: Basic realm="members"`)
}

// LoginRedirect redirects (302) to loginPath with the requested path as the
// "next" query parameter, as sites do for pages behind a login.
func LoginRedirect(loginPath string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, loginPath+"?next="+r.URL.EscapedPath(), http.StatusFound)
	})
}

// LoginForm serves an HTML login form (a page a polite bot never submits).
func LoginForm() http.Handler {
	return HTML(`<html><body><form method="post" action="/login"><input name="user"><input type="password" name="pass"></form></body></html>`)
}

// A SitemapURL is one <url> entry of [Sitemap].
type SitemapURL struct {
	Loc     string
	LastMod time.Time // zero = no <lastmod>
}

// Sitemap serves an XML sitemap (urlset) listing urls.
func Sitemap(urls ...SitemapURL) http.Handler {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	b.WriteString(`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">` + "\n")
	for _, u := range urls {
		b.WriteString("<url><loc>" + html.EscapeString(u.Loc) + "</loc>")
		if !u.LastMod.IsZero() {
			b.WriteString("<lastmod>" + u.LastMod.UTC().Format(time.RFC3339) + "</lastmod>")
		}
		b.WriteString("</url>\n")
	}
	b.WriteString("</urlset>\n")
	return Text("application/xml", b.String())
}

// Sequence serves the i-th request with hs[i]; once they are used up, the
// last one serves every further request.
func Sequence(hs ...http.Handler) http.Handler {
	if len(hs) == 0 {
		return http.NotFoundHandler()
	}
	var mu sync.Mutex
	i := 0
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		h := hs[min(i, len(hs)-1)]
		i++
		mu.Unlock()
		h.ServeHTTP(w, r)
	})
}
