// Package demo is the command a newcomer runs first (examples/demo): it
// starts the built-in web of local sites ([demoweb]) on loopback, runs each
// example bot against it in-process with durations scaled down, prints what
// each bot did and why, promise by promise, and writes an HTML page with a
// per-host timeline of requests and pauses, plus the readiness report.
package demo

import (
	"context"
	"crypto/ed25519"
	"flag"
	"fmt"
	"github.com/goodbot-go/goodbot/internal/syncbuf"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/goodbot-go/goodbot/examples/internal/botkit"
	"github.com/goodbot-go/goodbot/examples/internal/demoweb"
	"github.com/goodbot-go/goodbot/examples/internal/timeline"
	"github.com/goodbot-go/goodbot/fetch/fetchtest"
	"github.com/goodbot-go/goodbot/signing"
)

// Run is the demo's main. It returns the exit status: 0 when every promise
// shown was kept.
func Run(ctx context.Context, args []string, env botkit.Env) int {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	out := fs.String("out", "", "write timeline.html, the readiness report and the bots' files into `dir` (default: a new temporary directory)")
	scale := fs.Float64("scale", 0.05, "multiply the bots' own durations (delays, backoff, timeouts) by `f`; 1 is real time")
	verbose := fs.Bool("v", false, "show the bots' logs")
	if code, ok := botkit.Parse(fs, args, "demo [flags]\n\nRuns every example bot against a small local web and explains what each did."); !ok {
		return code
	}
	if *scale <= 0 {
		*scale = 1
	}
	dir := *out
	if dir == "" {
		d, err := os.MkdirTemp("", "goodbot-demo-")
		if err != nil {
			botkit.Fail(env.Stderr, "demo", "%v", err)
			return botkit.ExitFailure
		}
		dir = d
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		botkit.Fail(env.Stderr, "demo", "%v", err)
		return botkit.ExitFailure
	}
	d := &demo{dir: dir, scale: *scale, w: env.Stdout, verbose: *verbose, logs: env.Stderr}
	d.web = demoweb.New()
	d.web.Start()
	defer d.web.Close()
	if err := d.keys(); err != nil {
		botkit.Fail(env.Stderr, "demo", "%v", err)
		return botkit.ExitFailure
	}

	start := time.Now()
	fmt.Fprintf(d.w, "goodbot demo: a local web of %d sites on %s, bot durations scaled by %g\n", len(d.web.Hosts()), d.web.Addr(), d.scale)
	fmt.Fprintf(d.w, "(site-sent values such as Crawl-delay and Retry-After are obeyed as sent; bots working on\n")
	fmt.Fprintf(d.w, "different sites run side by side, and no site ever sees two bots)\n")
	d.runAll(ctx, d.steps())
	tl := filepath.Join(dir, "timeline.html")
	if err := d.writeTimeline(tl); err != nil {
		botkit.Fail(env.Stderr, "demo", "timeline: %v", err)
	}
	if ctx.Err() == nil {
		d.check("All runs", d.overall(), &d.all)
	}
	fmt.Fprintf(d.w, "\n%d promises shown in %d checks, %d kept, %d broken; %d more kept by configuration (too slow to show at this scale); in %s.\n",
		len(d.shown), d.kept+d.broken, d.kept, d.broken, d.configured, time.Since(start).Round(100*time.Millisecond))
	fmt.Fprintf(d.w, "Timeline:          %s\n", tl)
	fmt.Fprintf(d.w, "Readiness report:  %s\n", filepath.Join(dir, "readiness.html"))
	fmt.Fprintf(d.w, "Everything else:   %s\n", dir)
	if d.broken > 0 {
		return botkit.ExitPartial
	}
	return botkit.ExitOK
}

type demo struct {
	dir     string
	scale   float64
	w       io.Writer
	logs    io.Writer
	verbose bool
	web     *demoweb.Web

	bothyKey, dirKey string // key files
	bothyPub, dirPub ed25519.PublicKey

	runs                     []timeline.Run
	all                      record // every step's requests and results
	kept, broken, configured int
	shown                    map[string]bool // promise IDs shown (not by configuration)
}

func (d *demo) keys() error {
	for _, k := range []struct {
		name string
		file *string
		pub  *ed25519.PublicKey
	}{{"bothy.pem", &d.bothyKey, &d.bothyPub}, {"directories.pem", &d.dirKey, &d.dirPub}} {
		key, err := signing.GenerateKey()
		if err != nil {
			return err
		}
		pemBytes, err := signing.MarshalPrivateKeyPEM(key)
		if err != nil {
			return err
		}
		*k.file = filepath.Join(d.dir, k.name)
		if err := os.WriteFile(*k.file, pemBytes, 0o600); err != nil {
			return err
		}
		*k.pub = key.Public().(ed25519.PublicKey)
	}
	return nil
}

// A step is one run of one bot, with the promises it shows. Steps of one
// chain run in order; chains run at the same time.
type step struct {
	chain  string
	bot    string
	title  string
	run    botkit.RunFunc
	args   []string
	before func()
	claims []claim
}

// Chains of steps and the sites each works on; the chain without a list
// (the directory check) owns every other site.
const (
	chainParish      = "parish"
	chainAbbey       = "abbey"
	chainHooty       = "hooty"
	chainNews        = "news"
	chainDirectories = "directories"
	chainSignals     = "signals"
)

var chainHosts = map[string][]string{
	chainParish:  {demoweb.Parish},
	chainAbbey:   {demoweb.Abbey},
	chainHooty:   {demoweb.School, demoweb.Shop, demoweb.Down, demoweb.Dead, demoweb.Busy, demoweb.Slow},
	chainNews:    demoweb.NewsHosts,
	chainSignals: demoweb.SignalHosts,
}

// extra is the ID of a narration that is not a promise of BEHAVIOURS.md
// (what the bots do with usage preferences, page directives, pay per crawl
// and rate-limit fields): checked and counted like the others, never listed
// among the promises shown.
const extra = "new"

// A claim is one promise shown by a run: its ID, what it says, and a check
// over what happened that returns the evidence (or what broke it).
type claim struct {
	id    string
	check func(r *record) (ok bool, evidence string)
}

// record is what happened during one step.
type record struct {
	code    int
	reqs    []fetchtest.Request
	results []botkit.Result
	events  []botkit.Event
	stderr  string
	took    time.Duration
}

func (r *record) result(url string) botkit.Result {
	for _, x := range r.results {
		if x.URL == url {
			return x
		}
	}
	return botkit.Result{}
}

func (r *record) to(host string, paths ...string) []fetchtest.Request {
	var out []fetchtest.Request
	for _, q := range r.reqs {
		if q.Host == host && (len(paths) == 0 || contains(paths, q.Path)) {
			out = append(out, q)
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// runAll runs the steps, each chain of steps in order and the chains at
// the same time (their sites are disjoint, so no host sees two bots), and
// narrates the steps in their order as they finish.
func (d *demo) runAll(ctx context.Context, steps []step) {
	recs := make([]*record, len(steps))
	done := make([]chan struct{}, len(steps))
	chains := map[string][]int{}
	for i, s := range steps {
		done[i] = make(chan struct{})
		chains[s.chain] = append(chains[s.chain], i)
	}
	for _, idx := range chains {
		go func() {
			for _, i := range idx {
				if ctx.Err() == nil {
					recs[i] = d.exec(ctx, steps[i])
				}
				close(done[i])
			}
		}()
	}
	for i, s := range steps {
		<-done[i]
		if recs[i] != nil {
			d.report(s, recs[i])
		}
	}
}

// exec runs one step's bot and records what its sites saw.
func (d *demo) exec(ctx context.Context, s step) *record {
	if s.before != nil {
		s.before()
	}
	var stdout, stderr syncbuf.Buffer
	rec := &record{}
	var mu sync.Mutex
	env := botkit.Env{Stdout: &stdout, Stderr: &stderr, Transport: d.web.Transport(), Scale: d.scale,
		Observe: func(e botkit.Event) {
			mu.Lock()
			rec.events = append(rec.events, e)
			mu.Unlock()
		}}
	if d.verbose {
		env.Stderr = io.MultiWriter(&stderr, d.logs)
	}
	start := time.Now()
	rec.code = s.run(ctx, d.args(s), env)
	rec.took = time.Since(start)
	rec.reqs = d.requests(s.chain, start)
	rec.stderr = stderr.String()
	rec.results = botkit.ParseResults(stdout.String())
	return rec
}

// requests returns the requests to chain's sites that started after start.
func (d *demo) requests(chain string, start time.Time) []fetchtest.Request {
	mine := func(host string) bool {
		for c, hosts := range chainHosts {
			if contains(hosts, host) {
				return c == chain
			}
		}
		return chainHosts[chain] == nil // the catch-all chain
	}
	var out []fetchtest.Request
	for _, q := range d.web.Requests() {
		if mine(q.Host) && !q.Start.Before(start) {
			out = append(out, q)
		}
	}
	return out
}

// report narrates one finished step and checks its promises.
func (d *demo) report(s step, rec *record) {
	fmt.Fprintf(d.w, "\n== %s: %s\n", s.bot, s.title)
	fmt.Fprintf(d.w, "   $ go run ./examples/%s %s\n", strings.ToLower(s.bot), strings.Join(shortArgs(d.args(s), d.dir), " "))
	fmt.Fprintf(d.w, "   %d requests in %s, exit %d\n", len(rec.reqs), rec.took.Round(10*time.Millisecond), rec.code)
	d.check("", s.claims, rec)
	d.runs = append(d.runs, toTimeline(s.bot+": "+s.title, rec))
	d.all.reqs = append(d.all.reqs, rec.reqs...)
	d.all.results = append(d.all.results, rec.results...)
}

func (d *demo) show(id string) {
	if d.shown == nil {
		d.shown = map[string]bool{}
	}
	if id != "bad" && id != extra {
		d.shown[id] = true
	}
}

// check prints each claim's verdict over rec, under title if not empty.
func (d *demo) check(title string, claims []claim, rec *record) {
	if title != "" {
		fmt.Fprintf(d.w, "\n== %s\n", title)
	}
	for _, c := range claims {
		ok, ev := c.check(rec)
		mark := "kept  "
		switch {
		case ok && strings.HasPrefix(ev, configTag):
			mark, ev = "config", strings.TrimPrefix(ev, configTag)
			d.configured++
		case ok:
			d.kept++
			d.show(c.id)
		default:
			mark = "BROKEN"
			d.broken++
			d.show(c.id)
		}
		fmt.Fprintf(d.w, "   %-4s %s %s\n", c.id, mark, ev)
	}
}

// overall are the promises every run keeps: C3 over all requests of the
// demo, C7 over all outcomes.
func (d *demo) overall() []claim {
	return []claim{
		{"C3", func(r *record) (bool, string) {
			var bad []string
			for _, run := range d.runs {
				bad = append(bad, run.Overlaps()...)
			}
			if len(bad) > 0 {
				return false, bad[0]
			}
			return true, fmt.Sprintf("in %d requests over %d runs no host ever had two at once; each gap honoured the host's delay (B4, B5, H3, S4, S5 above)", len(r.reqs), len(d.runs))
		}},
		{"C7", func(r *record) (bool, string) {
			seen := map[string]bool{}
			var kinds []string
			for _, x := range r.results {
				if !seen[x.Outcome] {
					seen[x.Outcome] = true
					kinds = append(kinds, x.Outcome)
				}
			}
			want := []string{"disallowed", "blocked", "gave_up", "unreachable", "timeout", "auth_required"}
			for _, w := range want {
				if !seen[w] {
					return false, fmt.Sprintf("no %q outcome in this demo (seen: %s)", w, strings.Join(kinds, ", "))
				}
			}
			return true, "each failure reached the bots as a typed error they told apart with errors.Is/As: " + strings.Join(kinds, ", ")
		}},
	}
}

// args is the command line of step s: its own flags, and the loopback
// range the demo's web lives on (the bots refuse internal addresses
// otherwise; 127.0.0.0/8 only).
func (d *demo) args(s step) []string {
	return append([]string{"-allow-internal", "127.0.0.0/8"}, s.args...)
}

func shortArgs(args []string, dir string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = strings.ReplaceAll(a, dir+string(filepath.Separator), "")
	}
	return out
}

func toTimeline(title string, rec *record) timeline.Run {
	run := timeline.Run{Title: title}
	for _, q := range rec.reqs {
		run.Spans = append(run.Spans, timeline.Span{Host: q.Host, Path: q.URL()[len(q.Host):], Start: q.Start, End: q.End, Status: q.Status})
	}
	for _, e := range rec.events {
		if e.Dur <= 0 || e.Kind == "refused" {
			continue
		}
		run.Pauses = append(run.Pauses, timeline.Pause{Host: timeline.HostOf(e.Host), Start: e.Time, Dur: e.Dur, Reason: e.Kind + ": " + e.Reason,
			Routine: e.Kind == "wait" && strings.HasPrefix(e.Reason, "delay")})
	}
	return run
}

func (d *demo) writeTimeline(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := timeline.WriteHTML(f, "goodbot demo: requests per host", d.runs); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
