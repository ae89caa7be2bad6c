package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goodbot-go/goodbot/examples/internal/bottest"
	"github.com/goodbot-go/goodbot/examples/internal/demo"
)

// The demo runs every bot against the built-in web on loopback and every
// promise it shows is kept (B1-B12, H1-H8, S1-S11, D1-D14 as listed in its
// output); the timeline shows no host with two requests at once (C3).
func TestDemo_AllPromisesKept(t *testing.T) {
	if testing.Short() {
		t.Skip("the demo runs on loopback in real (scaled) time")
	}
	dir := t.TempDir()
	out := bottest.RunWith(t, demo.Run, nil, "-out", dir, "-scale", "0.05")
	if out.Code != 0 || !strings.Contains(out.Stdout, " 0 broken") || strings.Contains(out.Stdout, "BROKEN") {
		t.Fatalf("exit %d\n%s\n%s", out.Code, out.Stdout, out.Stderr)
	}
	for _, id := range []string{"B1", "B3", "B9", "B10", "H4", "H5", "H8", "S8", "S11", "D6", "D12", "D13", "D14"} {
		if !strings.Contains(out.Stdout, "   "+id+" ") {
			t.Errorf("promise %s not shown", id)
		}
	}
	tl, err := os.ReadFile(filepath.Join(dir, "timeline.html"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(tl), "Overlapping requests") || !strings.Contains(string(tl), "No host ever had two requests in flight at once") {
		t.Error("timeline shows overlapping requests")
	}
	for _, f := range []string{"readiness.html", "readiness.md", "bothy-pages/stmarys-parish.test/mass-times.txt"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("demo output %s: %v", f, err)
		}
	}
}
