package signing

import (
	"errors"
	"fmt"
)

// ErrInvalidSignature is matched (errors.Is) by every verification that
// ended "invalid": a signature is present and wrong (malformed, expired,
// created in the future, missing a parameter or component, tampered,
// replayed). The details are in a [*VerifyError].
var ErrInvalidSignature = errors.New("signing: invalid signature")

// ErrUnverified is matched (errors.Is) by every verification that ended
// "unverified": there is no signature, or the verifier could not obtain
// what it needs to decide (the key directory is unavailable or refused by
// the verifier's limits, the key is not in it, the replay state is full).
// The draft asks verifiers to keep this outcome apart from invalid: it says
// nothing about the sender. The details are in a [*VerifyError].
var ErrUnverified = errors.New("signing: signature unverified")

// ErrAddressRefused is the cause (errors.Is) of a directory fetch that the
// verifier refused to connect: the dialled address is loopback, private,
// link-local, unspecified, multicast, shared (100.64.0.0/10), broadcast or
// otherwise not globally reachable (IANA's special-purpose registries), and
// not in Verifier.AllowInternal.
var ErrAddressRefused = errors.New("signing: directory address is internal")

// ErrFetchesBusy is the cause (errors.Is) of an unverified outcome whose
// key set was not fetched because Verifier.MaxFetches fetches for agents
// not yet seen to verify were in flight.
var ErrFetchesBusy = errors.New("signing: too many key set fetches in flight")

// Reason says why a verification failed. Values are stable strings, fit for
// logs and metrics.
//
// The zero value "" is no reason; a [VerifyError] always has one.
type Reason string

const (
	ReasonMissing      Reason = "missing_signature"        // no Signature / Signature-Input (unverified)
	ReasonMalformed    Reason = "malformed"                // a header does not parse
	ReasonMissingParam Reason = "missing_parameter"        // created, expires, keyid, tag (or a required nonce) absent
	ReasonWrongTag     Reason = "wrong_tag"                // tag is not web-bot-auth
	ReasonExpired      Reason = "expired"                  // expires is past (beyond skew)
	ReasonFuture       Reason = "created_in_future"        // created is ahead (beyond skew)
	ReasonTooLong      Reason = "lifetime_too_long"        // expires-created above Verifier.MaxLifetime
	ReasonComponents   Reason = "components"               // @authority/@target-uri or signature-agent not covered
	ReasonAgent        Reason = "signature_agent"          // Signature-Agent absent, unusable or not allowed
	ReasonUnknownKey   Reason = "unknown_key"              // keyid not in the key set / directory (unverified)
	ReasonDirectory    Reason = "directory_unavailable"    // the directory could not be had or was refused (unverified)
	ReasonBadSignature Reason = "bad_signature"            // the signature does not verify (tampering)
	ReasonReplayed     Reason = "replayed"                 // the nonce was seen before (Verifier.Nonces)
	ReasonReplayState  Reason = "replay_state_unavailable" // the nonce cache is full (unverified)
)

// Unverified reports whether r is a reason of the unverified outcome.
func (r Reason) Unverified() bool {
	switch r {
	case ReasonMissing, ReasonUnknownKey, ReasonDirectory, ReasonReplayState:
		return true
	}
	return false
}

// VerifyError is the error of a failed verification. It matches (errors.Is)
// [ErrUnverified] when its Reason is one of the unverified outcome and
// [ErrInvalidSignature] otherwise; Err, when set, is the underlying cause (a
// parse or fetch error).
//
// It is plain data; its zero value (no Reason) is never returned and
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
	if e.Reason.Unverified() {
		s = "signing: signature unverified: " + string(e.Reason)
	}
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

// Unwrap returns the outcome sentinel and the cause.
func (e *VerifyError) Unwrap() []error {
	outcome := ErrInvalidSignature
	if e.Reason.Unverified() {
		outcome = ErrUnverified
	}
	if e.Err != nil {
		return []error{outcome, e.Err}
	}
	return []error{outcome}
}

// Unverified reports whether the failure is "could not decide" rather than
// "invalid": the distinction the draft's verifier outcomes draw.
func (e *VerifyError) Unverified() bool { return e.Reason.Unverified() }

// Outcome is the verdict on a request: verified, invalid or unverified.
type Outcome int

const (
	// Unverified: no signature, or not enough information to decide. The
	// zero value.
	Unverified Outcome = iota
	// Verified: a signature verified.
	Verified
	// Invalid: a signature is present and wrong.
	Invalid
)

func (o Outcome) String() string {
	switch o {
	case Verified:
		return "verified"
	case Invalid:
		return "invalid"
	case Unverified:
		return "unverified"
	}
	return fmt.Sprintf("Outcome(%d)", int(o))
}

// OutcomeOf returns the outcome of a verification that returned err: nil is
// Verified, an error matching ErrUnverified is Unverified, anything else
// Invalid.
func OutcomeOf(err error) Outcome {
	switch {
	case err == nil:
		return Verified
	case errors.Is(err, ErrUnverified):
		return Unverified
	}
	return Invalid
}

func parseError(format string, args ...any) error {
	return &VerifyError{Reason: ReasonMalformed, Detail: fmt.Sprintf(format, args...)}
}
