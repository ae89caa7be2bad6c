package fetch

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync/atomic"
	"time"

	"github.com/goodbot-go/goodbot/politeness"
)

// EventKind is the kind of an [Event].
//
// The zero value is no kind (String ""); it is never reported.
type EventKind int

const (
	// EventSend: a request leaves for the network, after the robots.txt
	// check, the politeness wait and signing (URL, Host, Robots, Signed).
	EventSend EventKind = iota + 1
	// EventDone: a sent request ended, once per EventSend: its body was
	// read to the end or closed (Status, Bytes), or it failed without an
	// answer (Err; Status 0).
	EventDone
	// EventGet: a [Fetcher.Get] call ended (URL, Host, Outcome, Status,
	// Err). Gets that end before a request (a duplicate, a refusal) are
	// reported too; Gets that cannot start (a bad URL) are not.
	EventGet
)

var fetchEventNames = [...]string{"", "send", "done", "get"}

// String returns "send", "done" or "get".
func (k EventKind) String() string {
	if k < 0 || int(k) >= len(fetchEventNames) {
		return fmt.Sprintf("event(%d)", int(k))
	}
	return fetchEventNames[k]
}

// Event reports one step of the bot's work, for metrics and status pages:
// see [Bot.Events]. It is plain data, passed by value; the zero Event is
// never reported.
type Event struct {
	Kind EventKind
	// Host is the site key of the URL ([politeness.HostKey]).
	Host string
	// URL is the request's URL, any password redacted.
	URL string
	// Robots marks a request of the robots.txt cache (a robots.txt fetch or
	// one of its redirects).
	Robots bool
	// Signed marks a request that left with a Signature header.
	Signed bool
	// Status is the HTTP status of the answer; 0 when there was none.
	Status int
	// Bytes is how many body bytes were read (EventDone), after the body
	// limit and any decompression.
	Bytes int64
	// Outcome is how a Get ended (EventGet).
	Outcome Outcome
	// Err is why a request or a Get failed; nil otherwise.
	Err error
}

// eventTransport reports EventSend and EventDone around the layers below
// signing; it is in the chain only when Bot.Events is set.
type eventTransport struct {
	base http.RoundTripper
	emit func(Event)
}

func (t *eventTransport) CloseIdleConnections() { closeIdle(t.base) }

func (t *eventTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ev := Event{
		Kind:   EventSend,
		Host:   politeness.HostKey(req.URL),
		URL:    req.URL.Redacted(),
		Robots: req.Context().Value(robotsReqKey{}) != nil,
		Signed: req.Header.Get("Signature") != "",
	}
	t.emit(ev)
	ev.Kind = EventDone
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		ev.Err = err
		t.emit(ev)
		return nil, err
	}
	ev.Status = resp.StatusCode
	if resp.Body == nil || resp.Body == http.NoBody {
		t.emit(ev)
		return resp, nil
	}
	resp.Body = &eventBody{ReadCloser: resp.Body, ev: ev, emit: t.emit}
	return resp, nil
}

// eventBody counts what is read and reports EventDone at EOF or Close.
type eventBody struct {
	io.ReadCloser
	ev   Event
	emit func(Event)
	n    atomic.Int64
	done atomic.Bool
}

func (b *eventBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	if err == io.EOF {
		b.finish()
	}
	return n, err
}

func (b *eventBody) Close() error {
	err := b.ReadCloser.Close()
	b.finish()
	return err
}

func (b *eventBody) finish() {
	if b.done.CompareAndSwap(false, true) {
		ev := b.ev
		ev.Bytes = b.n.Load()
		b.emit(ev)
	}
}

// emitGet reports the end of a Get.
func (f *Fetcher) emitGet(rawURL string, page *Page, err error) {
	if f.events == nil || page == nil {
		return
	}
	ev := Event{Kind: EventGet, URL: rawURL, Outcome: page.Outcome, Status: page.Status, Err: err}
	if u, perr := url.Parse(rawURL); perr == nil {
		ev.Host, ev.URL = politeness.HostKey(u), u.Redacted()
	}
	f.events(ev)
}

// HostStatus is what a [Fetcher] knows about one site: its pacing
// ([politeness.HostStatus]: queue, request in flight, last status, pause,
// slow-down, breaker) and the age of its robots.txt copy. It is plain data,
// a copy owned by the caller; it marshals to JSON with the fields of the
// embedded politeness.HostStatus at the top level.
type HostStatus struct {
	politeness.HostStatus
	// RobotsFetched is when the site's robots.txt copy in memory was
	// fetched; zero when there is none.
	RobotsFetched time.Time `json:"robots_fetched,omitzero"`
}

// RobotsAge returns how old the robots.txt copy is at now, and false when
// there is none.
func (h HostStatus) RobotsAge(now time.Time) (time.Duration, bool) {
	if h.RobotsFetched.IsZero() {
		return 0, false
	}
	return now.Sub(h.RobotsFetched), true
}

// Hosts returns a snapshot of every site the Fetcher knows, one entry per
// site key ([politeness.HostKey]), sorted by key: the pacing layer's view
// ([politeness.Transport.Hosts], which documents consistency and cost) with
// the fetch time of each site's robots.txt copy added (one cache lookup per
// site). With a shared [Bot.Gate] other than a MemoryGate, the state is
// what this process last saw. It is nil for a zero Fetcher and safe for
// concurrent use.
func (f *Fetcher) Hosts() []HostStatus {
	if f == nil || f.chain == nil {
		return nil
	}
	pol, ok := f.chain.inner.(*politeness.Transport)
	if !ok {
		return nil
	}
	hs := pol.Hosts()
	out := make([]HostStatus, len(hs))
	for i, h := range hs {
		out[i].HostStatus = h
		if u, err := url.Parse(h.Host); err == nil {
			out[i].RobotsFetched, _ = f.chain.robots.FetchedAt(u)
		}
	}
	return out
}

// NextTurn returns the instant from which the politeness layer lets the
// next request to rawURL's site start: the site's gap after its last
// answer (Crawl-delay, slow-down and jitter included) or the end of its
// pause ([politeness.Transport.NextTurn]). It is the zero time when the
// Fetcher knows nothing of the site, when rawURL does not parse, and for
// a zero Fetcher. A crawler that schedules each site for then holds no
// worker while the site waits. Safe for concurrent use.
func (f *Fetcher) NextTurn(rawURL string) time.Time {
	if f == nil || f.chain == nil {
		return time.Time{}
	}
	pol, ok := f.chain.inner.(*politeness.Transport)
	if !ok {
		return time.Time{}
	}
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		return time.Time{}
	}
	return pol.NextTurn(u)
}

// Refuses reports whether a Get of rawURL would be refused before any
// request, from what the Fetcher holds now: the URL rules (scheme, user
// information, blocked domains, internal addresses written in the URL) or
// a fresh robots.txt copy in memory that disallows the URL for the
// Fetcher's agent (or that is the disallow-all of an unreachable
// robots.txt). It reads nothing: a site without a fresh copy in memory is
// not refused here. A crawler need not wait for the site's turn to hand
// such a URL to Get. False for a zero Fetcher and a URL that does not
// parse (Get reports those). Safe for concurrent use.
func (f *Fetcher) Refuses(rawURL string) bool {
	if f == nil || f.chain == nil {
		return false
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return false
	}
	if f.chain.checkURL(u) != nil {
		return true
	}
	r, ok := f.chain.robots.Fresh(u)
	if !ok {
		return false
	}
	allowed, _ := r.Decide(f.chain.agent, u.RequestURI())
	return !allowed
}
