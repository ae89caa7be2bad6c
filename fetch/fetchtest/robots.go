package fetchtest

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"

	"github.com/goodbot-go/goodbot/robots"
)

// ObeysRobots fails on any request (other than for /robots.txt) that the
// host's robots.txt, as the Web serves it at check time, disallows for agent.
// The answer is judged by [robots.FromResponse], so a request to a
// host whose robots.txt errs (5xx, reset) or does not answer at once (Slow,
// Hang) is a violation too; a 404 allows everything.
func (w *Web) ObeysRobots(agent robots.Agent) Check {
	return Allowed(func(host, pathQuery string) bool {
		return w.robotsFor(host).Allowed(agent, pathQuery)
	})
}

var errNoAnswer = errors.New("fetchtest: robots.txt gave no immediate answer")

// robotsFor serves host's /robots.txt to a recorder (not logged), with a
// context that is already canceled so waiting handlers give up at once, and
// compiles the answer.
func (w *Web) robotsFor(host string) *robots.Robots {
	w.mu.Lock()
	vh := w.hosts[host]
	w.mu.Unlock()
	if vh == nil {
		return robots.FromResponse(0, nil, errNoAnswer)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req := httptest.NewRequest(http.MethodGet, "http://"+host+"/robots.txt", nil).WithContext(ctx)
	rec := &probeWriter{ResponseRecorder: httptest.NewRecorder()}
	vh.handler("/robots.txt").ServeHTTP(rec, req)
	if !rec.wrote || rec.reset {
		return robots.FromResponse(0, nil, errNoAnswer)
	}
	return robots.FromResponse(rec.Code, rec.Body.Bytes(), nil)
}

type probeWriter struct {
	*httptest.ResponseRecorder
	wrote, reset bool
}

func (p *probeWriter) WriteHeader(code int) {
	p.wrote = true
	p.ResponseRecorder.WriteHeader(code)
}

func (p *probeWriter) Write(b []byte) (int, error) {
	p.wrote = true
	return p.ResponseRecorder.Write(b)
}

func (p *probeWriter) resetConn() { p.reset = true }
