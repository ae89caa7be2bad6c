// Package testenv decides what the module's tests do when something they
// need from outside the module is missing: a data directory next to the
// repository (../shared), a service (redis-server) or a tool (node, npm).
//
// On a developer machine such a test is skipped, saying what is missing. In
// continuous integration (the environment variable CI set, as .ci/run does)
// it fails instead: CI installs everything the tests need (.ci/services),
// so a missing piece there is a broken build, not a reason to prove less.
//
// The package holds no state; it is imported by tests only.
package testenv

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// CI reports whether the tests run in continuous integration: the
// environment variable CI is set to anything but "" or a false value
// ("0", "false").
func CI() bool {
	v := os.Getenv("CI")
	if v == "" {
		return false
	}
	b, err := strconv.ParseBool(v)
	return err != nil || b
}

// Missing reports that something t needs is absent, with a message saying
// what and why: t fails under [CI] and is skipped otherwise. Either way t
// stops here.
func Missing(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if CI() {
		t.Fatalf("%s (CI is set: a test must not skip for what .ci/services installs)", msg)
	}
	t.Skipf("%s; skipped on this machine (with CI set this fails)", msg)
}

// Shared returns the path of elem under the shared data directory, "shared"
// next to the repository root (../shared seen from the root), calling
// [Missing] when that path does not exist.
func Shared(t testing.TB, elem ...string) string {
	t.Helper()
	root, err := moduleRoot()
	if err != nil {
		Missing(t, "shared data: %v", err)
	}
	p := filepath.Join(append([]string{root, "..", "shared"}, elem...)...)
	if _, err := os.Stat(p); err != nil {
		Missing(t, "shared data absent: %v", err)
	}
	return p
}

// moduleRoot returns the nearest directory at or above the working
// directory (a test's package directory) that holds go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above the working directory")
		}
		dir = parent
	}
}
