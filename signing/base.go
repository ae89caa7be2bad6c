package signing

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/dunglas/httpsfv"
)

// This file is the small RFC 9421 engine the package uses for request
// signatures (cheaper per request than httpsign v0.3.2; see doc.go) and
// wherever httpsign cannot serve: verification (httpsign mutates req.URL, cannot pick the
// key from keyid before verifying and only checks parameters that are present),
// the directory response signatures ("@authority";req plus content-digest over
// a ResponseWriter) and the byte-exact RFC 9421 Appendix B.2.6 reproduction
// (httpsign's created is not settable). Structured fields are parsed and
// serialised with github.com/dunglas/httpsfv, the library httpsign uses too.

// message is what a signature base is computed over: a request, or a
// response with its request.
type message struct {
	method    string
	scheme    string
	authority string // already normalised
	url       *url.URL
	header    http.Header
	status    int             // responses only
	req       *message        // the request a response answers ("req" flag)
	agent     *SignatureAgent // Signature-Agent as already parsed, if it was
}

func requestMessage(method, scheme, authority string, u *url.URL, h http.Header) *message {
	return &message{method: method, scheme: scheme, authority: authority, url: u, header: h}
}

// normaliseAuthority lowercases host and drops the port when it is the
// default for scheme. With scheme "" (a server that cannot tell, e.g. behind a
// TLS-terminating proxy) both 80 and 443 are dropped.
func normaliseAuthority(host, scheme string) string {
	host = strings.ToLower(strings.TrimSpace(host))
	if strings.IndexByte(host, ':') < 0 {
		return host // no port
	}
	h, port, err := net.SplitHostPort(host)
	if err != nil {
		return host // no port
	}
	drop := false
	switch scheme {
	case "http":
		drop = port == "80"
	case "https":
		drop = port == "443"
	case "":
		drop = port == "80" || port == "443"
	}
	if !drop {
		return host
	}
	if strings.Contains(h, ":") {
		return "[" + h + "]"
	}
	return h
}

// component is one parsed component identifier of a Signature-Input member.
type component struct {
	item httpsfv.Item // as received
	id   string       // item serialised: the component identifier in the base
	name string       // lowercased
	key  string       // ;key= dictionary member, "" if none
	req  bool         // ;req
}

func parseComponent(it httpsfv.Item) (component, error) {
	name, ok := it.Value.(string)
	if !ok || name == "" || name != strings.ToLower(name) {
		return component{}, fmt.Errorf("component identifier %v is not a lowercase string", it.Value)
	}
	if it.Params == nil || len(it.Params.Names()) == 0 {
		// The common case, serialised without the library: a lowercase
		// name the parser accepted is printable ASCII, where strconv's
		// quoting is the structured-field String serialisation.
		return component{item: it, id: strconv.Quote(name), name: name}, nil
	}
	id, err := httpsfv.Marshal(it)
	if err != nil {
		return component{}, err
	}
	c := component{item: it, id: id, name: name}
	for _, p := range it.Params.Names() {
		v, _ := it.Params.Get(p)
		switch p {
		case "key":
			s, ok := v.(string)
			if !ok {
				return component{}, fmt.Errorf("component %q: key parameter is not a string", name)
			}
			c.key = s
		case "req":
			if b, ok := v.(bool); !ok || !b {
				return component{}, fmt.Errorf("component %q: req parameter is not true", name)
			}
			c.req = true
		default:
			return component{}, fmt.Errorf("component %q: parameter %q is not supported", name, p)
		}
	}
	if c.key != "" && strings.HasPrefix(name, "@") {
		return component{}, fmt.Errorf("component %q: key parameter on a derived component", name)
	}
	return c, nil
}

// parsedAgentMember returns the Signature-Agent member c covers when the
// verifier already parsed the field and the member has no parameters.
func (c component) parsedAgentMember(m *message) (AgentMember, bool) {
	if c.key == "" || c.req || c.name != "signature-agent" || m.agent == nil || m.agent.Form != Dictionary {
		return AgentMember{}, false
	}
	mem, ok := m.agent.Lookup(c.key)
	return mem, ok && !mem.Params
}

func (c component) value(m *message) (string, error) {
	if c.req {
		if m.req == nil {
			return "", fmt.Errorf("component %q has req but there is no request", c.name)
		}
		m = m.req
	}
	if strings.HasPrefix(c.name, "@") {
		return derivedValue(c.name, m)
	}
	vals := m.header.Values(c.name)
	if len(vals) == 0 {
		return "", fmt.Errorf("header %q is absent", c.name)
	}
	if c.key != "" {
		d, err := httpsfv.UnmarshalDictionary(vals)
		if err != nil {
			return "", fmt.Errorf("header %q is not a dictionary: %w", c.name, err)
		}
		mem, ok := d.Get(c.key)
		if !ok {
			return "", fmt.Errorf("header %q has no member %q", c.name, c.key)
		}
		return httpsfv.Marshal(mem)
	}
	var b strings.Builder
	for i, v := range vals {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strings.TrimSpace(v))
	}
	return b.String(), nil
}

func derivedValue(name string, m *message) (string, error) {
	switch name {
	case "@status":
		if m.status == 0 {
			return "", fmt.Errorf("@status on a request")
		}
		return fmt.Sprint(m.status), nil
	case "@method":
		return m.method, nil
	case "@authority":
		return m.authority, nil
	case "@scheme":
		return m.scheme, nil
	}
	if m.url == nil {
		return "", fmt.Errorf("%s on a response", name)
	}
	path := m.url.EscapedPath()
	if path == "" {
		path = "/"
	}
	switch name {
	case "@path":
		return path, nil
	case "@query":
		return "?" + m.url.RawQuery, nil
	case "@request-target":
		if m.url.RawQuery != "" {
			return path + "?" + m.url.RawQuery, nil
		}
		return path, nil
	case "@target-uri":
		u := url.URL{Scheme: m.scheme, Host: m.authority, Path: m.url.Path, RawPath: m.url.RawPath, RawQuery: m.url.RawQuery}
		return u.String(), nil
	}
	return "", fmt.Errorf("derived component %q is not supported", name)
}

// signatureBase computes the RFC 9421 section 2.5 signature base of m for the
// given covered components and serialised @signature-params value.
func signatureBase(m *message, comps []component, params string) (string, error) {
	b, err := appendSignatureBase(make([]byte, 0, 256+len(params)), m, comps, params)
	return string(b), err
}

// appendSignatureBase appends the signature base to b.
func appendSignatureBase(b []byte, m *message, comps []component, params string) ([]byte, error) {
	for i, c := range comps {
		for _, prev := range comps[:i] {
			if prev.id == c.id {
				return b, fmt.Errorf("component %s is listed twice", c.id)
			}
		}
		b = append(b, c.id...)
		b = append(b, ": "...)
		start := len(b)
		if mem, ok := c.parsedAgentMember(m); ok {
			// Already parsed: a member without parameters serialises as
			// its quoted URL.
			b = strconv.AppendQuote(b, mem.URL)
		} else {
			v, err := c.value(m)
			if err != nil {
				return b, err
			}
			b = append(b, v...)
		}
		if bytes.ContainsAny(b[start:], "\r\n") {
			return b, fmt.Errorf("component %s has a line break", c.id)
		}
		b = append(b, '\n')
	}
	b = append(b, `"@signature-params": `...)
	return append(b, params...), nil
}

// newComponent builds a component identifier for signing.
func newComponent(name, key string, req bool) component {
	it := httpsfv.NewItem(name)
	if key != "" {
		it.Params.Add("key", key)
	}
	if req {
		it.Params.Add("req", true)
	}
	id, _ := httpsfv.Marshal(it) // a string item with key and req parameters always serialises
	return component{item: it, id: id, name: name, key: key, req: req}
}

// sigInput is one parsed member of a Signature-Input field.
type sigInput struct {
	label   string
	comps   []component
	params  *httpsfv.Params // parameters, from the reference parser
	fparams []sfParam       // parameters, from the fast path (params nil)
	raw     string          // serialised inner list: the @signature-params value
}

// param returns the parameter name as httpsfv would give it.
func (s *sigInput) param(name string) (any, bool) {
	if s.params != nil {
		return s.params.Get(name)
	}
	for _, p := range s.fparams {
		if p.name != name {
			continue
		}
		switch p.kind {
		case 's':
			return p.str, true
		case 'i':
			return p.num, true
		case 't':
			return httpsfv.Token(p.str), true
		}
		return p.num == 1, true
	}
	return nil, false
}

// fparam returns the fast path's parameter name.
func (s *sigInput) fparam(name string) (sfParam, bool) {
	for _, p := range s.fparams {
		if p.name == name {
			return p, true
		}
	}
	return sfParam{}, false
}

func (s *sigInput) intParam(name string) (int64, bool, error) {
	if s.params == nil { // fast path: no boxing
		p, ok := s.fparam(name)
		if ok && p.kind != 'i' {
			return 0, true, fmt.Errorf("parameter %s is not an integer", name)
		}
		return p.num, ok, nil
	}
	v, ok := s.param(name)
	if !ok {
		return 0, false, nil
	}
	i, ok := v.(int64)
	if !ok {
		return 0, true, fmt.Errorf("parameter %s is not an integer", name)
	}
	return i, true, nil
}

func (s *sigInput) stringParam(name string) (string, bool, error) {
	if s.params == nil { // fast path: no boxing
		p, ok := s.fparam(name)
		if ok && p.kind != 's' {
			return "", true, fmt.Errorf("parameter %s is not a string", name)
		}
		return p.str, ok, nil
	}
	v, ok := s.param(name)
	if !ok {
		return "", false, nil
	}
	str, ok := v.(string)
	if !ok {
		return "", true, fmt.Errorf("parameter %s is not a string", name)
	}
	return str, true, nil
}

func (s *sigInput) covers(name string) (component, bool) {
	for _, c := range s.comps {
		if c.name == name {
			return c, true
		}
	}
	return component{}, false
}

// parseSignatureInput parses the field lines of a Signature-Input field into
// its members, in order.
func parseSignatureInput(lines []string) ([]sigInput, error) {
	if out, ok := fastSignatureInput(lines); ok {
		return out, nil
	}
	return slowSignatureInput(lines)
}

// slowSignatureInput is parseSignatureInput through httpsfv: any valid
// field, canonical or not.
func slowSignatureInput(lines []string) ([]sigInput, error) {
	d, err := httpsfv.UnmarshalDictionary(lines)
	if err != nil {
		return nil, fmt.Errorf("signing: Signature-Input is not a dictionary: %w", err)
	}
	var out []sigInput
	for _, label := range d.Names() {
		m, _ := d.Get(label)
		il, ok := m.(httpsfv.InnerList)
		if !ok {
			return nil, fmt.Errorf("signing: Signature-Input member %q is not an inner list", label)
		}
		si := sigInput{label: label, params: il.Params}
		if si.params == nil {
			si.params = httpsfv.NewParams()
		}
		for _, it := range il.Items {
			c, err := parseComponent(it)
			if err != nil {
				return nil, fmt.Errorf("signing: Signature-Input member %q: %w", label, err)
			}
			si.comps = append(si.comps, c)
		}
		if si.raw, err = httpsfv.Marshal(il); err != nil {
			return nil, fmt.Errorf("signing: Signature-Input member %q: %w", label, err)
		}
		out = append(out, si)
	}
	return out, nil
}

// parseSignatures parses a Signature field into label -> signature bytes.
func parseSignatures(lines []string) (map[string][]byte, error) {
	if out, ok := fastSignatures(lines); ok {
		return out, nil
	}
	return slowSignatures(lines)
}

// slowSignatures is parseSignatures through httpsfv.
func slowSignatures(lines []string) (map[string][]byte, error) {
	d, err := httpsfv.UnmarshalDictionary(lines)
	if err != nil {
		return nil, fmt.Errorf("signing: Signature is not a dictionary: %w", err)
	}
	out := make(map[string][]byte, len(d.Names()))
	for _, label := range d.Names() {
		m, _ := d.Get(label)
		it, ok := m.(httpsfv.Item)
		if !ok {
			return nil, fmt.Errorf("signing: Signature member %q is not an item", label)
		}
		b, ok := it.Value.([]byte)
		if !ok {
			return nil, fmt.Errorf("signing: Signature member %q is not a byte sequence", label)
		}
		out[label] = b
	}
	return out, nil
}

// signParams serialises the covered components and parameters of a new
// signature: the Signature-Input member value and @signature-params.
func signParams(comps []component, params *httpsfv.Params) (string, error) {
	il := httpsfv.InnerList{Params: params}
	for _, c := range comps {
		il.Items = append(il.Items, c.item)
	}
	return httpsfv.Marshal(il)
}

// dictField serialises one label=value member of a Signature or
// Signature-Input field.
func dictMember(label string, v httpsfv.Member) (string, error) {
	d := httpsfv.NewDictionary()
	d.Add(label, v)
	return httpsfv.Marshal(d)
}
