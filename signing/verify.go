package signing

import (
	"context"
	"crypto/ed25519"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dunglas/httpsfv"
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
	DefaultFetchTimeout      = 10 * time.Second
)

// Result describes a verified signature.
//
// It is plain data; a nil *Result comes with every error, and a zero
// Result is never returned.
type Result struct {
	Label      string    // signature label, e.g. "sig1"
	KeyID      string    // keyid (the key's thumbprint)
	Agent      string    // Signature-Agent URL the signature covers; "" if it covers none
	Form       AgentForm // the Signature-Agent form, when Agent is set
	Created    time.Time
	Expires    time.Time
	Nonce      string
	Components []string // covered component identifiers, serialised
}

// Verifier checks Web Bot Auth signatures on incoming requests: the site
// owner's side, and this package's own test oracle.
//
// With Keys set it verifies against that fixed set and never fetches. With
// Keys nil it fetches the key directory named by the Signature-Agent the
// signature covers (https only) through Client, checks the directory's own
// response signatures (each key is usable only if it signed the directory
// response for that authority, unless AcceptUnsignedDirectory), and caches
// it: Cache-Control max-age, no-store and no-cache are honoured, and Expires
// where there is no max-age (default 1 h, at most 24 h; no ETag
// revalidation), a failed refresh keeps the keys already known, and a failed
// fetch or an unknown key is not retried for NegativeTTL (default 1 min, at
// most 5 min).
//
// A signature must carry created, expires, keyid and tag="web-bot-auth",
// cover @authority (and Signature-Agent, when keys come from a directory),
// not be expired or created in the future beyond Skew, and verify.
// The request is never modified.
//
// At most 1024 directories are cached; entries that are neither fresh nor
// negatively cached make room for new ones.
//
// The zero value verifies with directories fetched through
// http.DefaultClient. Safe for concurrent use.
type Verifier struct {
	// Client fetches key directories. nil means http.DefaultClient. Each
	// fetch is also bounded by FetchTimeout.
	Client *http.Client
	// Keys, when non-nil, is the only key set used; nothing is fetched.
	Keys KeySet
	// Agents, when non-empty, lists the only Signature-Agent URLs whose
	// directory may be fetched (compared by origin). Empty means any https
	// agent. Fetching URLs named by requests is a server-side request risk:
	// set this, or give Client a dialer that refuses private addresses.
	Agents []string
	// Skew is the clock skew allowed on created and expires. Zero means 60 s.
	Skew time.Duration
	// MaxLifetime, when positive, rejects signatures whose expires-created
	// exceeds it (the drafts recommend at most 24 h).
	MaxLifetime time.Duration
	// AcceptUnsignedDirectory uses directory keys that did not sign the
	// directory response.
	AcceptUnsignedDirectory bool
	// DirectoryTTL is the cache lifetime of a directory without max-age or
	// Expires.
	// Zero means 1 h.
	DirectoryTTL time.Duration
	// NegativeTTL is how long a failed fetch or an unknown key is
	// remembered. Zero means 1 min; it is capped at 5 min.
	NegativeTTL time.Duration
	// MaxDirectoryBytes caps a directory body. Zero means 256 KiB.
	MaxDirectoryBytes int64
	// FetchTimeout bounds one directory fetch. Zero means 10 s.
	FetchTimeout time.Duration
	// Logger, if set, receives directory fetch outcomes.
	Logger *slog.Logger

	mu    sync.Mutex // guards dirs
	dirs  map[string]*dirEntry
	group singleflight.Group
}

type dirEntry struct {
	keys     KeySet
	fresh    time.Time // keys are fresh until then
	negUntil time.Time // no refetch before then (failed fetch, unknown key)
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

// Verify checks the first signature tagged web-bot-auth on req and returns
// what it proves. Every failure is a *VerifyError (errors.Is
// ErrInvalidSignature). Directory fetches use req.Context(). req is not
// modified.
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
	var first error
	for i := range inputs {
		si := &inputs[i]
		tag, ok, err := si.stringParam("tag")
		if err != nil || !ok || tag != TagWebBotAuth {
			if first == nil {
				switch {
				case err != nil:
					first = &VerifyError{Reason: ReasonMalformed, Label: si.label, Err: err}
				case !ok:
					first = &VerifyError{Reason: ReasonMissingParam, Label: si.label, Detail: "no tag"}
				default:
					first = &VerifyError{Reason: ReasonWrongTag, Label: si.label, Detail: fmt.Sprintf("tag %q", tag)}
				}
			}
			continue
		}
		return v.verifyOne(req, si, sigs[si.label])
	}
	if first == nil {
		first = &VerifyError{Reason: ReasonMissing, Detail: "Signature-Input has no member"}
	}
	return nil, first
}

func (v *Verifier) verifyOne(req *http.Request, si *sigInput, sig []byte) (*Result, error) {
	fail := func(r Reason, detail string, err error) (*Result, error) {
		return nil, &VerifyError{Reason: r, Label: si.label, Detail: detail, Err: err}
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
	now := time.Now()
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
	for _, c := range si.comps {
		id, _ := httpsfv.Marshal(c.item)
		res.Components = append(res.Components, id)
	}

	// Which Signature-Agent does this signature cover?
	if c, ok := si.covers("signature-agent"); ok {
		a, err := ParseSignatureAgent(req.Header.Values("Signature-Agent"))
		if err != nil {
			return fail(ReasonAgent, "", err)
		}
		res.Form = a.Form
		switch {
		case c.key != "":
			m, ok := a.Lookup(c.key)
			if !ok || a.Form != Dictionary {
				return fail(ReasonAgent, "no Signature-Agent member "+c.key, nil)
			}
			if m.Type != "" && m.Type != "directory" {
				return fail(ReasonAgent, "Signature-Agent type "+m.Type+" is not supported", nil)
			}
			res.Agent = m.URL
		case a.Form == Dictionary:
			m, ok := a.Lookup(si.label)
			if !ok && len(a.Members) == 1 {
				m, ok = a.Members[0], true
			}
			if !ok {
				return fail(ReasonAgent, "no Signature-Agent member for label", nil)
			}
			res.Agent = m.URL
		default:
			res.Agent = a.URL
		}
	}

	var pub ed25519.PublicKey
	if v.Keys != nil {
		pub = v.Keys[kid]
		if pub == nil {
			return fail(ReasonUnknownKey, "", nil)
		}
	} else {
		if res.Agent == "" {
			return fail(ReasonComponents, "signature-agent not covered", nil)
		}
		pub, err = v.directoryKey(req.Context(), res.Agent, kid)
		if err != nil {
			var ve *VerifyError
			if errors.As(err, &ve) {
				ve.Label, ve.KeyID, ve.Agent = si.label, kid, res.Agent
			}
			return nil, err
		}
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
	base, err := signatureBase(msg, si.comps, si.raw)
	if err != nil {
		return fail(ReasonComponents, "", err)
	}
	if len(sig) != ed25519.SignatureSize || !ed25519.Verify(pub, []byte(base), sig) {
		return fail(ReasonBadSignature, "", nil)
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

// agentAllowed reports whether the directory of agent may be fetched.
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

// directoryKey returns the key kid from the directory of agent, from cache
// or fetched.
func (v *Verifier) directoryKey(ctx context.Context, agent, kid string) (ed25519.PublicKey, error) {
	u, err := url.Parse(agent)
	if err != nil || u.Scheme != "https" || u.Host == "" {
		return nil, &VerifyError{Reason: ReasonAgent, Detail: "Signature-Agent is not an https URL"}
	}
	if !v.agentAllowed(u) {
		return nil, &VerifyError{Reason: ReasonAgent, Detail: "Signature-Agent not in Verifier.Agents"}
	}
	dir := "https://" + normaliseAuthority(u.Host, "https") + DirectoryPath

	now := time.Now()
	v.mu.Lock()
	e := v.dirs[dir]
	var known ed25519.PublicKey
	fresh, blocked := false, false
	if e != nil {
		known = e.keys[kid]
		fresh = now.Before(e.fresh)
		blocked = now.Before(e.negUntil)
	}
	v.mu.Unlock()
	if known != nil && fresh {
		return known, nil
	}
	if blocked {
		if known != nil { // stale but refresh failed recently: keep using it
			return known, nil
		}
		if e != nil && e.keys != nil {
			return nil, &VerifyError{Reason: ReasonUnknownKey, Detail: "not in directory " + dir}
		}
		return nil, &VerifyError{Reason: ReasonDirectory, Detail: "recent fetch of " + dir + " failed"}
	}
	_, err, _ = v.group.Do(dir, func() (any, error) { return nil, v.refresh(ctx, dir) })
	v.mu.Lock()
	e = v.dirs[dir]
	if e != nil {
		known = e.keys[kid]
		if known == nil {
			e.negUntil = time.Now().Add(v.negativeTTL())
		}
	}
	v.mu.Unlock()
	if known != nil {
		return known, nil // fetched now, or kept from before a failed refresh
	}
	if err != nil {
		return nil, &VerifyError{Reason: ReasonDirectory, Err: err}
	}
	return nil, &VerifyError{Reason: ReasonUnknownKey, Detail: "not in directory " + dir}
}

// refresh fetches dir and stores the result. On failure the keys already
// known stay (with a negative-cache mark); they are never evicted by an
// error.
func (v *Verifier) refresh(ctx context.Context, dir string) error {
	keys, ttl, err := v.fetch(ctx, dir)
	now := time.Now()
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.dirs == nil {
		v.dirs = map[string]*dirEntry{}
	}
	e := v.dirs[dir]
	if e == nil {
		if len(v.dirs) >= maxDirectories {
			v.sweep(now)
		}
		e = &dirEntry{}
		if len(v.dirs) < maxDirectories {
			v.dirs[dir] = e
		}
	}
	if err != nil {
		e.negUntil = now.Add(v.negativeTTL())
		if v.Logger != nil {
			v.Logger.Warn("signing: directory fetch failed", "url", dir, "err", err, "kept_keys", len(e.keys))
		}
		return err
	}
	e.keys, e.fresh, e.negUntil = keys, now.Add(ttl), time.Time{}
	if v.Logger != nil {
		v.Logger.Debug("signing: directory fetched", "url", dir, "keys", len(keys), "ttl", ttl)
	}
	return nil
}

// maxDirectories bounds the directory cache: agent URLs come from requests.
const maxDirectories = 1024

// sweep drops entries that are neither fresh nor negatively cached. v.mu
// is held.
// Entries without keys go first, so a flood of bogus agents does not push
// out the stale keys kept for a directory that is down.
func (v *Verifier) sweep(now time.Time) {
	for _, keyless := range []bool{true, false} {
		for k, e := range v.dirs {
			if (e.keys == nil) == keyless && !now.Before(e.fresh) && !now.Before(e.negUntil) {
				delete(v.dirs, k)
			}
		}
		if len(v.dirs) < maxDirectories {
			return
		}
	}
}

func (v *Verifier) fetch(ctx context.Context, dir string) (KeySet, time.Duration, error) {
	timeout := v.FetchTimeout
	if timeout <= 0 {
		timeout = DefaultFetchTimeout
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, dir, nil)
	if err != nil {
		return nil, 0, err
	}
	req.Header.Set("Accept", DirectoryMediaType+", application/json;q=0.5")
	client := v.Client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, 0, fmt.Errorf("signing: directory %s: status %d", dir, resp.StatusCode)
	}
	max := v.MaxDirectoryBytes
	if max <= 0 {
		max = DefaultMaxDirectoryBytes
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, max+1))
	if err != nil {
		return nil, 0, err
	}
	if int64(len(body)) > max {
		return nil, 0, fmt.Errorf("signing: directory %s larger than %d bytes", dir, max)
	}
	keys, err := ParseJWKS(body)
	if err != nil {
		return nil, 0, err
	}
	if !v.AcceptUnsignedDirectory {
		authority := normaliseAuthority(req.URL.Host, "https")
		keys = v.provenKeys(resp, authority, body, keys)
		if len(keys) == 0 {
			return nil, 0, fmt.Errorf("signing: directory %s: no key signed the response", dir)
		}
	}
	return keys, v.ttl(resp.Header), nil
}

// provenKeys returns the keys of ks that signed the directory response
// (tag http-message-signatures-directory, covering "@authority";req and a
// Content-Digest that matches body).
func (v *Verifier) provenKeys(resp *http.Response, authority string, body []byte, ks KeySet) KeySet {
	inputs, err := parseSignatureInput(resp.Header.Values("Signature-Input"))
	if err != nil {
		return nil
	}
	sigs, err := parseSignatures(resp.Header.Values("Signature"))
	if err != nil {
		return nil
	}
	want := contentDigest(body)
	got := resp.Header.Get("Content-Digest")
	if !digestMatches(got, want) {
		return nil
	}
	msg := &message{status: resp.StatusCode, header: resp.Header, req: &message{authority: authority}}
	now := time.Now()
	proven := KeySet{}
	for i := range inputs {
		si := &inputs[i]
		tag, _, _ := si.stringParam("tag")
		kid, _, _ := si.stringParam("keyid")
		created, okc, _ := si.intParam("created")
		expires, oke, _ := si.intParam("expires")
		pub := ks[kid]
		if tag != TagDirectory || pub == nil || !okc || !oke {
			continue
		}
		if time.Unix(created, 0).After(now.Add(v.skew())) || now.After(time.Unix(expires, 0).Add(v.skew())) {
			continue
		}
		if c, ok := si.covers("@authority"); !ok || !c.req {
			continue
		}
		if _, ok := si.covers("content-digest"); !ok {
			continue
		}
		base, err := signatureBase(msg, si.comps, si.raw)
		if err != nil {
			continue
		}
		if sig := sigs[si.label]; len(sig) == ed25519.SignatureSize && ed25519.Verify(pub, []byte(base), sig) {
			proven[kid] = pub
		}
	}
	return proven
}

// digestMatches reports whether the Content-Digest field got carries the
// sha-256 member want.
func digestMatches(got, want string) bool {
	for _, part := range strings.Split(got, ",") {
		part = strings.TrimSpace(part)
		if strings.HasPrefix(part, "sha-256=") {
			return subtle.ConstantTimeCompare([]byte(part), []byte(want)) == 1
		}
	}
	return false
}

// ttl is the cache lifetime from Cache-Control max-age (no-store and
// no-cache mean "refetch next time"), else from Expires minus Date (RFC 9111
// §4.2.1; an Expires that does not parse, or is not after Date, means
// stale), else DirectoryTTL; never more than MaxDirectoryTTL.
func (v *Verifier) ttl(h http.Header) time.Duration {
	def := v.DirectoryTTL
	if def <= 0 {
		def = DefaultDirectoryTTL
	}
	for _, cc := range h.Values("Cache-Control") {
		for _, d := range strings.Split(cc, ",") {
			d = strings.ToLower(strings.TrimSpace(d))
			switch {
			case d == "no-store" || d == "no-cache":
				return 0
			case strings.HasPrefix(d, "max-age="):
				n, err := strconv.ParseInt(strings.Trim(d[len("max-age="):], `"`), 10, 64)
				if err != nil || n < 0 {
					continue
				}
				if n > int64(MaxDirectoryTTL/time.Second) {
					return MaxDirectoryTTL
				}
				return time.Duration(n) * time.Second
			}
		}
	}
	if exp := h.Get("Expires"); exp != "" {
		at, err := http.ParseTime(exp)
		if err != nil {
			return 0
		}
		date, err := http.ParseTime(h.Get("Date"))
		if err != nil {
			date = time.Now()
		}
		if d := at.Sub(date); d > 0 {
			return min(d, MaxDirectoryTTL)
		}
		return 0
	}
	return def
}

type resultKey struct{}

// ResultFromContext returns the Result the Middleware stored for a request.
func ResultFromContext(ctx context.Context) (*Result, bool) {
	r, ok := ctx.Value(resultKey{}).(*Result)
	return r, ok
}

// Middleware verifies each request before next sees it. A request whose
// signature verifies reaches next with the Result in its context (see
// ResultFromContext); any other request is answered 401 Unauthorized with
// the reason in the body, and next is not called.
func (v *Verifier) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		res, err := v.Verify(r)
		if err != nil {
			reason := "invalid"
			var ve *VerifyError
			if errors.As(err, &ve) {
				reason = string(ve.Reason)
			}
			http.Error(w, "signing: "+reason, http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), resultKey{}, res)))
	})
}
