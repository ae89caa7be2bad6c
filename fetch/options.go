package fetch

import (
	"context"
	"errors"
	"fmt"
)

// GetOptions are the per-request options of [Fetcher.Get]. The zero value
// asks for a page the ordinary way: stored validators, the bot's Accept and
// body limit.
//
// They are a plain struct passed as Get's optional last argument, not
// functional options nor values hidden in the context: the context carries
// the request's deadline and cancellation, and what a call asks for stays
// visible at the call. [WithFresh] and [WithMachineFile] remain for users of
// the *http.Client ([New], [Wrap], [Fetcher.Client]), who cannot pass
// arguments to a RoundTripper; for a Fetcher, prefer GetOptions.
type GetOptions struct {
	// Fresh sends Cache-Control: no-cache, asking caches on the way for the
	// page as it is now (as [WithFresh] does).
	Fresh bool
	// MachineFile fetches a file meant for programs (a sitemap, /llms.txt,
	// a feed): see [WithMachineFile] for what changes.
	MachineFile bool
	// Validator, when not zero, is sent (If-None-Match, If-Modified-Since)
	// instead of the one the ValidatorStore holds for the URL; a 304 answer
	// then ends as NotModified. Its values must be printable ASCII.
	Validator Validator
}

// ErrBadValidator is returned by [Fetcher.Get] for a GetOptions.Validator
// whose values are not printable ASCII (a CR or LF would break out of
// the header).
var ErrBadValidator = errors.New("fetch: invalid validator")

// mergeOptions folds opts into one: a flag set in any of them is set, and
// the last non-zero Validator wins.
func mergeOptions(opts []GetOptions) (GetOptions, error) {
	var o GetOptions
	for _, x := range opts {
		o.Fresh = o.Fresh || x.Fresh
		o.MachineFile = o.MachineFile || x.MachineFile
		if !x.Validator.IsZero() {
			o.Validator = x.Validator
		}
	}
	for _, v := range []string{o.Validator.ETag, o.Validator.LastModified} {
		if err := checkHeaderText(v); err != nil {
			return o, fmt.Errorf("%w: %v", ErrBadValidator, err)
		}
	}
	return o, nil
}

// context returns ctx marked for the chain's layers, which see only the
// request.
func (o GetOptions) context(ctx context.Context) context.Context {
	if o.Fresh {
		ctx = WithFresh(ctx)
	}
	if o.MachineFile {
		ctx = WithMachineFile(ctx)
	}
	return ctx
}
