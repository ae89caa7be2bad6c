package fetch

import (
	"context"
	"io"
	"net/http"

	"github.com/goodbot-go/goodbot/robots"
)

// robotsTransport carries the robots cache's requests: the bot's headers,
// then the inner chain (politeness, signing, limits), so robots.txt fetches
// are paced and signed like any other, but not under a page's budget.
type robotsTransport struct{ c *chain }

func (t *robotsTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := t.c.checkBlocked(req.URL); err != nil {
		closeBody(req)
		return nil, err // a robots.txt redirect into a blocked domain: unreachable
	}
	if err := t.c.checkAddr(req.URL); err != nil {
		closeBody(req)
		return nil, err
	}
	ctx := context.WithValue(req.Context(), budgetKey{}, (*budget)(nil))
	out := req.WithContext(context.WithValue(ctx, robotsReqKey{}, t.c))
	out.Header = cloneHeader(req.Header)
	if err := t.c.setHeaders(out, false); err != nil {
		return nil, err
	}
	out.Header.Set("Accept", "text/plain,*/*;q=0.5")
	resp, err := t.c.send(out)
	if err != nil || (resp.StatusCode >= 300 && resp.StatusCode < 400) {
		return resp, err // redirects are the cache's to follow
	}
	// A challenge or block page, whatever its status, holds no rules: it
	// is an error, so the cache takes robots.txt as unreachable (the whole
	// site closed, asked again after Bot.RobotsRetry), never as a file
	// without rules (everything allowed) or a 4xx (the same).
	pb := new(prefixBody)
	if v := t.c.sniff(resp, pb, false); v.Blocked {
		resp.Body.Close()
		return nil, challengeError(req.URL, resp.StatusCode, v)
	}
	return resp, nil
}

type robotsReqKey struct{}

// robotsTee, under the politeness layer, keeps what is read of a robots.txt
// body and parses it at EOF or Close, before politeness computes the host's
// next gap, so that the first gap already honours Crawl-delay.
type robotsTee struct {
	io.ReadCloser
	c    *chain
	key  string
	buf  []byte
	done bool
}

func (b *robotsTee) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if len(b.buf) < robots.MaxParseBytes {
		b.buf = append(b.buf, p[:min(n, robots.MaxParseBytes-len(b.buf))]...)
	}
	if err == io.EOF {
		b.stash()
	}
	return n, err
}

func (b *robotsTee) Close() error {
	b.stash()
	return b.ReadCloser.Close()
}

func (b *robotsTee) stash() {
	if !b.done {
		b.done = true
		r := robots.Parse(b.buf)
		b.c.mu.Lock()
		if b.c.pending == nil {
			b.c.pending = map[string]*robots.Robots{}
		}
		b.c.pending[b.key] = r
		b.c.npending.Store(int32(len(b.c.pending)))
		b.c.mu.Unlock()
	}
}
