package testenv

import (
	"bufio"
	"os"
	"os/exec"
	"testing"
)

// Child starts this test binary again as a child process with the
// environment variable env set to value (the test's TestMain or benchmark
// turns into the child's work when it sees it), running no test itself,
// its stderr the parent's. It returns the process and a scanner of its
// standard output; the caller kills it or waits for it.
func Child(t testing.TB, env, value string) (*exec.Cmd, *bufio.Scanner) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), env+"="+value)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, bufio.NewScanner(stdout)
}
