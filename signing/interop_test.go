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
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goodbot-go/goodbot/internal/testenv"
	"github.com/goodbot-go/goodbot/signing"
	"github.com/goodbot-go/goodbot/signing/signingtest"
)

// The npm packages checked against, pinned.
var npmPackages = []string{
	"web-bot-auth@0.1.3",            // Cloudflare's verifier; bundles http-message-sig 0.2.0
	"http-message-sig@0.3.0",        // the RFC 9421 library web-bot-auth builds on, current release
	"http-message-signatures@1.0.6", // an independent RFC 9421 implementation
}

var interopOnce sync.Once // the npm install runs at most once per test binary

// unavailable skips the test on a developer machine and fails it in CI
// (env CI set), where node and npm are installed (.ci/services).
func unavailable(t *testing.T, format string, args ...any) {
	t.Helper()
	testenv.Missing(t, "interop cannot run: "+format, args...)
}

type nodeRunner func(job map[string]any) map[string]any

// npmInterop installs the packages into a temporary folder with its own
// npm cache and returns a function that runs one job of
// testdata/interop/interop.mjs.
func npmInterop(t *testing.T) nodeRunner {
	if testing.Short() {
		t.Skip("interop needs npm; skipped in -short mode")
	}
	node, errNode := exec.LookPath("node")
	npm, errNpm := exec.LookPath("npm")
	if errNode != nil || errNpm != nil {
		unavailable(t, "node or npm not installed (%v, %v)", errNode, errNpm)
	}
	ran := false
	interopOnce.Do(func() { ran = true })
	if !ran {
		t.Skip("interop already ran in this test binary")
	}
	dir := t.TempDir()
	script, err := os.ReadFile(filepath.Join("testdata", "interop", "interop.mjs"))
	must(t, err)
	must(t, os.WriteFile(filepath.Join(dir, "interop.mjs"), script, 0o600))
	must(t, os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"private":true,"type":"module"}`), 0o600))
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	args := append([]string{"install", "--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=error"}, npmPackages...)
	install := exec.CommandContext(ctx, npm, args...)
	install.Dir = dir
	install.Env = npmEnv(dir)
	install.WaitDelay = 5 * time.Second // a child left holding the pipes must not hang the test
	if out, err := install.CombinedOutput(); err != nil {
		unavailable(t, "npm install %v failed (offline?): %v\n%s", npmPackages, err, out)
	}
	node1 := func(job map[string]any) (map[string]any, error) {
		in, _ := json.Marshal(job)
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, node, "interop.mjs")
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
	// The packages must load on this node (an old node lacks WebCrypto
	// Ed25519 or the Fetch API): that is the machine, not our signatures.
	if ans, err := node1(map[string]any{"mode": "probe"}); err != nil || ans["ok"] != true {
		unavailable(t, "%v do not run on this node: %v %v", npmPackages, err, ans)
	}
	return func(job map[string]any) map[string]any {
		t.Helper()
		ans, err := node1(job)
		if err != nil {
			t.Fatal(err)
		}
		return ans
	}
}

// TestInterop_D2_Npm checks both directions against three npm
// implementations: http-message-sig 0.3.0 in all three Signature-Agent
// forms, Cloudflare's web-bot-auth 0.1.3 (which rejects the dictionary
// form: asserted, so that a fixed release is noticed), and
// http-message-signatures 1.0.6 for plain RFC 9421.
func TestInterop_D2_Npm(t *testing.T) {
	run := npmInterop(t)
	key := signingtest.DirectoriesKey()
	pubJWK, err := signing.MarshalPublicKeyJWK(pub(key))
	must(t, err)
	privJWK, err := signing.MarshalPrivateKeyJWK(key)
	must(t, err)
	kid, _ := signing.Thumbprint(pub(key))
	ks, err := signing.NewKeySet(pub(key))
	must(t, err)
	const target = "https://example.com/listing?id=7"
	const agent = "https://directories.prosvita.io"
	fieldText := map[signing.AgentForm]string{
		signing.Dictionary:   `sig1="` + agent + `"`,
		signing.QuotedString: `"` + agent + `"`,
		signing.BareURL:      agent,
	}
	agentComp := func(form signing.AgentForm) string {
		if form == signing.Dictionary {
			return "signature-agent;key=sig1"
		}
		return "signature-agent"
	}
	ours := func(form signing.AgentForm) map[string]string {
		s := &signing.Signer{Key: key, Agent: agent, Form: form, Nonce: true}
		req := httptest.NewRequest(http.MethodGet, target, nil)
		must(t, s.Sign(req))
		h := map[string]string{}
		for _, name := range []string{"Signature", "Signature-Input", "Signature-Agent"} {
			h[name] = req.Header.Get(name)
		}
		return h
	}
	verifyJob := func(lib string, form signing.AgentForm, h map[string]string) map[string]any {
		return map[string]any{"lib": lib, "mode": "verify", "url": target, "headers": h, "jwk": json.RawMessage(pubJWK),
			"label": "sig1", "keyid": kid, "components": []string{"@method", "@authority", "@path", agentComp(form)}}
	}
	oursVerifies := func(t *testing.T, hs map[string]any, form signing.AgentForm) {
		t.Helper()
		req := httptest.NewRequest(http.MethodGet, target, nil)
		for k, v := range hs {
			req.Header.Set(k, v.(string))
		}
		res, err := (&signing.Verifier{Keys: ks}).Verify(req)
		if err != nil {
			t.Fatalf("our verifier rejects their signature: %v\n%v", err, hs)
		}
		if res.Agent != agent || res.Form != form {
			t.Errorf("result %+v", res)
		}
		req.Header.Set("Signature-Agent", strings.Replace(req.Header.Get("Signature-Agent"), "prosvita", "evil", 1))
		if _, err := (&signing.Verifier{Keys: ks}).Verify(req); err == nil {
			t.Error("our verifier accepts their signature with another agent")
		}
	}

	for _, form := range []signing.AgentForm{signing.Dictionary, signing.QuotedString, signing.BareURL} {
		t.Run("http-message-sig/ours verified by theirs/"+form.String(), func(t *testing.T) {
			h := ours(form)
			if ans := run(verifyJob("hms", form, h)); ans["ok"] != true || ans["tag"] != "web-bot-auth" {
				t.Fatalf("http-message-sig rejects our signature: %v\n%v", ans, h)
			}
			h["Signature-Agent"] = strings.Replace(h["Signature-Agent"], "prosvita", "evil", 1)
			if ans := run(verifyJob("hms", form, h)); ans["ok"] == true {
				t.Fatal("http-message-sig accepted a tampered signature")
			}
		})
		t.Run("http-message-sig/theirs verified by ours/"+form.String(), func(t *testing.T) {
			ans := run(map[string]any{"lib": "hms", "mode": "sign", "url": target, "jwk": json.RawMessage(privJWK), "label": "sig1",
				"keyid": kid, "nonce": "bm9uY2U=", "headers": map[string]string{"Signature-Agent": fieldText[form]},
				"components": []string{"@method", "@authority", "@path", agentComp(form)}})
			hs, ok := ans["headers"].(map[string]any)
			if !ok {
				t.Fatalf("http-message-sig could not sign: %v", ans)
			}
			oursVerifies(t, hs, form)
		})
	}

	// web-bot-auth 0.1.3 verifies the quoted and bare forms, and fails on
	// the dictionary form the draft requires (the http-message-sig 0.2.0
	// it bundles cannot resolve "signature-agent";key=...). When this
	// assertion fails, a fixed release is out: update the pin and the
	// documentation of AgentForm.
	for _, tc := range []struct {
		form signing.AgentForm
		ok   bool
	}{{signing.QuotedString, true}, {signing.BareURL, true}, {signing.Dictionary, false}} {
		t.Run("web-bot-auth/ours verified by theirs/"+tc.form.String(), func(t *testing.T) {
			h := ours(tc.form)
			ans := run(verifyJob("wba", tc.form, h))
			if (ans["ok"] == true) != tc.ok {
				t.Fatalf("web-bot-auth 0.1.3 on our %v form: %v, want ok=%v\n%v", tc.form, ans, tc.ok, h)
			}
			if !tc.ok {
				t.Logf("web-bot-auth 0.1.3 on the dictionary form: %v", ans["error"])
			}
			if tc.ok {
				h["Signature-Agent"] = strings.Replace(h["Signature-Agent"], "prosvita", "evil", 1)
				if ans := run(verifyJob("wba", tc.form, h)); ans["ok"] == true {
					t.Fatal("web-bot-auth accepted a tampered signature")
				}
			}
		})
	}
	t.Run("web-bot-auth/theirs verified by ours", func(t *testing.T) {
		ans := run(map[string]any{"lib": "wba", "mode": "sign", "url": target, "jwk": json.RawMessage(privJWK),
			"headers": map[string]string{"Signature-Agent": fieldText[signing.QuotedString]}})
		hs, ok := ans["headers"].(map[string]any)
		if !ok {
			t.Fatalf("web-bot-auth could not sign: %v", ans)
		}
		oursVerifies(t, hs, signing.QuotedString)
	})

	// Plain RFC 9421 with an implementation that knows nothing of Web Bot
	// Auth.
	t.Run("http-message-signatures/ours verified by theirs", func(t *testing.T) {
		h := ours(signing.Dictionary)
		if ans := run(verifyJob("rfc", signing.Dictionary, h)); ans["ok"] != true {
			t.Fatalf("http-message-signatures rejects our signature: %v\n%v", ans, h)
		}
		h["Signature-Input"] = strings.Replace(h["Signature-Input"], `tag="web-bot-auth"`, `tag="other"`, 1)
		if ans := run(verifyJob("rfc", signing.Dictionary, h)); ans["ok"] == true {
			t.Fatal("http-message-signatures accepted a tampered signature")
		}
	})
	t.Run("http-message-signatures/theirs verified by ours", func(t *testing.T) {
		ans := run(map[string]any{"lib": "rfc", "mode": "sign", "url": target, "jwk": json.RawMessage(privJWK), "label": "sig1",
			"keyid": kid, "headers": map[string]string{"Signature-Agent": fieldText[signing.QuotedString]},
			"components": []string{"@method", "@authority", "@path", "signature-agent"}})
		hs, ok := ans["headers"].(map[string]any)
		if !ok {
			t.Fatalf("http-message-signatures could not sign: %v", ans)
		}
		oursVerifies(t, hs, signing.QuotedString)
		req := httptest.NewRequest(http.MethodGet, target, nil)
		for k, v := range hs {
			req.Header.Set(k, v.(string))
		}
		if _, err := signing.VerifyRFC9421(req, "sig1", pub(key), "@authority", "@path"); err != nil {
			t.Fatalf("VerifyRFC9421: %v", err)
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
