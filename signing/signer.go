package signing

import (
	"bytes"
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dunglas/httpsfv"
)

const (
	// TagWebBotAuth is the tag parameter of request signatures.
	TagWebBotAuth = "web-bot-auth"
	// TagDirectory is the tag parameter of key directory response signatures.
	TagDirectory = "http-message-signatures-directory"
	// DefaultExpires is the lifetime of a request signature when
	// Signer.Expires is zero.
	DefaultExpires = 60 * time.Second
	// DefaultLabel is the signature label, and the Signature-Agent dictionary
	// key, when Signer.Label is empty.
	DefaultLabel = "sig1"
	// NonceBytes is the size of a random nonce before base64 (as npm
	// web-bot-auth sends and checks).
	NonceBytes = 64
)

// ErrNoKey is returned by Sign when the Signer has no usable key.
var ErrNoKey = errors.New("signing: no signing key")

// MaxExpires is the longest signature lifetime a Signer accepts: the Web Bot
// Auth draft recommends that expires be at most 24 hours after created.
const MaxExpires = 24 * time.Hour

// ErrSignerConfig is matched (errors.Is) by every [*ConfigError]: a Signer
// field that cannot be used.
var ErrSignerConfig = errors.New("signing: unusable signer configuration")

// ErrExpiresTooLong is the cause of the [*ConfigError] for a Signer.Expires
// beyond [MaxExpires].
var ErrExpiresTooLong = errors.New("signing: expires more than 24h after created")

// ErrComponent is matched (errors.Is) by every [*ComponentError]: a covered
// component that cannot be signed.
var ErrComponent = errors.New("signing: component cannot be signed")

// ConfigError reports a Signer field that cannot be used. It matches
// [ErrSignerConfig] and its cause Err. Plain data.
type ConfigError struct {
	Field  string // the Signer field, e.g. "Expires"
	Detail string
	Err    error
}

func (e *ConfigError) Error() string {
	s := "signing: Signer." + e.Field
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns ErrSignerConfig and the cause.
func (e *ConfigError) Unwrap() []error {
	if e.Err != nil {
		return []error{ErrSignerConfig, e.Err}
	}
	return []error{ErrSignerConfig}
}

// ComponentError reports a component a signature was asked to cover but that
// cannot be signed: not supported by this package, or absent from the
// request. It matches [ErrComponent]. Plain data.
type ComponentError struct {
	Component string // the component identifier, e.g. "@query-param" or "x-price"
	Reason    string // why it cannot be signed
}

func (e *ComponentError) Error() string {
	return "signing: component " + strconv.Quote(e.Component) + " cannot be signed: " + e.Reason
}

// Unwrap returns ErrComponent.
func (e *ComponentError) Unwrap() error { return ErrComponent }

// DefaultComponents returns the components a Signer covers when
// Signer.Components is nil, besides its Signature-Agent member: @method,
// @authority and @path. The draft requires @authority (or @target-uri) and
// recommends @method and @path, so that a captured signature cannot be
// replayed against another resource or with another method. A new slice on
// every call.
func DefaultComponents() []string { return []string{"@method", "@authority", "@path"} }

// Signer adds Web Bot Auth signatures (RFC 9421, Ed25519) to requests.
//
// Each signature covers Components ([DefaultComponents] when nil) and the
// Signature-Agent field (its member for the label, in the Dictionary form),
// and carries created (the time of signing), expires, keyid (the key's RFC
// 7638 thumbprint), tag="web-bot-auth" and, when Nonce is set, a random
// 64-byte nonce (base64, as npm web-bot-auth sends it). alg is not sent: RFC
// 9421 makes it optional and the key fixes it. A request signed twice within
// one second without a nonce gets the same signature (Ed25519 is
// deterministic); set Nonce when verifiers track replays.
//
// The zero value has no key and Sign fails with [ErrNoKey]. A Signer is safe
// for concurrent use; do not change its fields while it is in use.
type Signer struct {
	// Key signs. Its public half must be Ed25519. An ed25519.PrivateKey
	// works; so does any crypto.Signer backed by an HSM or KMS.
	Key crypto.Signer
	// Agent is the Signature-Agent URL: the https URL of the bot's key set
	// (a JWKS). An origin such as "https://bot.example.com" names the key
	// directory at its well-known path, /.well-known/http-message-signatures-directory,
	// which also binds the key to that domain.
	Agent string
	// Form is the wire form of Signature-Agent (see [AgentForm]); the zero
	// value is Dictionary, the form the draft requires.
	Form AgentForm
	// Label is the signature label and, in the Dictionary form, the
	// Signature-Agent key. Empty means "sig1".
	Label string
	// Components lists the covered components besides the Signature-Agent
	// member, in order: derived components "@method", "@authority",
	// "@path", "@query", "@target-uri", "@scheme", "@request-target", and
	// lowercase request header names (a listed header absent from a request
	// fails Sign with a [*ComponentError]). nil means [DefaultComponents];
	// the list must contain "@authority" or "@target-uri".
	Components []string
	// Expires is how long a signature is valid after it is made. Zero means
	// DefaultExpires (60 s): long enough for clock skew and a slow handshake,
	// short enough that a captured signature is soon worthless. Values below
	// one second are raised to one second; values above [MaxExpires] (24 h)
	// make Sign fail with a [*ConfigError] matching [ErrExpiresTooLong].
	Expires time.Duration
	// Nonce adds a fresh random nonce parameter to every signature.
	Nonce bool

	mu    sync.Mutex // guards cache
	cache *signerCache
}

// compKind is how a covered component's value is found in a request.
type compKind uint8

const (
	compMethod compKind = iota
	compAuthority
	compPath
	compQuery
	compTargetURI
	compScheme
	compRequestTarget
	compHeader
	compAgent // the Signature-Agent field or member: constant per Signer
)

var derivedKinds = map[string]compKind{
	"@method": compMethod, "@authority": compAuthority, "@path": compPath, "@query": compQuery,
	"@target-uri": compTargetURI, "@scheme": compScheme, "@request-target": compRequestTarget,
}

// compiledComp is one covered component, serialised once.
type compiledComp struct {
	kind compKind
	name string // header name (compHeader)
	line string // `"id": ` (for compAgent: the whole line, value and "\n" included)
}

type signerCache struct {
	pub        string // public key bytes the cache was computed for
	agent      string
	form       AgentForm
	label      string
	components string // the Components list the cache was built from, joined
	kid        string
	field      string // Signature-Agent value

	// The constant parts of the signature base and Signature-Input (see
	// Sign): only the component values, created, expires and nonce change.
	comps []compiledComp
	list  string // ("@method" "@authority" ...)
	tail  string // ;tag="web-bot-auth";keyid="..."
}

func (s *Signer) label() string {
	if s.Label == "" {
		return DefaultLabel
	}
	return s.Label
}

func (s *Signer) expires() time.Duration {
	switch {
	case s.Expires == 0:
		return DefaultExpires
	case s.Expires < time.Second:
		return time.Second
	}
	return s.Expires
}

func (s *Signer) components() []string {
	if s.Components == nil {
		return DefaultComponents()
	}
	return s.Components
}

// KeyID returns the keyid the Signer puts in its signatures: the RFC 7638
// thumbprint of Key's public half.
func (s *Signer) KeyID() (string, error) {
	c, err := s.prepared()
	if err != nil {
		return "", err
	}
	return c.kid, nil
}

// prepared returns the per-configuration values (thumbprint, field value,
// serialised components), computed once and recomputed if a field changed.
func (s *Signer) prepared() (*signerCache, error) {
	if s == nil || s.Key == nil {
		return nil, ErrNoKey
	}
	pub, err := ed25519Public(s.Key)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNoKey, err)
	}
	if s.Expires > MaxExpires {
		return nil, &ConfigError{Field: "Expires", Detail: s.Expires.String(), Err: ErrExpiresTooLong}
	}
	comps := s.components()
	joined := strings.Join(comps, "\x00")
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.cache
	if c != nil && c.pub == string(pub) && c.agent == s.Agent && c.form == s.Form && c.label == s.label() && c.components == joined {
		return c, nil
	}
	kid, err := Thumbprint(pub)
	if err != nil {
		return nil, err
	}
	label := s.label()
	field, err := agentField(s.Agent, s.Form, label)
	if err != nil {
		return nil, err
	}
	c = &signerCache{pub: string(pub), agent: s.Agent, form: s.Form, label: label, components: joined, kid: kid, field: field}
	if err := c.compile(comps); err != nil {
		return nil, err
	}
	s.cache = c
	return c, nil
}

// compile serialises the constant parts of every signature with the
// package's RFC 9421 engine (base.go): the component identifiers, the
// Signature-Agent line and the parameters after expires.
func (c *signerCache) compile(names []string) error {
	var comps []component
	c.comps = c.comps[:0]
	hasAnchor := false
	for _, name := range names {
		kind, derived := derivedKinds[name]
		switch {
		case derived:
			hasAnchor = hasAnchor || kind == compAuthority || kind == compTargetURI
		case strings.HasPrefix(name, "@"):
			return &ComponentError{Component: name, Reason: "derived component not supported by this signer"}
		case name == "signature-agent" || name == "signature" || name == "signature-input":
			return &ComponentError{Component: name, Reason: "added by the signer itself, not a listed component"}
		case !validHeaderName(name):
			return &ComponentError{Component: name, Reason: "not a lowercase header field name"}
		default:
			kind = compHeader
		}
		comp := newComponent(name, "", false)
		for _, prev := range comps {
			if prev.name == name {
				return &ComponentError{Component: name, Reason: "listed twice"}
			}
		}
		comps = append(comps, comp)
		c.comps = append(c.comps, compiledComp{kind: kind, name: name, line: strconv.Quote(name) + ": "})
	}
	if !hasAnchor {
		return &ConfigError{Field: "Components", Detail: "must contain @authority or @target-uri"}
	}
	dictKey := ""
	if c.form == Dictionary {
		dictKey = c.label
	}
	agent := newComponent("signature-agent", dictKey, false)
	msg := requestMessage(http.MethodGet, "https", "", &url.URL{Path: "/"}, http.Header{"Signature-Agent": {c.field}})
	line, err := signatureBase(msg, []component{agent}, "")
	if err != nil {
		return fmt.Errorf("signing: %w", err)
	}
	c.comps = append(c.comps, compiledComp{kind: compAgent, line: strings.TrimSuffix(line, `"@signature-params": `)})
	comps = append(comps, agent)
	list, err := signParams(comps, httpsfv.NewParams())
	if err != nil {
		return fmt.Errorf("signing: %w", err)
	}
	p := httpsfv.NewParams()
	p.Add("tag", TagWebBotAuth)
	p.Add("keyid", c.kid)
	tail, err := signParams(nil, p)
	if err != nil {
		return fmt.Errorf("signing: %w", err)
	}
	c.list = list
	c.tail = strings.TrimPrefix(tail, "()")
	return nil
}

// validHeaderName reports whether name is a lowercase RFC 9110 token.
func validHeaderName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		b := name[i]
		switch {
		case b >= 'a' && b <= 'z', b >= '0' && b <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", b) >= 0:
		default:
			return false
		}
	}
	return true
}

// Sign adds Signature-Agent, Signature-Input and Signature to req.Header,
// replacing any already there. It reads the request line (req.Method,
// req.Host or req.URL.Host, req.URL) and the headers it covers: never the
// body. It modifies req; a RoundTripper must clone first ([Transport] does).
// created is time.Now() at the call, so under testing/synctest it is the
// bubble's fake time.
//
// The signature is built by this package's RFC 9421 engine, not by httpsign
// (see the package documentation): the covered components and parameters
// are fixed per Signer, so all but the component values, created, expires
// and nonce is serialised once, and a signature costs one Ed25519 signing
// plus a few string appends. Tests check the result byte for byte against
// httpsign's signer and have httpsign's verifier accept it.
func (s *Signer) Sign(req *http.Request) error {
	c, err := s.prepared()
	if err != nil {
		return err
	}
	nonce := ""
	if s.Nonce {
		nonce = newNonce()
	}
	return s.sign(req, c, nonce, time.Now())
}

// sign signs req with the compiled configuration c.
func (s *Signer) sign(req *http.Request, c *signerCache, nonce string, now time.Time) error {
	if req == nil || req.URL == nil {
		return errors.New("signing: nil request or URL")
	}
	host := req.Host
	if host == "" {
		host = req.URL.Host
	}
	if host == "" {
		return errors.New("signing: request has no host")
	}
	scheme := req.URL.Scheme
	if scheme == "" {
		scheme = "https"
	}
	authority := normaliseAuthority(host, scheme)
	if strings.ContainsAny(authority, "\r\n") {
		return errors.New("signing: line break in the request's host")
	}
	input := c.input(now.Unix(), now.Add(s.expires()).Unix(), nonce)
	params := input[len(c.label)+1:]

	bp := baseBufs.Get().(*[]byte)
	base, err := c.appendBase((*bp)[:0], req, scheme, authority)
	if err == nil {
		base = append(base, `"@signature-params": `...)
		base = append(base, params...)
	}
	var sig []byte
	if err == nil {
		if priv, ok := s.Key.(ed25519.PrivateKey); ok {
			sig = ed25519.Sign(priv, base)
		} else { // e.g. an HSM or KMS handle
			sig, err = s.Key.Sign(rand.Reader, base, crypto.Hash(0))
			if err != nil {
				err = fmt.Errorf("signing: sign: %w", err)
			}
		}
	}
	*bp = base
	baseBufs.Put(bp)
	if err != nil {
		return err
	}

	sigField := make([]byte, 0, len(c.label)+3+base64.StdEncoding.EncodedLen(len(sig)))
	sigField = append(sigField, c.label...)
	sigField = append(sigField, "=:"...)
	sigField = base64.StdEncoding.AppendEncode(sigField, sig)
	sigField = append(sigField, ':')
	h := req.Header
	if h == nil {
		h = http.Header{}
		req.Header = h
	}
	vals := []string{c.field, input, string(sigField)} // one allocation for the three fields
	h["Signature-Agent"] = vals[0:1:1]
	h["Signature-Input"] = vals[1:2:2]
	h["Signature"] = vals[2:3:3]
	return nil
}

// appendBase appends the component lines of the signature base of req to b.
func (c *signerCache) appendBase(b []byte, req *http.Request, scheme, authority string) ([]byte, error) {
	for i := range c.comps {
		cc := &c.comps[i]
		if cc.kind == compAgent {
			b = append(b, cc.line...)
			continue
		}
		b = append(b, cc.line...)
		start := len(b)
		switch cc.kind {
		case compMethod:
			m := req.Method
			if m == "" {
				m = http.MethodGet
			}
			b = append(b, m...)
		case compAuthority:
			b = append(b, authority...)
		case compPath:
			b = appendPath(b, req.URL)
		case compQuery:
			b = append(b, '?')
			b = append(b, req.URL.RawQuery...)
		case compScheme:
			b = append(b, scheme...)
		case compRequestTarget:
			b = appendPath(b, req.URL)
			if req.URL.RawQuery != "" {
				b = append(b, '?')
				b = append(b, req.URL.RawQuery...)
			}
		case compTargetURI:
			b = append(b, scheme...)
			b = append(b, "://"...)
			b = append(b, authority...)
			b = appendPath(b, req.URL)
			if req.URL.RawQuery != "" {
				b = append(b, '?')
				b = append(b, req.URL.RawQuery...)
			}
		case compHeader:
			vals := req.Header.Values(cc.name)
			if len(vals) == 0 {
				return b, &ComponentError{Component: cc.name, Reason: "header absent from the request"}
			}
			for j, v := range vals {
				if j > 0 {
					b = append(b, ", "...)
				}
				b = append(b, strings.TrimSpace(v)...)
			}
		}
		if bytes.ContainsAny(b[start:], "\r\n") {
			return b, &ComponentError{Component: cc.name, Reason: "value has a line break"}
		}
		b = append(b, '\n')
	}
	return b, nil
}

// appendPath appends the @path value of u: its escaped path, "/" if empty.
func appendPath(b []byte, u *url.URL) []byte {
	p := u.EscapedPath()
	if p == "" {
		return append(b, '/')
	}
	return append(b, p...)
}

// baseBufs holds signature base buffers for Sign.
var baseBufs = sync.Pool{New: func() any { b := make([]byte, 0, 256); return &b }}

// input is the Signature-Input field: label=, then the serialised
// @signature-params value, parameters in httpsign's order.
func (c *signerCache) input(created, expires int64, nonce string) string {
	b := make([]byte, 0, len(c.label)+1+len(c.list)+len(c.tail)+48+len(nonce))
	b = append(b, c.label...)
	b = append(b, '=')
	b = append(b, c.list...)
	b = append(b, ";created="...)
	b = strconv.AppendInt(b, created, 10)
	b = append(b, ";expires="...)
	b = strconv.AppendInt(b, expires, 10)
	if nonce != "" {
		b = append(b, `;nonce=`...)
		b = strconv.AppendQuote(b, nonce)
	}
	b = append(b, c.tail...)
	return string(b)
}

func newNonce() string {
	b := make([]byte, NonceBytes)
	_, _ = rand.Read(b) // never fails (crypto/rand, Go 1.24+)
	return base64.StdEncoding.EncodeToString(b)
}

// Transport is an http.RoundTripper that signs every request it sends with
// Signer. It signs a clone (the caller's request is never modified), at send
// time, so a request that waited in a politeness queue carries a fresh
// created; each redirect hop and each retry passes through RoundTrip again and
// is signed for its own authority. It never reads or alters the body.
//
// Under a context from [WithRequested] it signs what the server asked for
// ([Signer.SignRequested]).
//
// A Transport with a nil Signer fails every request (an unsigned request from a
// bot that promises signatures would break that promise). Safe for concurrent
// use.
type Transport struct {
	Base   http.RoundTripper // nil means http.DefaultTransport
	Signer *Signer
}

func (t *Transport) base() http.RoundTripper {
	if t.Base != nil {
		return t.Base
	}
	return http.DefaultTransport
}

// RoundTrip implements http.RoundTripper.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.Signer == nil {
		closeBody(req)
		return nil, ErrNoKey
	}
	// A shallow copy with its own header is enough: Sign writes header
	// fields only.
	req2 := req.WithContext(req.Context())
	req2.Header = req.Header.Clone()
	var err error
	if r, ok := RequestedFrom(req.Context()); ok {
		err = t.Signer.SignRequested(req2, r)
	} else {
		err = t.Signer.Sign(req2)
	}
	if err != nil {
		closeBody(req)
		return nil, err
	}
	return t.base().RoundTrip(req2)
}

// CloseIdleConnections forwards to Base when it has the method.
func (t *Transport) CloseIdleConnections() {
	if ci, ok := t.base().(interface{ CloseIdleConnections() }); ok {
		ci.CloseIdleConnections()
	}
}

func closeBody(req *http.Request) {
	if req != nil && req.Body != nil {
		req.Body.Close()
	}
}
