package signing

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/dunglas/httpsfv"
)

// Requested is a signature a server asked for in an Accept-Signature field
// (RFC 9421 section 5.1): the label, the components to cover and the
// parameters it wants. [ParseAcceptSignature] returns it; [Signer.SignRequested]
// and [Transport] (through [WithRequested]) honour it.
//
// It is plain data; the zero value asks for nothing (the Signer's own
// configuration).
type Requested struct {
	Label string
	// Components are the requested component identifiers, serialised
	// (e.g. `"@method"`, `"signature-agent";key="sig1"`).
	Components []string
	Nonce      string // the nonce to sign with, "" for none
	Tag        string
	KeyID      string // the key the server wants, "" for any
	Alg        string

	comps []component // parsed Components
}

// ParseAcceptSignature parses the lines of an Accept-Signature field into
// the signatures it requests, in order. Errors wrap [ErrInvalidSignature]
// (as every error about a malformed signature field does).
func ParseAcceptSignature(lines []string) ([]Requested, error) {
	d, err := httpsfv.UnmarshalDictionary(lines)
	if err != nil {
		return nil, parseError("Accept-Signature is not a dictionary: %v", err)
	}
	var out []Requested
	for _, label := range d.Names() {
		m, _ := d.Get(label)
		il, ok := m.(httpsfv.InnerList)
		if !ok {
			return nil, parseError("Accept-Signature member %q is not an inner list", label)
		}
		r := Requested{Label: label}
		for _, it := range il.Items {
			c, err := parseComponent(it)
			if err != nil {
				return nil, parseError("Accept-Signature member %q: %v", label, err)
			}
			r.comps = append(r.comps, c)
			r.Components = append(r.Components, c.id)
		}
		if il.Params != nil {
			for _, p := range []struct {
				name string
				dst  *string
			}{{"nonce", &r.Nonce}, {"tag", &r.Tag}, {"keyid", &r.KeyID}, {"alg", &r.Alg}} {
				if v, ok := il.Params.Get(p.name); ok {
					s, ok := v.(string)
					if !ok {
						return nil, parseError("Accept-Signature member %q: %s is not a string", label, p.name)
					}
					*p.dst = s
				}
			}
		}
		out = append(out, r)
	}
	return out, nil
}

// compileRequested builds the per-signature configuration for r from the
// Signer's, or says why r cannot be honoured.
func (s *Signer) compileRequested(r *Requested) (*signerCache, error) {
	base, err := s.prepared()
	if err != nil {
		return nil, err
	}
	if r.Tag != "" && r.Tag != TagWebBotAuth {
		return nil, &ComponentError{Component: "tag", Reason: fmt.Sprintf("tag %q requested; this signer signs %q only", r.Tag, TagWebBotAuth)}
	}
	if r.KeyID != "" && r.KeyID != base.kid {
		return nil, &ComponentError{Component: "keyid", Reason: "another key requested (" + r.KeyID + ")"}
	}
	if r.Alg != "" && r.Alg != "ed25519" {
		return nil, &ComponentError{Component: "alg", Reason: "algorithm " + r.Alg + " requested; the key is Ed25519"}
	}
	for i := 0; i < len(r.Nonce); i++ {
		if r.Nonce[i] < 0x20 || r.Nonce[i] > 0x7e {
			return nil, &ComponentError{Component: "nonce", Reason: "not printable ASCII"}
		}
	}
	label := base.label
	if r.Label != "" {
		label = r.Label
	}
	var names []string
	anchored := false
	for _, c := range r.comps {
		switch {
		case c.req:
			return nil, &ComponentError{Component: c.id, Reason: "a request cannot cover a component of another message"}
		case c.name == "signature-agent":
			if base.form == Dictionary && c.key != "" && c.key != label {
				return nil, &ComponentError{Component: c.id, Reason: "the Signature-Agent member is keyed by the signature's label " + label}
			}
			continue // always covered
		case c.key != "":
			return nil, &ComponentError{Component: c.id, Reason: "dictionary members of request headers are not supported"}
		}
		anchored = anchored || c.name == "@authority" || c.name == "@target-uri"
		names = append(names, c.name)
	}
	if !anchored { // the profile requires one of them
		names = append([]string{"@authority"}, names...)
	}
	field, err := agentField(s.Agent, s.Form, label)
	if err != nil {
		return nil, err
	}
	c := &signerCache{pub: base.pub, agent: s.Agent, form: s.Form, label: label, kid: base.kid, field: field}
	if err := c.compile(names); err != nil {
		return nil, err
	}
	return c, nil
}

// SignRequested signs req as Sign does, but with what r asks for: its
// label, its components (plus @authority when it names neither @authority
// nor @target-uri, and the Signature-Agent member, always covered) and its
// nonce. A request the Signer cannot honour (a component it cannot sign or
// the request lacks, another key, tag or algorithm) fails with a
// [*ComponentError] saying why, req untouched.
func (s *Signer) SignRequested(req *http.Request, r *Requested) error {
	c, err := s.compileRequested(r)
	if err != nil {
		return err
	}
	return s.sign(req, c, r.Nonce, time.Now())
}

type requestedKey struct{}

// WithRequested returns a context under which [Transport] signs with
// [Signer.SignRequested] for r instead of [Signer.Sign]: how a client
// answers an Accept-Signature challenge with a retry.
func WithRequested(ctx context.Context, r *Requested) context.Context {
	return context.WithValue(ctx, requestedKey{}, r)
}

// RequestedFrom returns the Requested that WithRequested put in ctx.
func RequestedFrom(ctx context.Context) (*Requested, bool) {
	r, ok := ctx.Value(requestedKey{}).(*Requested)
	return r, ok
}
