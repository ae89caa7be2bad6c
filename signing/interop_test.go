package signing_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/goodbot-go/goodbot/internal/testenv"
	"github.com/goodbot-go/goodbot/signing"
	"github.com/goodbot-go/goodbot/signing/signingtest"
)

// npmWebBotAuth pins Cloudflare's verifier: the newest 0.1.x the registry
// lists (`npm view web-bot-auth versions`: 0.1.2, 0.1.3).
const npmWebBotAuth = "web-bot-auth@0.1.3"

var interopOnce sync.Once // the npm install runs at most once per test binary

// TestInterop_D2_NpmWebBotAuth checks both directions against Cloudflare's
// npm web-bot-auth: our quoted-string signature verifies with theirs, and
// theirs verifies with ours. When node or npm is missing, or the install
// fails (offline), it skips, or fails under CI (testenv.Missing); it skips
// in -short mode.
func TestInterop_D2_NpmWebBotAuth(t *testing.T) {
	if testing.Short() {
		t.Skip("interop needs npm; skipped in -short mode")
	}
	node, errNode := exec.LookPath("node")
	npm, errNpm := exec.LookPath("npm")
	if errNode != nil || errNpm != nil {
		testenv.Missing(t, "node or npm not installed")
	}
	ran := false
	interopOnce.Do(func() { ran = true })
	if !ran {
		t.Skip("interop already ran in this test binary")
	}
	dir := t.TempDir()
	script, err := os.ReadFile(filepath.Join("testdata", "interop", "wba.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	must(t, os.WriteFile(filepath.Join(dir, "wba.mjs"), script, 0o600))
	must(t, os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"private":true,"type":"module"}`), 0o600))
	ctx, cancel := context.WithTimeout(t.Context(), 45*time.Second)
	defer cancel()
	install := exec.CommandContext(ctx, npm, "install", "--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=error", npmWebBotAuth)
	install.Dir = dir
	install.Env = npmEnv(dir)
	install.WaitDelay = 5 * time.Second // a child left holding the pipes must not hang the test
	if out, err := install.CombinedOutput(); err != nil {
		testenv.Missing(t, "npm install %s failed (offline?): %v\n%s", npmWebBotAuth, err, out)
	}

	node1 := func(job map[string]any) (map[string]any, error) {
		in, _ := json.Marshal(job)
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, node, "wba.mjs")
		cmd.Dir = dir
		cmd.Env = npmEnv(dir)
		cmd.Stdin = bytes.NewReader(in)
		cmd.WaitDelay = 5 * time.Second
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("node: %v\n%s%s", err, out, stderr.Bytes())
		}
		var ans map[string]any
		if err := json.Unmarshal(out, &ans); err != nil {
			return nil, fmt.Errorf("node answer %q: %v", out, err)
		}
		return ans, nil
	}
	// The package must load on this node (an old node lacks WebCrypto
	// Ed25519 or the Fetch API): that is the machine, not our signatures.
	if ans, err := node1(map[string]any{"mode": "probe"}); err != nil || ans["ok"] != true {
		testenv.Missing(t, "%s does not run on this node: %v %v", npmWebBotAuth, err, ans)
	}
	run := func(job map[string]any) map[string]any {
		t.Helper()
		ans, err := node1(job)
		if err != nil {
			t.Fatal(err)
		}
		return ans
	}

	key := signingtest.DirectoriesKey()
	pubJWK, err := signing.MarshalPublicKeyJWK(pub(key))
	must(t, err)
	privJWK, err := signing.MarshalPrivateKeyJWK(key)
	must(t, err)
	const target = "https://example.com/listing?id=7"
	signedHeaders := func(form signing.AgentForm) map[string]string {
		s := &signing.Signer{Key: key, Agent: "https://directories.prosvita.io", Form: form, Nonce: true}
		req := httptest.NewRequest(http.MethodGet, target, nil)
		must(t, s.Sign(req))
		headers := map[string]string{}
		for _, h := range []string{"Signature", "Signature-Input", "Signature-Agent"} {
			headers[h] = req.Header.Get(h)
		}
		return headers
	}

	t.Run("ours verified by theirs", func(t *testing.T) {
		headers := signedHeaders(signing.QuotedString)
		ans := run(map[string]any{"mode": "verify", "url": target, "headers": headers, "jwk": json.RawMessage(pubJWK)})
		if ans["ok"] != true {
			t.Fatalf("web-bot-auth rejects our signature: %v\n%v", ans["error"], headers)
		}
		// And a tampered one is refused by them too (the check is real).
		headers["Signature-Agent"] = `"https://evil.example"`
		if ans := run(map[string]any{"mode": "verify", "url": target, "headers": headers, "jwk": json.RawMessage(pubJWK)}); ans["ok"] == true {
			t.Fatal("web-bot-auth accepted a tampered signature")
		}
	})

	// Not a requirement, a record: how 0.1.x treats the other two forms.
	for _, form := range []signing.AgentForm{signing.Dictionary, signing.BareURL} {
		ans := run(map[string]any{"mode": "verify", "url": target, "headers": signedHeaders(form), "jwk": json.RawMessage(pubJWK)})
		t.Logf("%s verifying our %v form: ok=%v %v", npmWebBotAuth, form, ans["ok"], ans["error"])
	}

	t.Run("theirs verified by ours", func(t *testing.T) {
		ans := run(map[string]any{"mode": "sign", "url": target, "agent": `"https://directories.prosvita.io"`, "jwk": json.RawMessage(privJWK)})
		hs, ok := ans["headers"].(map[string]any)
		if !ok {
			t.Fatalf("web-bot-auth could not sign: %v", ans)
		}
		req := httptest.NewRequest(http.MethodGet, target, nil)
		for k, v := range hs {
			req.Header.Set(k, v.(string))
		}
		ks, err := signing.NewKeySet(pub(key))
		must(t, err)
		res, err := (&signing.Verifier{Keys: ks}).Verify(req)
		if err != nil {
			t.Fatalf("our verifier rejects web-bot-auth's signature: %v\n%v", err, hs)
		}
		if res.Agent != "https://directories.prosvita.io" || res.Form != signing.QuotedString {
			t.Errorf("result %+v", res)
		}
	})
}

// npmEnv is the environment for npm and node: the npm cache lives in the
// test's own folder (so neither HOME nor the user's cache is needed or
// touched), and an unreachable registry fails fast instead of retrying for
// minutes.
func npmEnv(dir string) []string {
	return append(os.Environ(),
		"npm_config_cache="+filepath.Join(dir, ".npm-cache"),
		"npm_config_userconfig="+filepath.Join(dir, ".npmrc"),
		"npm_config_update_notifier=false",
		"npm_config_fetch_retries=0",
		"npm_config_fetch_timeout=15000",
	)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
