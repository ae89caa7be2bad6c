package signing

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/dunglas/httpsfv"
)

// AgentForm is the wire form of the Signature-Agent header field. The field
// changed between drafts and deployed verifiers differ, so the form is a
// configuration choice:
//
//   - [Dictionary] `sig1="https://example.com"`, covered as
//     `"signature-agent";key="sig1"`: the form draft-ietf-webbotauth-httpsig-protocol
//     (and architecture-04 and later) requires of signers, an https URL and a
//     member without parameters. The zero value, so the default. Verifiers
//     written against the older drafts fail on it: npm web-bot-auth 0.1.3
//     does (a bug of the http-message-sig 0.2.0 it bundles; see the interop
//     test).
//   - [QuotedString] `"https://example.com"`: a structured-field String, as
//     draft-meunier-web-bot-auth-architecture-01 to -03 define it. The
//     current draft lets verifiers still accept it; Cloudflare's production
//     verifier and npm web-bot-auth 0.1.x check it. Opt in for verifiers
//     that know only this form, or where a page promises that exact text.
//   - [BareURL] `https://example.com`: the URL unquoted, as an example of
//     directory-03 sends it. Not a valid structured field: strict verifiers
//     reject it; lenient ones that cover the raw field text accept it (npm
//     web-bot-auth 0.1.3 does), and so do WAF rules matching
//     `signature-agent contains "example.com"`. Opt in only when a page or
//     partner promises that exact text.
//
// All three verify with [Verifier].
type AgentForm int

const (
	Dictionary   AgentForm = iota // sig1="https://example.com" (the default)
	QuotedString                  // "https://example.com"
	BareURL                       // https://example.com
)

func (f AgentForm) String() string {
	switch f {
	case QuotedString:
		return "quoted-string"
	case BareURL:
		return "bare-url"
	case Dictionary:
		return "dictionary"
	}
	return fmt.Sprintf("AgentForm(%d)", int(f))
}

// SignatureAgent is a parsed Signature-Agent field.
//
// It is plain data; the zero value is a Dictionary field with no member,
// which [ParseSignatureAgent] never returns.
type SignatureAgent struct {
	Form AgentForm
	// URL is the agent URL of a BareURL or QuotedString field.
	URL string
	// Members are the members of a Dictionary field, by key, in order.
	Members []AgentMember
}

// AgentMember is one member of a Dictionary Signature-Agent field.
//
// It is plain data; the zero value (no key, no URL) never comes out of
// [ParseSignatureAgent].
type AgentMember struct {
	Key  string
	URL  string
	Type string // the "type" parameter of earlier drafts, if it was a token
	// Params is true when the member carries parameters: the current draft
	// forbids them and a [Verifier] ignores such a member.
	Params bool
}

// Lookup returns the URL of member key of a Dictionary field.
func (a *SignatureAgent) Lookup(key string) (AgentMember, bool) {
	for _, m := range a.Members {
		if m.Key == key {
			return m, true
		}
	}
	return AgentMember{}, false
}

// ParseSignatureAgent parses the field lines of a Signature-Agent header in
// any of the three [AgentForm]s. A value that starts with a double quote is a
// String; one that parses as a structured Dictionary of Strings is a
// Dictionary; an absolute http(s) URL otherwise is a BareURL. Each URL must be
// an absolute http or https URL. Errors wrap [ErrInvalidSignature].
func ParseSignatureAgent(lines []string) (*SignatureAgent, error) {
	if len(lines) == 0 {
		return nil, parseError("Signature-Agent is absent")
	}
	joined := strings.TrimSpace(strings.Join(lines, ", "))
	if joined == "" {
		return nil, parseError("Signature-Agent is empty")
	}
	if strings.HasPrefix(joined, `"`) {
		it, err := httpsfv.UnmarshalItem(lines)
		if err != nil {
			return nil, parseError("Signature-Agent string: %v", err)
		}
		s, ok := it.Value.(string)
		if !ok {
			return nil, parseError("Signature-Agent is not a string")
		}
		if err := checkAgentURL(s); err != nil {
			return nil, err
		}
		return &SignatureAgent{Form: QuotedString, URL: s}, nil
	}
	if ms, ok := fastAgentMembers(lines); ok {
		for _, m := range ms {
			if err := checkAgentURL(m.URL); err != nil {
				return nil, err
			}
		}
		return &SignatureAgent{Form: Dictionary, Members: ms}, nil
	}
	if d, err := httpsfv.UnmarshalDictionary(lines); err == nil {
		a := &SignatureAgent{Form: Dictionary}
		for _, k := range d.Names() {
			m, _ := d.Get(k)
			it, ok := m.(httpsfv.Item)
			if !ok {
				return nil, parseError("Signature-Agent member %q is an inner list", k)
			}
			s, ok := it.Value.(string)
			if !ok {
				return nil, parseError("Signature-Agent member %q is not a string", k)
			}
			if err := checkAgentURL(s); err != nil {
				return nil, err
			}
			mem := AgentMember{Key: k, URL: s, Params: it.Params != nil && len(it.Params.Names()) > 0}
			if it.Params != nil {
				if t, _ := it.Params.Get("type"); t != nil {
					if tok, ok := t.(httpsfv.Token); ok {
						mem.Type = string(tok)
					}
				}
			}
			a.Members = append(a.Members, mem)
		}
		return a, nil
	}
	if len(lines) > 1 {
		return nil, parseError("Signature-Agent has %d bare lines", len(lines))
	}
	if err := checkAgentURL(joined); err != nil {
		return nil, err
	}
	return &SignatureAgent{Form: BareURL, URL: joined}, nil
}

func checkAgentURL(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // without the URL, which may hold user information
		}
		return parseError("Signature-Agent URL: %v", err)
	}
	switch {
	case u.User != nil: // the URL is not repeated: user information may be a secret
		return parseError("Signature-Agent URL has user information")
	case (u.Scheme != "https" && u.Scheme != "http") || u.Host == "":
		return parseError("Signature-Agent %q is not an absolute http(s) URL", s)
	}
	if strings.ContainsAny(s, " \t\r\n\",") {
		return parseError("Signature-Agent %q has a space, quote or comma", s)
	}
	return nil
}

// agentField renders the Signature-Agent value for agent in form f, label
// being the dictionary key.
func agentField(agent string, f AgentForm, label string) (string, error) {
	if err := checkAgentURL(agent); err != nil {
		return "", fmt.Errorf("signing: Signer.Agent: %w", err)
	}
	switch f {
	case BareURL:
		return agent, nil
	case QuotedString:
		return httpsfv.Marshal(httpsfv.NewItem(agent))
	case Dictionary:
		if !strings.HasPrefix(agent, "https://") {
			return "", &ConfigError{Field: "Agent", Detail: "the Dictionary form needs an https URL"}
		}
		return dictMember(label, httpsfv.NewItem(agent))
	}
	return "", fmt.Errorf("signing: unknown AgentForm %d", int(f))
}
