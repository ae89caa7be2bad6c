// Package signing signs a bot's HTTP requests with RFC 9421 HTTP Message
// Signatures in the Web Bot Auth profile, publishes the bot's key directory,
// and verifies such signatures on the site owner's side.
//
// # Signing
//
// A [Signer] holds an Ed25519 key (any crypto.Signer) and the bot's
// Signature-Agent URL. [Transport] wraps an http.RoundTripper and signs a
// clone of every request at send time, so each redirect hop, each retry and
// each request that waited for its turn at a host is signed afresh:
//
//	client := &http.Client{Transport: &signing.Transport{
//		Signer: &signing.Signer{Key: key, Agent: "https://bothy.tools"},
//	}}
//
// Every signature covers @authority (lowercased, default port removed) and
// Signature-Agent, and carries created, expires (60 s unless
// Signer.Expires says otherwise), keyid (the RFC 7638 JWK SHA-256 thumbprint
// of the key, base64url), tag="web-bot-auth" and, optionally, a random nonce.
// Signature-Agent is sent in one of three forms, see [AgentForm] for the
// trade-off: a quoted structured-field string (default; what Cloudflare and
// npm web-bot-auth 0.1.x verify), a bare URL, or the dictionary form
// sig1="..." covered as "signature-agent";key="sig1" (the newest drafts).
//
// # Key directory
//
// [Directory] lists every key of the bot (rotation: one signs requests, all
// are published) as a JWKS with kid = thumbprint and media type
// application/http-message-signatures-directory+json, and is the http.Handler
// for /.well-known/http-message-signatures-directory. Each response is signed
// once per listed key (tag="http-message-signatures-directory", covering
// "@authority";req and Content-Digest). Key helpers: [GenerateKey],
// [ParsePrivateKeyPEM], [MarshalPrivateKeyPEM] (PKCS#8), JWK load and save,
// [Thumbprint], [MarshalJWKS].
//
// # Verifying
//
// [Verifier] checks incoming requests ([Verifier.Verify], or
// [Verifier.Middleware]): it reads all three Signature-Agent forms, fetches
// and caches the agent's directory (checking the directory's own
// signatures), picks the key by keyid and rejects missing or wrong
// parameters, stale or future signatures, uncovered @authority, unknown keys
// and tampered fields. Failures are [*VerifyError] values matching
// [ErrInvalidSignature]. With [Verifier.Keys] set it uses a fixed key set and
// fetches nothing.
//
// # Built on httpsign, and where not
//
// Request signatures are made with github.com/yaronf/httpsign v0.3.2 and keys
// are handled with github.com/lestrrat-go/jwx/v2. httpsign is worked around
// where it is in the way: created cannot be set (it is time.Now() inside
// httpsign, which testing/synctest fakes), @authority is req.Host as is and
// the query is parsed (so httpsign is given a minimal request carrying the
// normalised authority and Signature-Agent only), verification mutates
// req.URL and its policies only check parameters that are present.
//
// For those reasons the verifier, the directory response signatures and the
// RFC 9421 Appendix B.2.6 reproduction use a small RFC 9421 engine of this
// package (base.go) built on github.com/dunglas/httpsfv, the structured field
// library httpsign itself uses: verification must select the key from keyid
// before checking, must enforce the presence of created, expires, keyid and
// tag, must never touch the request, and must resolve
// "signature-agent";key="sig1" against the dictionary member the signature
// covers; response signatures need "@authority";req over a ResponseWriter;
// the RFC vector needs a settable created. Tests check each side against the
// other: requests signed through httpsign verify with the engine, and
// httpsign's verifier accepts them too.
package signing
