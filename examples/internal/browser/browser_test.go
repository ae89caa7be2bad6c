package browser

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The checks the browser tests rely on can fail: a page with a failing
// script is caught, its DOM is what the script built before failing.
func TestLoad_CatchesScriptErrors(t *testing.T) {
	b := Find(t)
	page := filepath.Join(t.TempDir(), "broken.html")
	html := `<!doctype html><p id="m">static</p><script>document.getElementById("m").textContent = "built"; noSuchFunction();</script>`
	if err := os.WriteFile(page, []byte(html), 0o600); err != nil {
		t.Fatal(err)
	}
	p := b.Load(t, "file://"+page)
	if !strings.Contains(p.DOM, `<p id="m">built</p>`) {
		t.Errorf("DOM %q: the script's change is missing", p.DOM)
	}
	errs := p.ScriptErrors()
	if len(errs) != 1 || !strings.Contains(errs[0], "Uncaught ReferenceError: noSuchFunction is not defined") {
		t.Errorf("script errors %q, console %q", errs, p.Console)
	}
}
