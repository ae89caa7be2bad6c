package testenv

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

func TestCI(t *testing.T) {
	for v, want := range map[string]bool{"": false, "0": false, "false": false, "1": true, "true": true, "yes": true} {
		t.Setenv("CI", v)
		if got := CI(); got != want {
			t.Errorf("CI=%q: CI() = %v, want %v", v, got, want)
		}
	}
}

// Missing skips on a developer machine and fails under CI: run in a child
// test binary, where the outcome can be read.
func TestMissing(t *testing.T) {
	if os.Getenv("TESTENV_CHILD") != "" {
		Missing(t, "redis-server not found")
		return
	}
	for _, tt := range []struct {
		ci, want string
		fails    bool
	}{
		{"", "--- SKIP", false},
		{"true", "--- FAIL", true},
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestMissing$", "-test.v")
		cmd.Env = append(os.Environ(), "TESTENV_CHILD=1", "CI="+tt.ci)
		out, err := cmd.CombinedOutput()
		if (err != nil) != tt.fails || !strings.Contains(string(out), tt.want) || !strings.Contains(string(out), "redis-server not found") {
			t.Errorf("CI=%q: err %v, want %s:\n%s", tt.ci, err, tt.want, out)
		}
	}
}

func TestShared(t *testing.T) {
	p := Shared(t, "BEHAVIOURS.md") // skips (fails under CI) when ../shared is absent
	if !strings.HasSuffix(p, "shared/BEHAVIOURS.md") {
		t.Errorf("Shared = %q", p)
	}
}
