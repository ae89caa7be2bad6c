package signing

import (
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

// Signer adds Web Bot Auth signatures (RFC 9421, Ed25519) to requests.
//
// Each signature covers @authority (lowercased, default port removed) and the
// Signature-Agent field, and carries created (the time of signing), expires,
// keyid (the key's RFC 7638 thumbprint), tag="web-bot-auth" and, when Nonce
// is set, a random 64-byte nonce (base64, as npm web-bot-auth sends it). alg
// is not sent: RFC 9421 makes it optional and the key fixes it. A request
// signed twice within one second without a nonce gets the same signature
// (Ed25519 is deterministic); set Nonce when verifiers track replays.
//
// The zero value has no key and Sign fails with [ErrNoKey]. A Signer is safe
// for concurrent use; do not change its fields while it is in use.
type Signer struct {
	// Key signs. Its public half must be Ed25519. An ed25519.PrivateKey
	// works; so does any crypto.Signer backed by an HSM or KMS.
	Key crypto.Signer
	// Agent is the Signature-Agent URL, e.g. "https://bothy.tools": the origin
	// whose /.well-known/http-message-signatures-directory lists Key.
	Agent string
	// Form is the wire form of Signature-Agent (see [AgentForm]); the zero
	// value is QuotedString.
	Form AgentForm
	// Label is the signature label and, in the Dictionary form, the
	// Signature-Agent key. Empty means "sig1".
	Label string
	// Expires is how long a signature is valid after it is made. Zero means
	// DefaultExpires (60 s): long enough for clock skew and a slow handshake,
	// short enough that a captured signature is soon worthless. The drafts
	// recommend at most 24 h; values below one second are raised to one
	// second.
	Expires time.Duration
	// Nonce adds a fresh random nonce parameter to every signature.
	Nonce bool

	mu    sync.Mutex // guards cache
	cache *signerCache
}

type signerCache struct {
	pub   string // public key bytes the cache was computed for
	agent string
	form  AgentForm
	label string
	kid   string
	field string // Signature-Agent value

	// The constant parts of the signature base and Signature-Input (see
	// Sign): only the authority, created, expires and nonce change.
	afterAuthority string // "\n" + the signature-agent line + `"@signature-params": `
	comps          string // ("@authority" "signature-agent"...)
	tail           string // ;tag="web-bot-auth";keyid="..."
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

// KeyID returns the keyid the Signer puts in its signatures: the RFC 7638
// thumbprint of Key's public half.
func (s *Signer) KeyID() (string, error) {
	c, err := s.prepared()
	if err != nil {
		return "", err
	}
	return c.kid, nil
}

// prepared returns the per-configuration values (thumbprint, field value),
// computed once and recomputed if a field changed.
func (s *Signer) prepared() (*signerCache, error) {
	if s == nil || s.Key == nil {
		return nil, ErrNoKey
	}
	pub, err := ed25519Public(s.Key)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNoKey, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.cache
	if c != nil && c.pub == string(pub) && c.agent == s.Agent && c.form == s.Form && c.label == s.label() {
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
	c = &signerCache{pub: string(pub), agent: s.Agent, form: s.Form, label: label, kid: kid, field: field}
	if err := c.compile(); err != nil {
		return nil, err
	}
	s.cache = c
	return c, nil
}

// compile serialises the constant parts of every signature with the
// package's RFC 9421 engine (base.go).
func (c *signerCache) compile() error {
	dictKey := ""
	if c.form == Dictionary {
		dictKey = c.label
	}
	comps := []component{newComponent("@authority", "", false), newComponent("signature-agent", dictKey, false)}
	msg := requestMessage(http.MethodGet, "https", "", &url.URL{Path: "/"}, http.Header{"Signature-Agent": {c.field}})
	rest, err := signatureBase(msg, comps[1:], "")
	if err != nil {
		return fmt.Errorf("signing: %w", err)
	}
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
	c.afterAuthority = "\n" + rest
	c.comps = list
	c.tail = strings.TrimPrefix(tail, "()")
	return nil
}

// Sign adds Signature-Agent, Signature-Input and Signature to req.Header,
// replacing any already there. It reads req.Host (or req.URL.Host) and
// req.URL.Scheme only: never the body. It modifies req; a RoundTripper must
// clone first ([Transport] does). created is time.Now() at the call, so
// under testing/synctest it is the bubble's fake time.
//
// The signature is built by this package's RFC 9421 engine, not by httpsign
// (see the package documentation): the covered components and parameters
// are fixed per Signer, so all but the authority, created, expires and
// nonce is serialised once, and a signature costs one Ed25519 signing plus
// a few string appends. Tests check the result byte for byte against
// httpsign's signer and have httpsign's verifier accept it.
func (s *Signer) Sign(req *http.Request) error {
	c, err := s.prepared()
	if err != nil {
		return err
	}
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
	now := time.Now()
	nonce := ""
	if s.Nonce {
		nonce = newNonce()
	}
	input := c.input(now.Unix(), now.Add(s.expires()).Unix(), nonce)
	params := input[len(c.label)+1:]

	bp := baseBufs.Get().(*[]byte)
	base := append((*bp)[:0], `"@authority": `...)
	base = append(base, authority...)
	base = append(base, c.afterAuthority...)
	base = append(base, params...)
	var sig []byte
	if priv, ok := s.Key.(ed25519.PrivateKey); ok {
		sig = ed25519.Sign(priv, base)
	} else { // e.g. an HSM or KMS handle
		sig, err = s.Key.Sign(rand.Reader, base, crypto.Hash(0))
	}
	*bp = base
	baseBufs.Put(bp)
	if err != nil {
		return fmt.Errorf("signing: sign: %w", err)
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

// baseBufs holds signature base buffers for Sign.
var baseBufs = sync.Pool{New: func() any { b := make([]byte, 0, 256); return &b }}

// input is the Signature-Input field: label=, then the serialised
// @signature-params value, parameters in httpsign's order.
func (c *signerCache) input(created, expires int64, nonce string) string {
	b := make([]byte, 0, len(c.label)+1+len(c.comps)+len(c.tail)+48+len(nonce))
	b = append(b, c.label...)
	b = append(b, '=')
	b = append(b, c.comps...)
	b = append(b, ";created="...)
	b = strconv.AppendInt(b, created, 10)
	b = append(b, ";expires="...)
	b = strconv.AppendInt(b, expires, 10)
	if nonce != "" {
		b = append(b, `;nonce="`...)
		b = append(b, nonce...)
		b = append(b, '"')
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
	if err := t.Signer.Sign(req2); err != nil {
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
