// Package browser loads pages in Debian's chromium, headless, for the
// examples' browser tests: the DOM a person's browser builds, the console
// lines (script errors among them) and screenshots.
//
// Tests call [Find] first: without chromium the test is skipped on a
// developer machine (saying why) and fails when the environment variable
// CI is set, where .ci/services installs it.
package browser

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

// Timeout bounds one chromium run.
const Timeout = 60 * time.Second

// Browser is a chromium binary found by [Find].
type Browser struct {
	Path string
}

// Find returns chromium (or chromium-browser, google-chrome) from PATH, or
// the CHROMIUM environment variable when set. Without one it skips t, or
// fails it when CI is set.
func Find(t testing.TB) Browser {
	t.Helper()
	names := []string{"chromium", "chromium-browser", "google-chrome"}
	if p := os.Getenv("CHROMIUM"); p != "" {
		names = []string{p}
	}
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return Browser{Path: p}
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("browser test: chromium not found in PATH (%s) and CI is set: .ci/services must install Debian's chromium", strings.Join(names, ", "))
	}
	t.Skipf("browser test: chromium not found in PATH (%s); install Debian's chromium to run it", strings.Join(names, ", "))
	return Browser{}
}

// Page is what chromium made of a URL.
type Page struct {
	DOM     string   // the serialised DOM after load (--dump-dom)
	Console []string // the page's console messages, one per line
}

var consoleLine = regexp.MustCompile(`:CONSOLE[^\]]*\] (.*)$`)

// ScriptErrors returns the console messages that report an uncaught script
// error or a refused resource.
func (p Page) ScriptErrors() []string {
	var out []string
	for _, l := range p.Console {
		if strings.Contains(l, "Uncaught") || strings.Contains(l, "Refused to") || strings.Contains(l, "Failed to load") {
			out = append(out, l)
		}
	}
	return out
}

func (b Browser) run(t testing.TB, extra ...string) (stdout, stderr []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	args := []string{"--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars",
		"--user-data-dir=" + t.TempDir(), "--enable-logging=stderr", "--v=0"}
	cmd := exec.CommandContext(ctx, b.Path, append(args, extra...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %v: %v (timeout %v)\n%s", extra, err, Timeout, tail(errb.String(), 2000))
	}
	return out.Bytes(), errb.Bytes()
}

// Load loads url and returns the DOM and the console messages.
func (b Browser) Load(t testing.TB, url string) Page {
	t.Helper()
	out, errs := b.run(t, "--dump-dom", url)
	p := Page{DOM: string(out)}
	for _, l := range strings.Split(string(errs), "\n") {
		if m := consoleLine.FindStringSubmatch(l); m != nil {
			p.Console = append(p.Console, m[1])
		}
	}
	return p
}

// Screenshot saves a PNG of url, width × height pixels, to path.
func (b Browser) Screenshot(t testing.TB, url, path string, width, height int) {
	t.Helper()
	b.run(t, "--screenshot="+path, fmt.Sprintf("--window-size=%d,%d", width, height), url)
	if st, err := os.Stat(path); err != nil || st.Size() == 0 {
		t.Fatalf("screenshot %s not written: %v", path, err)
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}
