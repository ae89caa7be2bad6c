package fetch

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptrace"
	"sync/atomic"
)

// # Retries belong above the bot
//
// A retrying client (hashicorp/go-retryablehttp and the like) must sit
// above the bot's client or transport: its retries then pass through
// politeness again, each waiting for the host's turn, Retry-After and
// Crawl-delay included. Placed below (as Bot.Transport), it retries inside
// one politeness turn, on its own schedule: the host gets several requests
// at once, whatever it asked for.
//
// The limits layer notices that placement: for a Bot.Transport of the
// caller's, it counts the requests net/http writes for one turn (through an
// httptrace.ClientTrace on the request's context, which a retrying
// transport keeps for its attempts) and logs a Warn line when there was
// more than one. The chain's own base transport never resends (see "No
// silent resends" in limits.go) and is not watched. A transport that does
// not use net/http's client machinery (no httptrace events) goes unseen,
// and net/http's HTTP/2 resend of a request the server refused unprocessed
// (which is no breach) would be reported too; both are rare in practice.

// sendWatch counts the requests written for one turn.
type sendWatch struct{ n atomic.Int32 }

// watch returns ctx with a trace that counts the requests written under it.
func (w *sendWatch) watch(ctx context.Context) context.Context {
	return httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		WroteRequest: func(httptrace.WroteRequestInfo) { w.n.Add(1) },
	})
}

// report logs a Warn line on log when more than one request was written for
// req's turn.
func (w *sendWatch) report(log *slog.Logger, req *http.Request) {
	if n := w.n.Load(); n > 1 {
		log.Warn("fetch: Bot.Transport sent one request several times in one politeness turn; "+
			"retries belong above the bot's client, not below it",
			"url", req.URL.Redacted(), "sends", n)
	}
}
