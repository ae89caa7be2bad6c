// Package timeline draws the demo's per-host timeline: one lane per host,
// one bar per request (from the moment the server saw it until its handler
// returned), and the pauses the bot took with their reasons. It writes one
// self-contained HTML page (inline SVG and CSS, no scripts), and checks the
// property the picture is meant to show: no host ever had two requests at
// once.
package timeline

import (
	"fmt"
	"html/template"
	"io"
	"net"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/goodbot-go/goodbot/politeness"
)

// Span is one request as the server saw it.
type Span struct {
	Host   string
	Path   string
	Start  time.Time
	End    time.Time
	Status int
}

// Pause is a wait the bot took before a host, with its reason.
type Pause struct {
	Host   string
	Start  time.Time
	Dur    time.Duration
	Reason string
	// Routine marks the ordinary gap between two requests (the host's
	// delay): drawn, but not listed under the chart.
	Routine bool
}

// Run is one bot's run: its requests and pauses.
type Run struct {
	Title  string
	Spans  []Span
	Pauses []Pause
}

// HostOf returns the lane name for a host key such as "http://a.test:80", a
// "host:port" or a host: the host of its site key (politeness.HostKey), so
// that every spelling of one host ("A.test.", "a.test:080", Unicode or
// punycode) is one lane.
func HostOf(key string) string {
	s := key
	if !strings.Contains(s, "://") {
		s = "http://" + s
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return strings.ToLower(key)
	}
	_, hostport, _ := strings.Cut(politeness.HostKey(u), "://")
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return strings.Trim(hostport, "[]")
}

// Overlaps returns, per host, the pairs of requests that were in flight at
// the same time (empty when every host saw one request at a time).
func (r *Run) Overlaps() []string {
	by := map[string][]Span{}
	for _, s := range r.Spans {
		h := HostOf(s.Host)
		by[h] = append(by[h], s)
	}
	var out []string
	for _, h := range sortedKeys(by) {
		ss := by[h]
		sort.Slice(ss, func(i, j int) bool { return ss[i].Start.Before(ss[j].Start) })
		for i := 1; i < len(ss); i++ {
			if ss[i].Start.Before(ss[i-1].End) {
				out = append(out, fmt.Sprintf("%s: %s started before %s ended", h, ss[i].Path, ss[i-1].Path))
			}
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

type bar struct {
	X, W    float64
	Class   string
	Tooltip string
}

type lane struct {
	Host     string
	Y        float64
	Bars     []bar
	Requests int
}

type chart struct {
	Title    string
	Width    float64
	Height   float64
	Lanes    []lane
	Ticks    []tick
	Overlaps []string
	Total    string
	Notes    []note // the pauses that were not routine, in time order
	Routine  int    // how many routine gaps were drawn
}

// note is one listed pause: where, when, how long and why.
type note struct {
	Host, At, Dur, Reason string
}

type tick struct {
	X     float64
	Label string
}

const (
	laneH   = 26.0
	labelW  = 170.0
	plotW   = 900.0
	topPad  = 24.0
	minBarW = 1.5
)

// minSpan is the least time a chart shows, so that a run of one short
// request does not fill the width.
const minSpan = 250 * time.Millisecond

func build(r Run) chart {
	// The chart spans the requests; pauses are drawn inside that span (a
	// day-long give-up is clipped, and its tooltip says so).
	var t0, t1 time.Time
	for _, s := range r.Spans {
		end := s.End
		if end.IsZero() {
			end = s.Start
		}
		if t0.IsZero() || s.Start.Before(t0) {
			t0 = s.Start
		}
		if end.After(t1) {
			t1 = end
		}
	}
	for _, p := range r.Pauses {
		if t0.IsZero() || p.Start.Before(t0) {
			t0 = p.Start
		}
		if len(r.Spans) == 0 && p.Start.Add(p.Dur).After(t1) {
			t1 = p.Start.Add(p.Dur)
		}
	}
	span := max(t1.Sub(t0), minSpan)
	t1 = t0.Add(span)
	hosts := map[string]*lane{}
	get := func(h string) *lane {
		h = HostOf(h)
		if hosts[h] == nil {
			hosts[h] = &lane{Host: h}
		}
		return hosts[h]
	}
	x := func(t time.Time) float64 { return labelW + plotW*float64(t.Sub(t0))/float64(span) }
	for _, p := range r.Pauses {
		end := p.Start.Add(p.Dur)
		tip := fmt.Sprintf("pause %s: %s", p.Dur.Round(time.Millisecond), p.Reason)
		if end.After(t1) {
			end = t1
			tip += " (goes on past the end of the run)"
		}
		if !p.Start.Before(t1) {
			continue
		}
		l := get(p.Host)
		l.Bars = append(l.Bars, bar{X: x(p.Start), W: max(minBarW, x(end)-x(p.Start)), Class: "pause", Tooltip: tip})
	}
	var notes []note
	routine := 0
	pauses := append([]Pause(nil), r.Pauses...)
	sort.SliceStable(pauses, func(i, j int) bool { return pauses[i].Start.Before(pauses[j].Start) })
	for _, p := range pauses {
		if p.Routine {
			routine++
			continue
		}
		notes = append(notes, note{Host: HostOf(p.Host), At: p.Start.Sub(t0).Round(time.Millisecond).String(),
			Dur: p.Dur.Round(time.Millisecond).String(), Reason: p.Reason})
	}
	for _, s := range r.Spans {
		l := get(s.Host)
		end := s.End
		if end.IsZero() {
			end = s.Start
		}
		cls := "ok"
		switch {
		case s.Status == 0:
			cls = "fail"
		case s.Status == 429 || s.Status == 503 || s.Status == 509:
			cls = "limit"
		case s.Status >= 400:
			cls = "err"
		}
		l.Requests++
		l.Bars = append(l.Bars, bar{X: x(s.Start), W: max(minBarW, x(end)-x(s.Start)), Class: cls,
			Tooltip: fmt.Sprintf("%s %d, %s (at +%s)", s.Path, s.Status, end.Sub(s.Start).Round(time.Millisecond), s.Start.Sub(t0).Round(time.Millisecond))})
	}
	names := sortedKeys(hosts)
	c := chart{Title: r.Title, Width: labelW + plotW + 20, Overlaps: r.Overlaps(), Total: span.Round(time.Millisecond).String(),
		Notes: notes, Routine: routine}
	for i, h := range names {
		hosts[h].Y = topPad + float64(i)*laneH
		c.Lanes = append(c.Lanes, *hosts[h])
	}
	c.Height = topPad + float64(len(names))*laneH + 8
	for i := 0; i <= 5; i++ {
		d := time.Duration(float64(span) * float64(i) / 5)
		c.Ticks = append(c.Ticks, tick{X: labelW + plotW*float64(i)/5, Label: "+" + d.Round(time.Millisecond).String()})
	}
	return c
}

var tmpl = template.Must(template.New("t").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{{.Title}}</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}
h2{font-size:1.1em;margin:1.6em 0 .3em}
svg{border:1px solid #ddd;background:#fcfcfc}
.ok{fill:#2e7d32}.limit{fill:#e65100}.err{fill:#c62828}.fail{fill:#6a1b9a}
.pause{fill:#90caf9;fill-opacity:.55}
.lbl{font-size:12px}.tick{font-size:10px;fill:#666}.grid{stroke:#eee}
.notes{border-collapse:collapse;margin:.4em 0;font-size:13px}.notes td,.notes th{border:1px solid #ddd;padding:2px 8px;text-align:left}
.good{color:#2e7d32}.bad{color:#c62828;font-weight:bold}
.key span{display:inline-block;width:1em;height:.8em;margin:0 .3em 0 1em;vertical-align:middle}
</style></head><body>
<h1>{{.Title}}</h1>
<p>One lane per host. Each bar is a request, from when the server received it to when its answer ended; hover a bar
for its path, status and timing. Light blue is a pause the bot took before that host, with its reason.</p>
<p class="key"><span class="ok" style="background:#2e7d32"></span>answered <span style="background:#e65100"></span>rate-limited
<span style="background:#c62828"></span>error status <span style="background:#6a1b9a"></span>no answer <span style="background:#90caf9"></span>pause</p>
{{range .Charts}}
<h2>{{.Title}} <small>({{.Total}})</small></h2>
{{if .Overlaps}}<p class="bad">Overlapping requests on a host:</p><ul>{{range .Overlaps}}<li class="bad">{{.}}</li>{{end}}</ul>
{{else}}<p class="good">No host ever had two requests in flight at once.</p>{{end}}
<svg width="{{.Width}}" height="{{.Height}}" viewBox="0 0 {{.Width}} {{.Height}}" xmlns="http://www.w3.org/2000/svg">
{{range .Ticks}}<line class="grid" x1="{{.X}}" y1="14" x2="{{.X}}" y2="100%"/><text class="tick" x="{{.X}}" y="11" text-anchor="middle">{{.Label}}</text>
{{end}}{{range .Lanes}}{{$y := .Y}}<text class="lbl" x="4" y="{{$y}}" dy="15">{{.Host}} ({{.Requests}})</text>
{{range .Bars}}<rect class="{{.Class}}" x="{{.X}}" y="{{$y}}" width="{{.W}}" height="20"><title>{{.Tooltip}}</title></rect>
{{end}}{{end}}</svg>
{{if .Notes}}<table class="notes"><tr><th>host</th><th>at</th><th>pause</th><th>why</th></tr>
{{range .Notes}}<tr><td>{{.Host}}</td><td>+{{.At}}</td><td>{{.Dur}}</td><td>{{.Reason}}</td></tr>
{{end}}</table>{{end}}
{{if .Routine}}<p class="tick">and {{.Routine}} routine gap(s) between requests (the host's delay), drawn but not listed.</p>{{end}}
{{end}}
</body></html>
`))

// WriteHTML writes the timelines of runs as one self-contained HTML page.
func WriteHTML(w io.Writer, title string, runs []Run) error {
	var charts []chart
	for _, r := range runs {
		charts = append(charts, build(r))
	}
	return tmpl.Execute(w, struct {
		Title  string
		Charts []chart
	}{title, charts})
}
