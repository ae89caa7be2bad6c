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
//		Signer: &signing.Signer{Key: key, Agent: "https://bot.example.com"},
//	}}
//
// Every signature covers @method, @authority and @path (Signer.Components
// chooses others: @target-uri, @query, named request headers...) and the
// Signature-Agent field, and carries created, expires (60 s unless
// Signer.Expires says otherwise; more than 24 h is refused), keyid (the RFC
// 7638 JWK SHA-256 thumbprint of the key, base64url), tag="web-bot-auth"
// and, optionally, a random nonce. Signature-Agent is sent in one of three
// forms, see [AgentForm] for the trade-off: the dictionary form
// sig1="https://..." covered as "signature-agent";key="sig1" (the default,
// what draft-ietf-webbotauth-httpsig-protocol requires of signers), or, as
// opt-ins for older verifiers, a quoted structured-field string or a bare
// URL.
//
// A server that answers 401, 403 or 429 with Accept-Signature (RFC 9421
// section 5.1) asks for a signature over given components with a given
// nonce: [ParseAcceptSignature] reads the request, [Signer.SignRequested]
// honours it (or says, with a [*ComponentError], why it cannot), and
// [Transport] signs that way under a context from [WithRequested].
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
// [Thumbprint], [MarshalJWKS]. Package identity builds the directory, the
// Signature Agent Card and the IP range file a bot publishes from its
// fetch.Bot profile.
//
// # Verifying
//
// [Verifier] checks incoming requests ([Verifier.Verify], or
// [Verifier.Middleware], which annotates by default and can enforce): it
// reads all three Signature-Agent forms, resolves the member the signature
// covers (an https URL of a JWKS; a bare origin means its well-known
// directory, the one place where keys bind to a domain and must have signed
// the directory response), caches key sets per URL — URLs normalised as RFC
// 3986 section 6 says, so every spelling of one URL is one identifier,
// fetched as normalised — and rejects
// missing or wrong parameters, stale or future signatures, uncovered
// components, tampered fields and, with a [NonceCache], replays. Its
// fetches are guarded against server-side request forgery: no redirects,
// no internal addresses (checked on the address dialled), bounded bytes
// (body and header), keys, time and work, and at most
// [Verifier.MaxFetches] fetches at once for agents not yet seen to verify.
// Every verdict is one of three outcomes ([Outcome]):
// verified, invalid ([ErrInvalidSignature]) or unverified ([ErrUnverified]:
// no signature, or not enough to decide), failures being [*VerifyError]
// values. With [Verifier.Keys] set it uses a fixed key set and fetches
// nothing. [VerifyRFC9421] checks a plain RFC 9421 signature with a given
// key.
//
// # httpsign as the reference
//
// Keys are handled with github.com/lestrrat-go/jwx/v2. Signatures are made
// and checked by a small RFC 9421 engine of this package (base.go) built on
// github.com/dunglas/httpsfv, the structured field library
// github.com/yaronf/httpsign v0.3.2 itself uses; httpsign's signer and
// verifier stay in the tests as the independent reference.
//
// Request signatures were first made with httpsign, which is in the way in
// two respects. It costs: a signature took about 10 microseconds and some 80
// allocations on top of the Ed25519 signing itself (it parses the request,
// rebuilds the covered-component list and parameters through httpsfv and
// formats the fields on every call), while a bot's signatures differ only
// in authority, created, expires and nonce. Sign now serialises everything
// else once per Signer and appends those four, so a signature costs one
// Ed25519 signing plus a few hundred bytes of appends; the tests check the
// output byte for byte against httpsign's signer (fake time fixes created)
// and have httpsign's verifier accept it. And it had to be worked around:
// created cannot be set, @authority is req.Host as is and the query is
// parsed (so it was fed a minimal request), verification mutates req.URL and
// its policies only check parameters that are present.
//
// For the same reasons the verifier, the directory response signatures and
// the RFC 9421 Appendix B.2.6 reproduction use the engine: verification must
// select the key from keyid before checking, must enforce the presence of
// created, expires, keyid and tag, must never touch the request, and must
// resolve "signature-agent";key="sig1" against the dictionary member the
// signature covers; response signatures need "@authority";req over a
// ResponseWriter; the RFC vector needs a settable created.
package signing
