package signing

import (
	"context"
	"crypto/ed25519"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/goodbot-go/goodbot/internal/urinorm"

	"github.com/goodbot-go/goodbot/internal/basetransport"
)

// keyLocation is where a Signature-Agent member's keys are fetched from.
type keyLocation struct {
	fetch     string // the URL fetched: id and the query as sent
	id        string // the identifier: the URL normalised, without query or fragment
	host      string // its normalised authority
	wellKnown bool   // fetch is the well-known directory path: keys bind to host
}

// locate resolves a Signature-Agent URL to the key set to fetch, applying
// the verifier's agent policy. Nothing is fetched.
func (v *Verifier) locate(agent string) (*keyLocation, error) {
	v.mu.Lock()
	loc := v.locs[agent]
	v.mu.Unlock()
	if loc != nil {
		return loc, nil
	}
	loc, err := v.resolve(agent)
	if err != nil {
		return nil, err
	}
	v.mu.Lock()
	if v.locs == nil || len(v.locs) >= MaxDirectories {
		v.locs = map[string]*keyLocation{} // a memo: starting over costs a parse
	}
	v.locs[agent] = loc
	v.mu.Unlock()
	return loc, nil
}

// resolve is locate without the memo.
func (v *Verifier) resolve(agent string) (*keyLocation, error) {
	u, err := url.Parse(agent)
	if err != nil || !strings.EqualFold(u.Scheme, "https") || u.Host == "" || u.User != nil {
		return nil, &VerifyError{Reason: ReasonAgent, Detail: "Signature-Agent is not an https URL"}
	}
	if !v.agentAllowed(u) {
		return nil, &VerifyError{Reason: ReasonAgent, Detail: "Signature-Agent not in Verifier.Agents"}
	}
	// The identifier is normalised as RFC 3986 sections 6.2.2 and 6.2.3
	// say (draft-ietf-webbotauth-httpsig-protocol, Key Distribution and
	// Discovery), so that spellings of one URL are one identifier. The URL
	// fetched is the normalised one too: the keys cached under an
	// identifier are the ones its own path serves (a spelling such as
	// /files/%2E%2E/.well-known/... that a server routes elsewhere cannot
	// fill the well-known directory's entry).
	host := normaliseAuthority(strings.TrimSuffix(u.Host, ":"), "https") // an empty port is no port
	path := u.EscapedPath()
	if path == "" {
		path = "/" // https://h?q is https://h/?q (RFC 3986 §6.2.3)
	}
	path = normalisePath(path)
	if path == "/" && u.RawQuery == "" {
		// A bare origin (every deployed agent sends one): its well-known
		// directory. With a query it is a URL, fetched as it is.
		path = DirectoryPath
	}
	id := "https://" + host + path
	fetch := id
	if u.RawQuery != "" {
		fetch += "?" + u.RawQuery
	}
	return &keyLocation{fetch: fetch, id: id, host: host, wellKnown: path == DirectoryPath}, nil
}

// normalisePath returns the escaped URL path p normalised as RFC 3986
// section 6.2.2 says: hexadecimal digits of percent-encodings upper-cased,
// percent-encoded unreserved characters decoded, dot segments removed.
func normalisePath(p string) string {
	return urinorm.DotSegments(urinorm.Escapes(p))
}

// dirEntry is a cached key set. Its fields are guarded by Verifier.mu.
type dirEntry struct {
	keys     KeySet
	bound    bool      // fetched from the well-known path, keys proven for its host
	etag     string    // for revalidation
	fresh    time.Time // keys are fresh until then
	negUntil time.Time // no refetch before then (failed fetch, unknown key)
	lastUsed time.Time // last verification (known entries)
}

// lookup returns the cached entry for id. v.mu is held.
func (v *Verifier) lookup(id string) *dirEntry {
	if e := v.known[id]; e != nil {
		return e
	}
	return v.probation[id]
}

// directoryKey returns the key kid of the key set at loc, from cache or
// fetched, with the entry it came from.
func (v *Verifier) directoryKey(ctx context.Context, loc *keyLocation, kid string) (*dirEntry, ed25519.PublicKey, error) {
	now := v.now()
	v.mu.Lock()
	e := v.lookup(loc.id)
	var known ed25519.PublicKey
	var seen time.Time // the entry's freshness as looked up: a refresh since moves it
	fresh, blocked, hasKeys := false, false, false
	if e != nil {
		known, seen = e.keys[kid], e.fresh
		fresh = now.Before(e.fresh)
		blocked = now.Before(e.negUntil)
		hasKeys = e.keys != nil
	}
	v.mu.Unlock()
	if known != nil && fresh {
		return e, known, nil
	}
	if blocked {
		if known != nil { // stale, but a refresh failed recently: keep using it
			return e, known, nil
		}
		if hasKeys {
			return nil, nil, &VerifyError{Reason: ReasonUnknownKey, Detail: "not in " + loc.id}
		}
		return nil, nil, &VerifyError{Reason: ReasonDirectory, Detail: "recent fetch of " + loc.id + " failed"}
	}
	_, err, _ := v.group.Do(loc.id, func() (any, error) {
		// A refresh that ended between the lookup above and this flight
		// (its own flight over) already fetched what this one would.
		v.mu.Lock()
		cur := v.lookup(loc.id)
		refreshed := cur != nil && cur.fresh.After(seen)
		known := v.known[loc.id] != nil
		v.mu.Unlock()
		if refreshed {
			return nil, nil
		}
		if !known {
			if v.fetching.Add(1) > int64(v.maxFetches()) {
				v.fetching.Add(-1)
				return nil, ErrFetchesBusy
			}
			defer v.fetching.Add(-1)
		}
		return nil, v.refresh(ctx, loc)
	})
	v.mu.Lock()
	defer v.mu.Unlock()
	e = v.lookup(loc.id)
	known = nil
	if e != nil {
		known = e.keys[kid]
		if known == nil && e.keys != nil && err == nil {
			e.negUntil = v.now().Add(v.negativeTTL())
		}
	}
	switch {
	case known != nil:
		return e, known, nil // fetched now, or kept from before a failed refresh
	case err != nil:
		return nil, nil, &VerifyError{Reason: ReasonDirectory, Err: err}
	}
	return nil, nil, &VerifyError{Reason: ReasonUnknownKey, Detail: "not in " + loc.id}
}

// refresh fetches the key set at loc (revalidating when it has an ETag) and
// stores the result. On failure the keys already known stay, with a
// negative-cache mark: an outage never evicts keys.
func (v *Verifier) refresh(ctx context.Context, loc *keyLocation) error {
	v.mu.Lock()
	etag := ""
	if e := v.lookup(loc.id); e != nil && e.keys != nil {
		etag = e.etag
	}
	v.mu.Unlock()
	got, err := v.fetch(ctx, loc, etag)
	now := v.now()
	v.mu.Lock()
	defer v.mu.Unlock()
	e := v.lookup(loc.id)
	if e == nil {
		e = &dirEntry{}
		v.admitProbation(loc.id, e)
	}
	switch {
	case err != nil:
		e.negUntil = now.Add(v.negativeTTL())
		if v.Logger != nil {
			v.Logger.Warn("signing: key set fetch failed", "url", loc.id, "err", err, "kept_keys", len(e.keys))
		}
		return err
	case got.notModified:
		e.fresh, e.negUntil = now.Add(got.ttl), time.Time{}
	default:
		e.keys, e.bound, e.etag = got.keys, got.bound, got.etag
		e.fresh, e.negUntil = now.Add(got.ttl), time.Time{}
	}
	if v.Logger != nil {
		v.Logger.Debug("signing: key set fetched", "url", loc.id, "keys", len(e.keys), "ttl", got.ttl, "not_modified", got.notModified)
	}
	return nil
}

// admitProbation stores a new entry among the agents not yet seen to
// verify, making room by dropping another such entry. v.mu is held.
func (v *Verifier) admitProbation(id string, e *dirEntry) {
	if v.probation == nil {
		v.probation = map[string]*dirEntry{}
	}
	if len(v.probation) >= MaxDirectories {
		for k := range v.probation { // an arbitrary victim: O(1)
			delete(v.probation, k)
			break
		}
	}
	v.probation[id] = e
}

// admit records that e's keys verified a signature: a probation entry
// becomes known, making room by dropping the known entry used longest ago
// (only agents that verify ever get here, so forged requests cannot push a
// known agent out). It reports whether e's keys are bound to its host.
func (v *Verifier) admit(id string, e *dirEntry, now time.Time) (bound bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	e.lastUsed = now
	if v.known[id] == e || v.probation[id] != e { // known, or evicted meanwhile
		return e.bound
	}
	if v.known == nil {
		v.known = map[string]*dirEntry{}
	}
	if len(v.known) >= MaxDirectories {
		victim := ""
		var oldest time.Time
		for k, ke := range v.known {
			if victim == "" || ke.lastUsed.Before(oldest) {
				victim, oldest = k, ke.lastUsed
			}
		}
		delete(v.known, victim)
	}
	delete(v.probation, id)
	v.known[id] = e
	return e.bound
}

// fetched is the outcome of one key set fetch.
type fetched struct {
	keys        KeySet
	bound       bool
	etag        string
	ttl         time.Duration
	notModified bool
}

// errTooManyKeys reports a key set over Verifier.MaxKeys.
var errTooManyKeys = errors.New("signing: key set has too many keys")

// httpClient returns the client key sets are fetched with: Client (or a
// new one) that never follows redirects, its transport guarded.
func (v *Verifier) httpClient() *http.Client {
	v.clientOnce.Do(func() {
		c := &http.Client{}
		if v.Client != nil {
			*c = *v.Client
		}
		c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
		g := newDialGuard(v.AllowInternal)
		switch t := c.Transport.(type) {
		case nil:
			c.Transport = g.guardTransport(boundHeader(basetransport.New()))
		case *http.Transport:
			c.Transport = g.guardTransport(boundHeader(t.Clone()))
		}
		v.client = c
	})
	return v.client
}

func (v *Verifier) maxFetches() int {
	if v.MaxFetches <= 0 {
		return DefaultMaxFetches
	}
	return v.MaxFetches
}

// boundHeader gives t the header bound of a key set's answer, unless t
// has one of its own.
func boundHeader(t *http.Transport) *http.Transport {
	if t.MaxResponseHeaderBytes == 0 {
		t.MaxResponseHeaderBytes = MaxDirectoryHeaderBytes
	}
	return t
}

func (v *Verifier) fetch(ctx context.Context, loc *keyLocation, etag string) (fetched, error) {
	timeout := v.FetchTimeout
	if timeout <= 0 {
		timeout = DefaultFetchTimeout
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, loc.fetch, nil)
	if err != nil {
		return fetched{}, err
	}
	req.Header.Set("Accept", DirectoryMediaType+", application/jwk-set+json;q=0.9, application/json;q=0.5")
	if etag != "" {
		req.Header.Set("If-None-Match", etag)
	}
	resp, err := v.httpClient().Do(req)
	if err != nil {
		return fetched{}, err
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotModified && etag != "":
		return fetched{notModified: true, ttl: v.ttl(resp.Header, v.now())}, nil
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		return fetched{}, fmt.Errorf("signing: key set %s: status %d (redirects are not followed)", loc.id, resp.StatusCode)
	case resp.StatusCode != http.StatusOK:
		return fetched{}, fmt.Errorf("signing: key set %s: status %d", loc.id, resp.StatusCode)
	}
	max := v.MaxDirectoryBytes
	if max <= 0 {
		max = DefaultMaxDirectoryBytes
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, max+1))
	if err != nil {
		return fetched{}, err
	}
	if int64(len(body)) > max {
		return fetched{}, fmt.Errorf("signing: key set %s larger than %d bytes", loc.id, max)
	}
	maxKeys := v.MaxKeys
	if maxKeys <= 0 {
		maxKeys = DefaultMaxKeys
	}
	var count struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(body, &count); err != nil {
		return fetched{}, keyError("jwks: %v", err)
	}
	if len(count.Keys) > maxKeys {
		return fetched{}, fmt.Errorf("%w: %s lists %d keys, at most %d are accepted", errTooManyKeys, loc.id, len(count.Keys), maxKeys)
	}
	keys, err := ParseJWKS(body)
	if err != nil {
		return fetched{}, err
	}
	out := fetched{keys: keys, etag: resp.Header.Get("ETag"), ttl: v.ttl(resp.Header, v.now())}
	if loc.wellKnown {
		proven := v.provenKeys(resp, loc.host, body, keys, maxKeys)
		switch {
		case len(proven) == len(keys) && len(keys) > 0:
			out.bound = true
		case v.AcceptUnsignedDirectory:
		default:
			if len(proven) == 0 {
				return fetched{}, fmt.Errorf("signing: directory %s: no key signed the response", loc.id)
			}
			out.keys, out.bound = proven, true
		}
	}
	return out, nil
}

// provenKeys returns the keys of ks that signed the directory response
// (tag http-message-signatures-directory, covering "@authority";req and a
// Content-Digest that matches body). Each key is tried at most once and at
// most 2*maxKeys signature inputs are read: the work per directory is
// bounded whatever the response carries.
func (v *Verifier) provenKeys(resp *http.Response, authority string, body []byte, ks KeySet, maxKeys int) KeySet {
	inputs, err := parseSignatureInput(resp.Header.Values("Signature-Input"))
	if err != nil {
		return nil
	}
	sigs, err := parseSignatures(resp.Header.Values("Signature"))
	if err != nil {
		return nil
	}
	if !digestMatches(resp.Header.Get("Content-Digest"), contentDigest(body)) {
		return nil
	}
	msg := &message{status: resp.StatusCode, header: resp.Header, req: &message{authority: authority}}
	now := v.now()
	proven := KeySet{}
	tried := map[string]bool{}
	for i := range inputs {
		if i == 2*maxKeys {
			break
		}
		si := &inputs[i]
		tag, _, _ := si.stringParam("tag")
		kid, _, _ := si.stringParam("keyid")
		created, okc, _ := si.intParam("created")
		expires, oke, _ := si.intParam("expires")
		pub := ks[kid]
		if tag != TagDirectory || pub == nil || tried[kid] || !okc || !oke {
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
		tried[kid] = true
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
func (v *Verifier) ttl(h http.Header, now time.Time) time.Duration {
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
			date = now
		}
		if d := at.Sub(date); d > 0 {
			return min(d, MaxDirectoryTTL)
		}
		return 0
	}
	return def
}
