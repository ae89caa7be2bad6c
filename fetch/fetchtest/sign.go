package fetchtest

import (
	"net/http"

	"github.com/goodbot-go/goodbot/signing"
)

// Verify adapts a [signing.Verifier] for [Web.VerifyWith] and [Signed]. A
// Verifier without fixed Keys fetches the key directory named by the
// request's Signature-Agent; give it a Client over [Web.Transport] and serve
// a [signing.Directory] at [signing.DirectoryPath] on the agent's host (an
// "https" agent is served by the Web's TLS server).
func Verify(v *signing.Verifier) func(*http.Request) error {
	return func(r *http.Request) error {
		_, err := v.Verify(r)
		return err
	}
}
