package botkit

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/fetch/links"
)

// sha128 is the first 128 bits of s's SHA-256, in hex: the hash a page
// file's name ends with when it is shortened.
func sha128(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:16])
}

func pageFile(t testing.TB, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	return PageFile(u)
}

// Page files never overwrite each other: each pair of distinct pages gets
// two files, different even on a case-insensitive file system, and no file
// is another's directory.
func TestPageFile_DistinctPagesDistinctFiles(t *testing.T) {
	long := strings.Repeat("x", 300)
	pairs := [][2]string{
		{"http://a.test/", "http://a.test/index"},
		{"http://a.test/", "http://a.test/index_"},
		{"http://a.test/a%20b", "http://a.test/a_20b"},
		{"http://a.test/a%20b", "http://a.test/a_2520b"},
		{"http://a.test/About", "http://a.test/about"},
		{"http://a.test/A", "http://a.test/%5Ea"},
		{"http://a.test/p?x=1", "http://a.test/p?x=2"},
		{"http://a.test/p?x=1", "http://a.test/p_3fx=1"},
		{"http://a.test/p?", "http://a.test/p?q"},
		{"http://a.test/p", "http://a.test/p/"},
		{"http://a.test/a/b", "http://a.test/a_2fb"},
		{"http://a.test/a/b", "http://a.test/a%2Fb"},
		{"http://a.test/a//b", "http://a.test/a/b"},
		{"http://a.test/x.txt", "http://a.test/x"},
		{"http://a.test/x.txt/y", "http://a.test/x"},
		{"http://a.test/x.txt", "http://a.test/x_2etxt"},
		{"http://a.test/a.b", "http://a.test/a_b"},
		{"http://a.test/~u", "http://a.test/_7eu"},
		{"http://a.test/%C3%A9", "http://a.test/%C3%89"},
		{"http://a.test/" + long, "http://a.test/" + long + "y"},
		{"http://a.test/" + long + "a", "http://a.test/" + long + "A"},
		{"http://a.test/" + strings.Repeat("d/", 600), "http://a.test/" + strings.Repeat("d/", 601)},
		{"http://a.test/", "https://a.test/"},
		{"https://a.test/", "http://a.test_https/"},
		{"http://a.test:8080/", "http://a.test/"},
		{"http://a.test:8080/", "http://a.test_3a8080/"},
		{"http://[::1]:8080/", "http://[::1]/"},
		// A host whose name, escaped, is longer than a file name may be.
		{"http://" + strings.Repeat("a_", 100) + ".test/", "https://" + strings.Repeat("a_", 100) + ".test/"},
	}
	for _, p := range pairs {
		a, b := pageFile(t, p[0]), pageFile(t, p[1])
		if strings.EqualFold(a, b) {
			t.Errorf("%.80s and %.80s share the file %.120s", p[0], p[1], a)
		}
		for _, f := range []string{a, b} {
			checkPageFile(t, f)
		}
		if strings.HasPrefix(strings.ToLower(b), strings.ToLower(a)+string(filepath.Separator)) ||
			strings.HasPrefix(strings.ToLower(a), strings.ToLower(b)+string(filepath.Separator)) {
			t.Errorf("%s is a directory of %s", a, b)
		}
	}
	// Two spellings of one page share its file.
	if a, b := pageFile(t, "HTTP://A.test:80/x/../%7Eu#top"), pageFile(t, "http://a.test/~u"); a != b {
		t.Errorf("one page, two files: %s, %s", a, b)
	}
	for raw, want := range map[string]string{
		"http://a.test/blog/My-Post.html": filepath.Join("a.test", "blog", "^my-^post.html.txt"),
		"http://a.test/a%20b/c":           filepath.Join("a.test", "a%20b", "c.txt"),
		"https://a.test/":                 filepath.Join("a.test_https", "index_.txt"),
		// A name of 200 bytes is kept whole; one more and it is shortened.
		"http://a.test/" + strings.Repeat("x", 200): filepath.Join("a.test", strings.Repeat("x", 200)+".txt"),
		"http://a.test/" + strings.Repeat("x", 201): filepath.Join("a.test", strings.Repeat("x", 150)+"~"+sha128(strings.Repeat("x", 201))+".txt"),
	} {
		if got := pageFile(t, raw); got != want {
			t.Errorf("%s: file %s, want the readable %s", raw, got, want)
		}
	}
}

// checkPageFile fails on a name that would escape the output directory or
// that a file system refuses.
func checkPageFile(t testing.TB, f string) {
	t.Helper()
	if filepath.IsAbs(f) || len(f) > 1100 {
		t.Errorf("bad page file %.100s (%d bytes)", f, len(f))
	}
	for _, part := range strings.Split(f, string(filepath.Separator)) {
		if part == "" || part == "." || part == ".." || len(part) > 255 {
			t.Errorf("page file %.100s has the part %.60q", f, part)
		}
	}
}

// The mapping is injective: distinct pages (after normalisation) never share
// a file, case-insensitively, and no page's file is in another's path.
func FuzzPageFile(f *testing.F) {
	for _, s := range [][2]string{{"/", "/index"}, {"/a%20b", "/a_20b"}, {"/A", "/a"}, {"/p?x", "/p_3fx"}, {"/x.txt/y", "/x"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, p1, p2 string) {
		u1, err1 := url.Parse("http://a.test/" + strings.TrimPrefix(p1, "/"))
		u2, err2 := url.Parse("http://a.test/" + strings.TrimPrefix(p2, "/"))
		if err1 != nil || err2 != nil {
			return
		}
		a, b := PageFile(u1), PageFile(u2)
		checkPageFile(t, a)
		checkPageFile(t, b)
		la, lb := strings.ToLower(a), strings.ToLower(b)
		sameFile := la == lb
		samePage := normalizeKey(u1) == normalizeKey(u2)
		if sameFile != samePage {
			t.Errorf("%q → %s, %q → %s: same file %v, same page %v", normalizeKey(u1), a, normalizeKey(u2), b, sameFile, samePage)
		}
		sep := string(filepath.Separator)
		if strings.HasPrefix(lb, la+sep) || strings.HasPrefix(la, lb+sep) {
			t.Errorf("%s and %s: a file is the other's directory", a, b)
		}
	})
}

func normalizeKey(u *url.URL) string { return links.Normalize(u) }

// Save writes a page's URL, title and text only for an HTML page fetched
// ok whose directives let the bot keep it: never a challenge or block
// page (even one with HTML), never another type, never a page not kept;
// a store with no Dir, or none, writes nothing.
func TestPageStore_SavesOnlyHTMLPagesFetchedOk(t *testing.T) {
	html := http.Header{"Content-Type": {"text/html; charset=utf-8"}}
	body := []byte("<html><title>T</title><body>words here</body></html>")
	for _, tt := range []struct {
		name string
		p    *fetch.Page
		r    Result
		want bool
	}{
		{"html ok", &fetch.Page{Header: html, Body: body}, Result{Outcome: "ok"}, true},
		{"blocked html", &fetch.Page{Header: html, Body: body}, Result{Outcome: "blocked"}, false},
		{"pdf ok", &fetch.Page{Header: http.Header{"Content-Type": {"application/pdf"}}, Body: body}, Result{Outcome: "ok"}, false},
		{"not kept", &fetch.Page{Header: html, Body: body}, Result{Outcome: "ok", NotKept: true}, false},
		{"no page", nil, Result{Outcome: "ok"}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			u, _ := url.Parse("http://a.test/p")
			if err := (&PageStore{Dir: dir}).Save(u, tt.p, tt.r); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(filepath.Join(dir, PageFile(u)))
			if got := err == nil; got != tt.want {
				t.Fatalf("file written %v, want %v (%v)", got, tt.want, err)
			}
			if tt.want && string(b) != "http://a.test/p\nT\n\nwords here\n" {
				t.Errorf("file %q; want the URL, the title and the text", b)
			}
			if err := (&PageStore{}).Save(u, tt.p, tt.r); err != nil {
				t.Errorf("a store without Dir: %v", err)
			}
			if err := (*PageStore)(nil).Save(u, tt.p, tt.r); err != nil {
				t.Errorf("no store: %v", err)
			}
		})
	}
}
