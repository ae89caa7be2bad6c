package signing

import (
	"errors"
	"fmt"
)

// ErrInvalidSignature is matched (errors.Is) by every verification failure.
// The details are in a [*VerifyError].
var ErrInvalidSignature = errors.New("signing: invalid signature")

// Reason says why a verification failed. Values are stable strings, fit for
// logs and metrics.
//
// The zero value "" is no reason; a [VerifyError] always has one.
type Reason string

const (
	ReasonMissing      Reason = "missing_signature"     // no Signature / Signature-Input
	ReasonMalformed    Reason = "malformed"             // a header does not parse
	ReasonMissingParam Reason = "missing_parameter"     // created, expires, keyid or tag absent
	ReasonWrongTag     Reason = "wrong_tag"             // tag is not web-bot-auth
	ReasonExpired      Reason = "expired"               // expires is past (beyond skew)
	ReasonFuture       Reason = "created_in_future"     // created is ahead (beyond skew)
	ReasonTooLong      Reason = "lifetime_too_long"     // expires-created above Verifier.MaxLifetime
	ReasonComponents   Reason = "components"            // @authority or signature-agent not covered
	ReasonAgent        Reason = "signature_agent"       // Signature-Agent absent, unusable or not allowed
	ReasonUnknownKey   Reason = "unknown_key"           // keyid not in the key set / directory
	ReasonDirectory    Reason = "directory_unavailable" // the directory could not be fetched or proven
	ReasonBadSignature Reason = "bad_signature"         // the signature does not verify (tampering)
)

// VerifyError is the error of a failed verification. errors.Is(err,
// ErrInvalidSignature) is true for every VerifyError; Err, when set, is the
// underlying cause (a parse or fetch error).
//
// It is plain data; its zero value (no Reason) is never returned and still
// matches [ErrInvalidSignature].
type VerifyError struct {
	Reason Reason
	Label  string // the signature label concerned, if known
	KeyID  string // its keyid, if known
	Agent  string // its Signature-Agent URL, if known
	Detail string
	Err    error
}

func (e *VerifyError) Error() string {
	s := "signing: invalid signature: " + string(e.Reason)
	if e.Label != "" {
		s += " (" + e.Label + ")"
	}
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns ErrInvalidSignature and the cause.
func (e *VerifyError) Unwrap() []error {
	if e.Err != nil {
		return []error{ErrInvalidSignature, e.Err}
	}
	return []error{ErrInvalidSignature}
}

// Unverified reports whether the failure is "could not decide" (the key
// directory was unreachable or unproven) rather than "invalid", the
// distinction draft-meunier-webbotauth-httpsig-protocol draws between
// unverified and invalid outcomes.
func (e *VerifyError) Unverified() bool { return e.Reason == ReasonDirectory }

func parseError(format string, args ...any) error {
	return &VerifyError{Reason: ReasonMalformed, Detail: fmt.Sprintf(format, args...)}
}
