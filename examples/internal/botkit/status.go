package botkit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"net"
	"net/http"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/fetch/otelmetrics"
)

// The status endpoint (-status ADDR): a page a person reads, the same data
// as JSON, and the bot's metrics for Prometheus.
//
//	GET /             HTML: counters and one row per host (paused hosts first, with reason and end)
//	GET /status.json  JSON: the same data (Status)
//	GET /metrics      Prometheus text format, from the OpenTelemetry exporter (fetch/otelmetrics)
//
// It listens only on the address given; the bots have no default.

// Status is what the status endpoint shows, as JSON at /status.json.
type Status struct {
	Bot    string       `json:"bot"`
	Time   time.Time    `json:"time"`
	Done   int          `json:"done"`   // pages handled
	Queued int          `json:"queued"` // URLs waiting in the frontier
	Paused int          `json:"paused"` // hosts paused, given up on or down now
	Rate   float64      `json:"rate"`   // pages per second since the start
	Hosts  []HostStatus `json:"hosts"`
}

// HostStatus is one host of a [Status].
type HostStatus struct {
	Host          string    `json:"host"`
	Queued        int       `json:"queued"` // requests waiting for the host's turn
	InFlight      string    `json:"in_flight,omitempty"`
	InFlightSince time.Time `json:"in_flight_since,omitzero"`
	LastStatus    int       `json:"last_status,omitempty"`
	Paused        bool      `json:"paused"`
	PauseReason   string    `json:"pause_reason,omitempty"`
	PauseStatus   int       `json:"pause_status,omitempty"`
	PauseUntil    time.Time `json:"pause_until,omitzero"`
	SlowDown      int       `json:"slow_down"` // the host's delay is multiplied by 2^SlowDown
	Breaker       string    `json:"breaker"`   // "closed" or "open"
	RobotsAge     string    `json:"robots_age,omitempty"`
}

// statusOf builds the Status at now from the fetcher and the progress
// counters.
func statusOf(name string, f *fetch.Fetcher, prog *Progress, now time.Time) Status {
	st := Status{Bot: name, Time: now, Hosts: []HostStatus{}}
	if prog != nil {
		st.Done, st.Queued, st.Rate = prog.counts(now)
	}
	for _, h := range f.Hosts() {
		hs := HostStatus{
			Host: h.Host, Queued: h.Queued, InFlight: h.InFlight, InFlightSince: h.InFlightSince,
			LastStatus: h.LastStatus, SlowDown: h.State.Slow, Breaker: h.Breaker(now),
		}
		if reason, until, ok := h.Paused(now); ok {
			hs.Paused, hs.PauseReason, hs.PauseUntil = true, reason, until
			if reason == h.PauseReason {
				hs.PauseStatus = h.PauseStatus
			}
			st.Paused++
		}
		if age, ok := h.RobotsAge(now); ok {
			hs.RobotsAge = age.Round(time.Second).String()
		}
		st.Hosts = append(st.Hosts, hs)
	}
	// Paused hosts first, then by key (Hosts is sorted by key).
	slices.SortStableFunc(st.Hosts, func(a, b HostStatus) int {
		switch {
		case a.Paused == b.Paused:
			return 0
		case a.Paused:
			return -1
		}
		return 1
	})
	return st
}

// pausedHosts counts the fetcher's hosts paused at now.
func pausedHosts(f *fetch.Fetcher, now time.Time) int {
	n := 0
	for _, h := range f.Hosts() {
		if _, _, ok := h.Paused(now); ok {
			n++
		}
	}
	return n
}

// instrument adds OpenTelemetry metrics, exported for Prometheus on a
// registry of the session's own, to bot.
func (s *Session) instrument(bot *fetch.Bot) error {
	reg := prometheus.NewRegistry()
	exp, err := otelprom.New(otelprom.WithRegisterer(reg))
	if err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exp))
	m, err := otelmetrics.New(mp, otelmetrics.Config{})
	if err != nil {
		_ = mp.Shutdown(context.Background())
		return err
	}
	m.Instrument(bot)
	s.metrics = promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	s.meters = mp
	return nil
}

// serveStatus starts the status endpoint on addr for s's fetcher.
func (s *Session) serveStatus(name, addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("-status: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		if err := statusPage.Execute(w, statusOf(name, s.fetcher, s.Prog, time.Now())); err != nil {
			s.Log.Debug("status page", "err", err)
		}
	})
	mux.HandleFunc("GET /status.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		_ = enc.Encode(statusOf(name, s.fetcher, s.Prog, time.Now()))
	})
	if s.metrics != nil {
		mux.Handle("GET /metrics", s.metrics)
	}
	s.status = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	s.statusDone = make(chan struct{})
	go func() {
		defer close(s.statusDone)
		if err := s.status.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.Log.Warn("status endpoint stopped", "err", err)
		}
	}()
	url := "http://" + ln.Addr().String() + "/"
	s.Log.Info("status page", "url", url, "json", url+"status.json", "metrics", url+"metrics")
	if s.Env.StatusListening != nil {
		s.Env.StatusListening(url)
	}
	return nil
}

// closeStatus stops the status endpoint and the metrics.
func (s *Session) closeStatus() {
	if s.status != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_ = s.status.Shutdown(ctx)
		cancel()
		<-s.statusDone
	}
	if s.meters != nil {
		_ = s.meters.Shutdown(context.Background())
	}
}

var statusPage = template.Must(template.New("status").Funcs(template.FuncMap{
	"clock": func(t time.Time) string { return t.Format("15:04:05 MST") },
	"left": func(until, now time.Time) string {
		return until.Sub(now).Round(time.Second).String()
	},
}).Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="refresh" content="5">
<title>{{.Bot}} status</title>
<style>
body{font:15px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}
h1{font-size:1.4em;margin:0 0 .3em}
.sum{margin:.2em 0 1em;color:#444}
table{border-collapse:collapse;min-width:60%}
th,td{padding:.3em .7em;border-bottom:1px solid #ddd;text-align:left;vertical-align:top}
th{background:#f4f4f4}
tr.paused td{background:#fff3e0}
td.num{text-align:right}
.why{font-weight:600;color:#b34700}
.ok{color:#2a7a2a}
code{font-size:.9em}
</style></head>
<body>
<h1>{{.Bot}}</h1>
<p class="sum" id="summary">{{.Done}} pages done · {{.Queued}} queued · {{.Paused}} host{{if ne .Paused 1}}s{{end}} paused · {{printf "%.2f" .Rate}} pages/s · at {{clock .Time}} (refreshes every 5 s; <a href="status.json">JSON</a>, <a href="metrics">metrics</a>)</p>
{{if .Hosts}}<table id="hosts">
<thead><tr><th>Host</th><th>State</th><th>Queued</th><th>In flight</th><th>Last status</th><th>Slow-down</th><th>Breaker</th><th>robots.txt age</th></tr></thead>
<tbody>
{{- $now := .Time}}
{{- range .Hosts}}
<tr class="{{if .Paused}}paused{{else}}running{{end}}" data-host="{{.Host}}">
<td><code>{{.Host}}</code></td>
<td>{{if .Paused}}<span class="why">paused: {{.PauseReason}}{{if .PauseStatus}} (status {{.PauseStatus}}){{end}}</span> until {{clock .PauseUntil}} ({{left .PauseUntil $now}} left){{else}}<span class="ok">running</span>{{end}}</td>
<td class="num">{{.Queued}}</td>
<td>{{if .InFlight}}<code>{{.InFlight}}</code> for {{left $now .InFlightSince}}{{else}}–{{end}}</td>
<td class="num">{{if .LastStatus}}{{.LastStatus}}{{else}}–{{end}}</td>
<td class="num">{{if .SlowDown}}level {{.SlowDown}}{{else}}–{{end}}</td>
<td>{{.Breaker}}</td>
<td>{{if .RobotsAge}}{{.RobotsAge}}{{else}}–{{end}}</td>
</tr>
{{- end}}
</tbody></table>
{{else}}<p id="hosts">No host contacted yet.</p>{{end}}
</body></html>
`))
