// Package bottest runs an example bot's Run function against a fetchtest
// web in a test, and reads back what it printed. It is used by the bots'
// main_test.go files.
package bottest

import (
	"context"
	"crypto/ed25519"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/goodbot-go/goodbot/examples/internal/botkit"
	"github.com/goodbot-go/goodbot/fetch/fetchtest"
	"github.com/goodbot-go/goodbot/signing"
)

// RunFunc is a bot's run function.
type RunFunc = botkit.RunFunc

// Output is what one run printed and returned.
type Output struct {
	Code    int
	Stdout  string
	Stderr  string
	Events  []botkit.Event
	Results []botkit.Result // parsed from Stdout when -json was given
}

// Result returns the result line for url (by URL), if any.
func (o *Output) Result(url string) (botkit.Result, bool) {
	for _, r := range o.Results {
		if r.URL == url {
			return r, true
		}
	}
	return botkit.Result{}, false
}

// Run runs run with args against web's in-memory transport (usable inside a
// synctest bubble).
func Run(t testing.TB, run RunFunc, web *fetchtest.Web, args ...string) *Output {
	t.Helper()
	return RunWith(t, run, web.RoundTripper(), args...)
}

// RunWith runs run with args over transport tr (nil: the bot's own).
func RunWith(t testing.TB, run RunFunc, tr http.RoundTripper, args ...string) *Output {
	t.Helper()
	return RunScaled(t, run, tr, 1, args...)
}

// RunScaled is RunWith with the bot's durations multiplied by scale (for
// tests over real sockets, where time is not fake).
func RunScaled(t testing.TB, run RunFunc, tr http.RoundTripper, scale float64, args ...string) *Output {
	t.Helper()
	var stdout, stderr botkit.SyncBuffer
	out := &Output{}
	var mu sync.Mutex
	env := botkit.Env{Stdout: &stdout, Stderr: &stderr, Transport: tr, Scale: scale, Observe: func(e botkit.Event) {
		mu.Lock()
		out.Events = append(out.Events, e)
		mu.Unlock()
	}}
	out.Code = run(context.Background(), args, env)
	out.Stdout, out.Stderr = stdout.String(), stderr.String()
	out.Results = botkit.ParseResults(out.Stdout)
	if testing.Verbose() {
		t.Logf("exit %d\nstderr:\n%s", out.Code, out.Stderr)
	}
	return out
}

// KeyFile writes key as a PKCS#8 PEM file in a temp dir and returns its path.
func KeyFile(t testing.TB, key ed25519.PrivateKey) string {
	t.Helper()
	b, err := signing.MarshalPrivateKeyPEM(key)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "key.pem")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// Verifier returns a signature check for fetchtest.Signed that trusts only
// key (no directory fetch).
func Verifier(t testing.TB, key ed25519.PrivateKey) func(*http.Request) error {
	t.Helper()
	ks, err := signing.NewKeySet(key.Public().(ed25519.PublicKey))
	if err != nil {
		t.Fatal(err)
	}
	v := &signing.Verifier{Keys: ks}
	return func(r *http.Request) error {
		_, err := v.Verify(r)
		return err
	}
}
