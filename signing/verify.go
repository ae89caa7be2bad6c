package signing

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/singleflight"
)

// Defaults of a zero Verifier.
const (
	DefaultSkew              = 60 * time.Second
	DefaultDirectoryTTL      = time.Hour      // when the directory sends neither max-age nor Expires
	MaxDirectoryTTL          = 24 * time.Hour // longer lifetimes are cut to this
	DefaultNegativeTTL       = time.Minute
	MaxNegativeTTL           = 5 * time.Minute
	DefaultMaxDirectoryBytes = 256 << 10
	DefaultMaxKeys           = 32 // keys in one directory; more and it is refused
	DefaultMaxSignatures     = 4  // web-bot-auth signatures tried per request
	DefaultFetchTimeout      = 10 * time.Second
	DefaultMaxFetches        = 16 // key set fetches of new agents in flight at once
	// MaxDirectoryHeaderBytes bounds the status line and header fields of
	// a key set's answer (net/http's own bound is 10 MiB): past it the
	// fetch fails and its connection is closed.
	MaxDirectoryHeaderBytes = 64 << 10
	// MaxDirectories bounds each of the verifier's two directory caches
	// (agents that verified, and agents not yet seen to verify).
	MaxDirectories = 1024
)

// Result describes a verified signature.
//
// It is plain data; a nil *Result comes with every error, and a zero
// Result is never returned.
type Result struct {
	Label      string    // signature label, e.g. "sig1"
	KeyID      string    // keyid (the key's thumbprint)
	Agent      string    // Signature-Agent URL the signature covers, as sent; "" if it covers none
	Form       AgentForm // the Signature-Agent form, when Agent is set
	Created    time.Time
	Expires    time.Time // zero when the signature has none (VerifyRFC9421 only)
	Nonce      string
	Components []string // covered component identifiers, serialised
	// Directory is the identifier the key was resolved under: the URL of
	// the key set fetched, without query, normalised as RFC 3986 sections
	// 6.2.2 and 6.2.3 say (so every spelling of one URL gives one
	// identifier). Empty when the key came from Verifier.Keys.
	Directory string
	// Domain is the host the key is bound to: set only when the key set
	// was fetched from the well-known path and each key used proved
	// possession by signing the directory response for that host.
	Domain string
}

// MiddlewareMode selects what [Verifier.Middleware] does with requests
// that do not verify.
type MiddlewareMode int

const (
	// Annotate passes every request on, the verdict in its context (see
	// VerdictFromContext): unsigned traffic, people first of all, is not
	// turned away. The zero value.
	Annotate MiddlewareMode = iota
	// Enforce answers every request that does not verify with 401
	// Unauthorized and the reason; only verified requests reach the
	// handler.
	Enforce
)

// Verifier checks Web Bot Auth signatures on incoming requests: the site
// owner's side, and this package's own test oracle.
//
// With Keys set it verifies against that fixed set and never fetches. With
// Keys nil it resolves the Signature-Agent member the signature covers: an
// https URL of a JSON Web Key Set, fetched with its path normalised as RFC
// 3986 section 6 says (one URL, however spelt, is one key set); a bare
// origin (no path or "/", and no query) means its
// /.well-known/http-message-signatures-directory. Only a key set
// fetched from that well-known path binds the key to the host; there each
// key is used only if it signed the directory response for that host
// (unless AcceptUnsignedDirectory), and the Result names the Domain.
//
// Fetching URLs chosen by unauthenticated requests is guarded: redirects
// are never followed (a 3xx is a failed fetch), connections to loopback,
// private, link-local, unspecified, multicast, shared, broadcast and other
// addresses IANA marks as not globally reachable, also in an IPv6 form
// (IPv4-mapped, NAT64 64:ff9b::/96, IPv4-compatible, 6to4 or Teredo,
// judged as the IPv4 address they reach), are refused on
// the address actually dialled unless AllowInternal lists them (the same
// ranges a fetch.Bot refuses), and each fetch is capped in bytes
// (MaxDirectoryBytes), keys (MaxKeys) and time (FetchTimeout), and its
// answer's header in bytes (MaxDirectoryHeaderBytes, unless the
// transport's MaxResponseHeaderBytes says otherwise). The guard and the
// header bound apply to Client's transport when it is an *http.Transport
// (a clone is used) or nil; any other RoundTripper is used as given, its
// owner vouching for where it connects.
//
// Key sets are cached per URL, so a key learned from one agent never
// verifies a request naming another: Cache-Control max-age, no-store and
// no-cache are honoured, and Expires where there is no max-age (default 1
// h, at most 24 h); a stale set is revalidated with If-None-Match when it
// had an ETag (304 keeps the keys); a failed refresh keeps the keys already
// known; a failed fetch or an unknown key is not retried for NegativeTTL
// (default 1 min, at most 5 min). Agents whose keys have verified a
// signature live in a cache that requests naming unknown agents cannot
// reach, so a flood of forged agents evicts no known agent; and at most
// MaxFetches key sets of agents not known are fetched at once, so such a
// flood cannot make the verifier open connections without bound.
//
// A signature must carry created, expires, keyid and tag="web-bot-auth",
// cover @authority or @target-uri (and its Signature-Agent member, when
// keys come from a directory), not be expired or created in the future
// beyond Skew, and verify. All of that except the key and the signature
// itself is checked before any fetch. At most MaxSignatures web-bot-auth
// signatures are tried per request. The request is never modified.
//
// The zero value verifies with directories fetched through a guarded clone
// of http.DefaultTransport (of net/http's default settings, when a program
// has replaced it with another RoundTripper). Safe for concurrent use; do not change the
// fields while it is in use.
type Verifier struct {
	// Client fetches key sets, never following redirects; nil means a
	// client of the package's own. See the type documentation for how its
	// transport is guarded.
	Client *http.Client
	// Keys, when non-nil, is the only key set used; nothing is fetched.
	Keys KeySet
	// Agents, when non-empty, lists the only Signature-Agent URLs whose
	// key set may be fetched (compared by origin). Empty means any https
	// agent.
	Agents []string
	// AllowInternal lists internal address ranges the verifier may connect
	// to for key sets (tests, an intranet directory). Empty: none.
	AllowInternal []netip.Prefix
	// Skew is the clock skew allowed on created and expires. Zero means 60 s.
	Skew time.Duration
	// MaxLifetime, when positive, rejects signatures whose expires-created
	// exceeds it (the draft recommends at most 24 h).
	MaxLifetime time.Duration
	// AcceptUnsignedDirectory uses keys from the well-known path that did
	// not sign the directory response (such keys bind no Domain).
	AcceptUnsignedDirectory bool
	// DirectoryTTL is the cache lifetime of a key set without max-age or
	// Expires. Zero means 1 h.
	DirectoryTTL time.Duration
	// NegativeTTL is how long a failed fetch or an unknown key is
	// remembered. Zero means 1 min; it is capped at 5 min.
	NegativeTTL time.Duration
	// MaxDirectoryBytes caps a key set body. Zero means 256 KiB.
	MaxDirectoryBytes int64
	// MaxKeys caps the keys of one key set; a larger set is refused. Zero
	// means 32.
	MaxKeys int
	// MaxSignatures caps the web-bot-auth signatures tried per request; the
	// others are ignored. Zero means 4.
	MaxSignatures int
	// FetchTimeout bounds one key set fetch. Zero means 10 s.
	FetchTimeout time.Duration
	// MaxFetches bounds the key set fetches in flight at once for agents
	// not yet seen to verify: a verification that needs one more is
	// unverified at once (ReasonDirectory, [ErrFetchesBusy]), nothing
	// fetched and nothing remembered, so a later request may fetch. Zero
	// means 16. Refreshes of agents whose keys have verified do not count,
	// so a flood of requests naming new agents delays no known agent.
	MaxFetches int
	// Nonces, when set, turns on replay protection (see [NonceCache]).
	Nonces *NonceCache
	// Mode is what Middleware does with requests that do not verify.
	Mode MiddlewareMode
	// Now is the clock. nil means time.Now.
	Now func() time.Time
	// Logger, if set, receives key set fetch outcomes.
	Logger *slog.Logger

	clientOnce sync.Once
	client     *http.Client

	mu        sync.Mutex              // guards known, probation, locs and the entries
	locs      map[string]*keyLocation // agent URL -> where its keys are (a memo)
	known     map[string]*dirEntry    // key sets that verified a signature
	probation map[string]*dirEntry    // key sets fetched (or failed) but not yet used
	group     singleflight.Group
	fetching  atomic.Int64 // fetches in flight for agents not known (MaxFetches)
}

func (v *Verifier) now() time.Time {
	if v.Now != nil {
		return v.Now()
	}
	return time.Now()
}

func (v *Verifier) skew() time.Duration {
	if v.Skew <= 0 {
		return DefaultSkew
	}
	return v.Skew
}

func (v *Verifier) negativeTTL() time.Duration {
	switch {
	case v.NegativeTTL <= 0:
		return DefaultNegativeTTL
	case v.NegativeTTL > MaxNegativeTTL:
		return MaxNegativeTTL
	}
	return v.NegativeTTL
}

func (v *Verifier) maxSignatures() int {
	if v.MaxSignatures <= 0 {
		return DefaultMaxSignatures
	}
	return v.MaxSignatures
}

// candidate is a signature that passed every check that needs no key.
type candidate struct {
	at    int // its place among the request's signatures
	si    *sigInput
	sig   []byte
	res   *Result
	agent *SignatureAgent // the request's Signature-Agent, parsed
	loc   *keyLocation    // nil with Verifier.Keys
}

// Verify checks the web-bot-auth signatures of req (at most MaxSignatures,
// in order) and returns what the first that verifies proves. Every failure
// is a *VerifyError matching ErrInvalidSignature or ErrUnverified (see
// [OutcomeOf]); when no signature verifies, the error is the first
// signature's (in the order of Signature-Input), whichever check it failed. Key set fetches use req.Context(). req is not modified.
func (v *Verifier) Verify(req *http.Request) (*Result, error) {
	inLines := req.Header.Values("Signature-Input")
	sigLines := req.Header.Values("Signature")
	if len(inLines) == 0 || len(sigLines) == 0 {
		return nil, &VerifyError{Reason: ReasonMissing, Detail: "no Signature-Input or Signature header"}
	}
	inputs, err := parseSignatureInput(inLines)
	if err != nil {
		return nil, &VerifyError{Reason: ReasonMalformed, Err: err}
	}
	sigs, err := parseSignatures(sigLines)
	if err != nil {
		return nil, &VerifyError{Reason: ReasonMalformed, Err: err}
	}
	now := v.now()
	// The error returned is the first signature's (in the order of
	// Signature-Input), whichever check it failed.
	var first error
	firstAt := 0
	keep := func(at int, err error) {
		if first == nil || at < firstAt {
			first, firstAt = err, at
		}
	}
	// Everything that needs no key is decided first, for every signature:
	// nothing is fetched for a request that could not verify anyway.
	var cands []candidate
	var agent *SignatureAgent
	var agentErr error
	agentParsed := false
	for i := range inputs {
		si := &inputs[i]
		tag, ok, err := si.stringParam("tag")
		switch {
		case err != nil:
			keep(i, &VerifyError{Reason: ReasonMalformed, Label: si.label, Err: err})
			continue
		case !ok:
			keep(i, &VerifyError{Reason: ReasonMissingParam, Label: si.label, Detail: "no tag"})
			continue
		case tag != TagWebBotAuth:
			keep(i, &VerifyError{Reason: ReasonWrongTag, Label: si.label, Detail: fmt.Sprintf("tag %q", tag)})
			continue
		}
		if len(cands) == v.maxSignatures() {
			break
		}
		if !agentParsed {
			agentParsed = true
			if lines := req.Header.Values("Signature-Agent"); len(lines) > 0 {
				agent, agentErr = ParseSignatureAgent(lines)
			}
		}
		c, err := v.precheck(si, sigs[si.label], agent, agentErr, now)
		if err != nil {
			keep(i, err)
			continue
		}
		c.at = i
		cands = append(cands, c)
	}
	for _, c := range cands {
		res, err := v.verifyCandidate(req, &c, now)
		if err == nil {
			return res, nil
		}
		keep(c.at, err)
	}
	if first == nil {
		first = &VerifyError{Reason: ReasonMissing, Detail: "Signature-Input has no member"}
	}
	return nil, first
}

// precheck checks si's parameters, times, covered components and agent
// against the verifier's policy: everything but the key and the signature.
func (v *Verifier) precheck(si *sigInput, sig []byte, agent *SignatureAgent, agentErr error, now time.Time) (candidate, error) {
	fail := func(r Reason, detail string, err error) (candidate, error) {
		return candidate{}, &VerifyError{Reason: r, Label: si.label, Detail: detail, Err: err}
	}
	if sig == nil {
		return fail(ReasonMissing, "no Signature member for the label", nil)
	}
	res := &Result{Label: si.label}
	var created, expires int64
	for _, p := range []struct {
		name string
		dst  *int64
	}{{"created", &created}, {"expires", &expires}} {
		n, ok, err := si.intParam(p.name)
		if err != nil {
			return fail(ReasonMalformed, "", err)
		}
		if !ok {
			return fail(ReasonMissingParam, "no "+p.name, nil)
		}
		*p.dst = n
	}
	kid, ok, err := si.stringParam("keyid")
	if err != nil {
		return fail(ReasonMalformed, "", err)
	}
	if !ok || kid == "" {
		return fail(ReasonMissingParam, "no keyid", nil)
	}
	res.KeyID = kid
	if alg, ok, _ := si.stringParam("alg"); ok && alg != "ed25519" {
		return fail(ReasonMalformed, fmt.Sprintf("alg %q is not ed25519", alg), nil)
	}
	res.Nonce, _, _ = si.stringParam("nonce")
	res.Created, res.Expires = time.Unix(created, 0), time.Unix(expires, 0)
	skew := v.skew()
	if res.Created.After(now.Add(skew)) {
		return fail(ReasonFuture, "created "+res.Created.UTC().Format(time.RFC3339), nil)
	}
	if now.After(res.Expires.Add(skew)) {
		return fail(ReasonExpired, "expired "+res.Expires.UTC().Format(time.RFC3339), nil)
	}
	if expires < created {
		return fail(ReasonMalformed, "expires before created", nil)
	}
	if v.MaxLifetime > 0 && res.Expires.Sub(res.Created) > v.MaxLifetime {
		return fail(ReasonTooLong, "", nil)
	}
	if !coversAnchor(si) {
		return fail(ReasonComponents, "neither @authority nor @target-uri covered", nil)
	}
	if v.Nonces != nil && res.Nonce == "" {
		return fail(ReasonMissingParam, "no nonce (replay protection is on)", nil)
	}
	res.Components = make([]string, len(si.comps))
	for i, c := range si.comps {
		res.Components[i] = c.id
	}

	// Which Signature-Agent member does this signature cover?
	if c, ok := si.agentComponent(); ok {
		if agentErr != nil {
			return fail(ReasonAgent, "", agentErr)
		}
		if agent == nil {
			return fail(ReasonAgent, "Signature-Agent is covered but absent", nil)
		}
		res.Form = agent.Form
		switch {
		case c.key != "":
			m, ok := agent.Lookup(c.key)
			if !ok || agent.Form != Dictionary {
				return fail(ReasonAgent, "no Signature-Agent member "+c.key, nil)
			}
			if m.Params {
				return fail(ReasonAgent, "Signature-Agent member "+c.key+" carries parameters (ignored)", nil)
			}
			res.Agent = m.URL
		case agent.Form == Dictionary:
			m, ok := agent.Lookup(si.label)
			if !ok && len(agent.Members) == 1 {
				m, ok = agent.Members[0], true
			}
			if !ok {
				return fail(ReasonAgent, "no Signature-Agent member for label", nil)
			}
			if m.Params {
				return fail(ReasonAgent, "Signature-Agent member carries parameters (ignored)", nil)
			}
			res.Agent = m.URL
		default:
			res.Agent = agent.URL
		}
	}
	cand := candidate{si: si, sig: sig, res: res, agent: agent}
	if v.Keys != nil {
		return cand, nil
	}
	if res.Agent == "" {
		return fail(ReasonComponents, "signature-agent not covered", nil)
	}
	loc, err := v.locate(res.Agent)
	if err != nil {
		var ve *VerifyError
		if errors.As(err, &ve) {
			ve.Label, ve.KeyID, ve.Agent = si.label, kid, res.Agent
		}
		return candidate{}, err
	}
	cand.loc = loc
	return cand, nil
}

// verifyCandidate finds c's key and checks the signature.
func (v *Verifier) verifyCandidate(req *http.Request, c *candidate, now time.Time) (*Result, error) {
	si, res := c.si, c.res
	fail := func(r Reason, detail string, err error) (*Result, error) {
		return nil, &VerifyError{Reason: r, Label: si.label, KeyID: res.KeyID, Agent: res.Agent, Detail: detail, Err: err}
	}
	var pub ed25519.PublicKey
	var entry *dirEntry
	if v.Keys != nil {
		if pub = v.Keys[res.KeyID]; pub == nil {
			return fail(ReasonUnknownKey, "", nil)
		}
	} else {
		var err error
		entry, pub, err = v.directoryKey(req.Context(), c.loc, res.KeyID)
		if err != nil {
			var ve *VerifyError
			if errors.As(err, &ve) {
				ve.Label, ve.KeyID, ve.Agent = si.label, res.KeyID, res.Agent
			}
			return nil, err
		}
		res.Directory = c.loc.id
	}

	scheme := ""
	if req.TLS != nil {
		scheme = "https"
	}
	host := req.Host
	if host == "" && req.URL != nil {
		host = req.URL.Host
	}
	msg := requestMessage(req.Method, scheme, normaliseAuthority(host, scheme), req.URL, req.Header)
	if msg.scheme == "" {
		msg.scheme = "http"
	}
	msg.agent = c.agent
	bp := baseBufs.Get().(*[]byte)
	base, err := appendSignatureBase((*bp)[:0], msg, si.comps, si.raw)
	ok := err == nil && len(c.sig) == ed25519.SignatureSize && ed25519.Verify(pub, base, c.sig)
	if cap(base) <= 4<<10 { // a request's huge header is not kept in the pool
		*bp = base
		baseBufs.Put(bp)
	}
	if err != nil {
		return fail(ReasonComponents, "", err)
	}
	if !ok {
		return fail(ReasonBadSignature, "", nil)
	}
	if entry != nil && v.admit(c.loc.id, entry, now) {
		res.Domain = c.loc.host
	}
	if v.Nonces != nil {
		seen, full := v.Nonces.record(res.KeyID+" "+res.Nonce, res.Expires.Add(v.skew()), now)
		switch {
		case seen:
			return fail(ReasonReplayed, "nonce seen before", nil)
		case full:
			return fail(ReasonReplayState, "nonce cache full", nil)
		}
	}
	return res, nil
}

// coversAnchor reports whether si covers the request's @authority or
// @target-uri, one of which the draft requires.
func coversAnchor(si *sigInput) bool {
	for _, name := range []string{"@authority", "@target-uri"} {
		if c, ok := si.covers(name); ok && !c.req {
			return true
		}
	}
	return false
}

// agentComponent returns the Signature-Agent component si covers: the one
// keyed to si's label if there are several.
func (si *sigInput) agentComponent() (component, bool) {
	var found component
	ok := false
	for _, c := range si.comps {
		if c.name != "signature-agent" || c.req {
			continue
		}
		if !ok || c.key == si.label {
			found, ok = c, true
		}
	}
	return found, ok
}

// VerifyRFC9421 checks the plain RFC 9421 signature labelled label on req
// with key, over the components its Signature-Input lists, none of the Web
// Bot Auth profile's rules applied: no parameter is required and no time is
// checked (the Result carries created and expires, when present, for the
// caller to judge). required lists component identifiers the signature must
// cover (e.g. "@authority", "content-digest"). The scheme is https when
// req.TLS is set or req.URL.Scheme says so. Failures are *VerifyError
// values matching ErrInvalidSignature. req is not modified.
func VerifyRFC9421(req *http.Request, label string, key ed25519.PublicKey, required ...string) (*Result, error) {
	fail := func(r Reason, detail string, err error) (*Result, error) {
		return nil, &VerifyError{Reason: r, Label: label, Detail: detail, Err: err}
	}
	inputs, err := parseSignatureInput(req.Header.Values("Signature-Input"))
	if err != nil {
		return fail(ReasonMalformed, "", err)
	}
	sigs, err := parseSignatures(req.Header.Values("Signature"))
	if err != nil {
		return fail(ReasonMalformed, "", err)
	}
	var si *sigInput
	for i := range inputs {
		if inputs[i].label == label {
			si = &inputs[i]
		}
	}
	sig := sigs[label]
	if si == nil || sig == nil {
		return fail(ReasonMissing, "no signature labelled "+label, nil)
	}
	res := &Result{Label: label}
	res.KeyID, _, _ = si.stringParam("keyid")
	res.Nonce, _, _ = si.stringParam("nonce")
	if n, ok, _ := si.intParam("created"); ok {
		res.Created = time.Unix(n, 0)
	}
	if n, ok, _ := si.intParam("expires"); ok {
		res.Expires = time.Unix(n, 0)
	}
	for _, c := range si.comps {
		res.Components = append(res.Components, c.id)
	}
	for _, want := range required {
		if _, ok := si.covers(want); !ok {
			return fail(ReasonComponents, want+" not covered", nil)
		}
	}
	scheme := "http"
	if req.TLS != nil || (req.URL != nil && req.URL.Scheme == "https") {
		scheme = "https"
	}
	host := req.Host
	if host == "" && req.URL != nil {
		host = req.URL.Host
	}
	msg := requestMessage(req.Method, scheme, normaliseAuthority(host, scheme), req.URL, req.Header)
	base, err := signatureBase(msg, si.comps, si.raw)
	if err != nil {
		return fail(ReasonComponents, "", err)
	}
	if len(sig) != ed25519.SignatureSize || !ed25519.Verify(key, []byte(base), sig) {
		return fail(ReasonBadSignature, "", nil)
	}
	return res, nil
}

// agentAllowed reports whether the key set at u may be fetched.
func (v *Verifier) agentAllowed(u *url.URL) bool {
	if len(v.Agents) == 0 {
		return true
	}
	for _, a := range v.Agents {
		au, err := url.Parse(a)
		if err == nil && strings.EqualFold(au.Scheme, u.Scheme) &&
			normaliseAuthority(au.Host, au.Scheme) == normaliseAuthority(u.Host, u.Scheme) {
			return true
		}
	}
	return false
}

type verdictKey struct{}

type verdict struct {
	res *Result
	err error
}

// ResultFromContext returns the Result the Middleware stored for a request
// whose signature verified.
func ResultFromContext(ctx context.Context) (*Result, bool) {
	vd, ok := ctx.Value(verdictKey{}).(*verdict)
	if !ok || vd.res == nil {
		return nil, false
	}
	return vd.res, true
}

// VerdictFromContext returns the outcome the Middleware reached for a
// request, with the Result (verified) or the *VerifyError (otherwise). ok
// is false when the request did not pass through a Middleware.
func VerdictFromContext(ctx context.Context) (o Outcome, res *Result, err error, ok bool) {
	vd, ok := ctx.Value(verdictKey{}).(*verdict)
	if !ok {
		return Unverified, nil, nil, false
	}
	return OutcomeOf(vd.err), vd.res, vd.err, true
}

// Middleware verifies each request before next sees it and stores the
// verdict in the request's context (see VerdictFromContext and
// ResultFromContext). In Annotate mode (the default) every request reaches
// next; in Enforce mode a request that does not verify is answered 401
// Unauthorized with the reason in the body, and next is not called.
func (v *Verifier) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		res, err := v.Verify(r)
		if err != nil && v.Mode == Enforce {
			reason := "invalid"
			var ve *VerifyError
			if errors.As(err, &ve) {
				reason = string(ve.Reason)
			}
			http.Error(w, "signing: "+reason, http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), verdictKey{}, &verdict{res: res, err: err})))
	})
}
