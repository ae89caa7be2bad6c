package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/goodbot-go/goodbot/examples/internal/bottest"
	"github.com/goodbot-go/goodbot/examples/internal/demo"
)

// The demo runs every bot against the built-in web on loopback, narrates
// every promise of BEHAVIOURS.md (C1-C7, B1-B12, H1-H9, S1-S11, D1-D14), and
// every one it shows is kept; the timeline shows no host with two requests
// at once (C3) and lists the pauses with their reasons.
func TestDemo_AllPromisesKept(t *testing.T) {
	if testing.Short() {
		t.Skip("the demo runs on loopback in real (scaled) time")
	}
	dir := t.TempDir()
	out := bottest.RunWith(t, demo.Run, nil, 0, "-out", dir, "-scale", "0.05")
	if !strings.Contains(out.Stdout, " 0 broken") || strings.Contains(out.Stdout, "BROKEN") {
		t.Fatalf("%s\n%s", out.Stdout, out.Stderr)
	}
	for _, id := range promiseIDs(t) {
		if !strings.Contains(out.Stdout, "   "+id+" ") {
			t.Errorf("promise %s not narrated", id)
		}
	}
	tl, err := os.ReadFile(filepath.Join(dir, "timeline.html"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(tl), "Overlapping requests") || !strings.Contains(string(tl), "No host ever had two requests in flight at once") {
		t.Error("timeline shows overlapping requests")
	}
	if !strings.Contains(string(tl), "retry-after (status 429)") {
		t.Error("timeline does not list the pauses with their reasons")
	}
	for _, f := range []string{"readiness.html", "readiness.md", "bothy-pages/stmarys-parish.test/mass-times.txt"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("demo output %s: %v", f, err)
		}
	}
}

// promiseIDs returns the promise IDs of ../shared/BEHAVIOURS.md, or a fixed
// list when the shared directory is absent.
func promiseIDs(t *testing.T) []string {
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "shared", "BEHAVIOURS.md"))
	if err != nil {
		t.Logf("BEHAVIOURS.md not found (%v): checking a fixed list", err)
		return []string{"C1", "C7", "B1", "B6", "B12", "H1", "H9", "S1", "S11", "D1", "D11", "D14"}
	}
	var ids []string
	for _, m := range regexp.MustCompile(`(?m)^- ([CBHSD][0-9]+) `).FindAllStringSubmatch(string(b), -1) {
		ids = append(ids, m[1])
	}
	if len(ids) < 40 {
		t.Fatalf("only %d promise IDs read from BEHAVIOURS.md", len(ids))
	}
	return ids
}

// -h prints the flags and exits 0, running nothing.
func TestDemo_Help(t *testing.T) {
	out := bottest.RunWith(t, demo.Run, nil, 0, "-h")
	if !strings.Contains(out.Stderr, "-scale") || out.Stdout != "" {
		t.Errorf("-h:\n%s%s", out.Stdout, out.Stderr)
	}
}
