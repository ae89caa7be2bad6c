// Package report writes BothyBot's readiness report (B10) as Markdown and as
// one self-contained HTML page (inline CSS, no scripts, no external assets).
package report

import (
	"fmt"
	"html/template"
	"io"
	"sort"
	"strings"
	"time"
)

// Item is one URL the readiness check looked at.
type Item struct {
	Kind    string // "home", "robots", "usage", "identity", "ai-file", "sitemap", "page"
	URL     string
	Status  int    // HTTP status, 0 when no response
	Outcome string // fetch outcome: "ok", "disallowed", "blocked", "unreachable", ...; for "usage": "stated", "none", "contradiction"; for "identity": "verified", "unverified", "unknown"; for "ai-file": "soft_404" when a 200 is not text
	Bytes   int64
	Why     string // human explanation of the outcome (rule, vendor, error)
}

// statement reports whether the item says what something states (usage
// preferences, page directives, whether the bot's signature verifies)
// rather than a URL read: such items are not counted as URLs.
func (it Item) statement() bool { return it.Kind == "usage" || it.Kind == "identity" }

// Found reports whether the item was fetched and is there.
func (it Item) Found() bool {
	return (it.Outcome == "ok" || it.Outcome == "not_modified") && it.Status < 400
}

// Report is a readiness report for one site.
type Report struct {
	Site     string
	Agent    string // the User-Agent the check used
	Started  time.Time
	Finished time.Time
	Items    []Item
}

// Summary counts items by outcome, in a stable order.
type Summary struct {
	Found, Missing, Disallowed, Blocked, Errors int
}

// URLs is how many URLs the summary counts.
func (s Summary) URLs() int { return s.Found + s.Missing + s.Disallowed + s.Blocked + s.Errors }

// Summary classifies the items: found, missing (404/410, or a soft 404: a
// page answering for a missing file), disallowed by
// robots.txt, blocked by bot protection, and other errors. Usage items are
// statements, not URLs read: they are not counted.
func (r *Report) Summary() Summary {
	var s Summary
	for _, it := range r.Items {
		if it.statement() {
			continue
		}
		switch class(it) {
		case "found":
			s.Found++
		case "missing":
			s.Missing++
		case "disallowed":
			s.Disallowed++
		case "blocked":
			s.Blocked++
		default:
			s.Errors++
		}
	}
	return s
}

func class(it Item) string {
	switch {
	case it.statement():
		return "usage-" + it.Outcome
	case it.Found():
		return "found"
	case it.Outcome == "disallowed":
		return "disallowed"
	case it.Outcome == "blocked":
		return "blocked"
	case it.Status == 404 || it.Status == 410 || it.Outcome == "soft_404":
		return "missing"
	}
	return "error"
}

var kindTitle = map[string]string{
	"home":     "Home page",
	"robots":   "robots.txt",
	"usage":    "Usage preferences: robots.txt per token, response headers",
	"identity": "Web Bot Auth: would a site verify the bot's signature",
	"ai-file":  "Files for AI assistants",
	"sitemap":  "Sitemaps",
	"page":     "Pages",
}

var kindOrder = []string{"home", "robots", "usage", "identity", "ai-file", "sitemap", "page"}

type section struct {
	Title string
	Items []Item
}

func (r *Report) sections() []section {
	by := map[string][]Item{}
	for _, it := range r.Items {
		by[it.Kind] = append(by[it.Kind], it)
	}
	var out []section
	kinds := append([]string(nil), kindOrder...)
	var extra []string
	for k := range by {
		if _, ok := kindTitle[k]; !ok {
			extra = append(extra, k)
		}
	}
	sort.Strings(extra)
	for _, k := range append(kinds, extra...) {
		if len(by[k]) == 0 {
			continue
		}
		t := kindTitle[k]
		if t == "" {
			t = k
		}
		out = append(out, section{Title: t, Items: by[k]})
	}
	return out
}

func statusText(it Item) string {
	if it.Status == 0 {
		return "-"
	}
	return fmt.Sprint(it.Status)
}

func verdict(it Item) string {
	if it.statement() {
		return it.Outcome
	}
	switch class(it) {
	case "found":
		return "found"
	case "missing":
		return "missing"
	case "disallowed":
		return "not read: robots.txt disallows"
	case "blocked":
		return "blocked by bot protection"
	}
	return "error: " + it.Outcome
}

// WriteMarkdown writes the report as Markdown.
func (r *Report) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	s := r.Summary()
	fmt.Fprintf(&b, "# Readiness report: %s\n\n", r.Site)
	fmt.Fprintf(&b, "Checked %s by `%s`, %d URLs in %s.\n\n", r.Started.UTC().Format(time.RFC3339), r.Agent,
		s.URLs(), r.Finished.Sub(r.Started).Round(time.Millisecond))
	fmt.Fprintf(&b, "| found | missing | disallowed by robots.txt | blocked by bot protection | errors |\n|---|---|---|---|---|\n")
	fmt.Fprintf(&b, "| %d | %d | %d | %d | %d |\n\n", s.Found, s.Missing, s.Disallowed, s.Blocked, s.Errors)
	for _, sec := range r.sections() {
		fmt.Fprintf(&b, "## %s\n\n| URL | status | result | why |\n|---|---|---|---|\n", sec.Title)
		for _, it := range sec.Items {
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", mdCell(it.URL), statusText(it), verdict(it), mdCell(it.Why))
		}
		b.WriteString("\n")
	}
	if s.Blocked > 0 {
		b.WriteString("A bot challenge looks like a dead site to a crawler that will not solve it. " +
			"To let BothyBot in, add a WAF rule that skips bot protection for requests whose user agent " +
			"contains \"BothyBot\" and whose Signature-Agent contains \"bothy.tools\".\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func mdCell(s string) string {
	s = strings.NewReplacer("|", `\|`, "\n", " ", "\r", " ").Replace(s)
	if s == "" {
		return " "
	}
	return s
}

var page = template.Must(template.New("report").Funcs(template.FuncMap{
	"status":  statusText,
	"verdict": verdict,
	"class":   class,
	"time":    func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
	"dur":     func(a, b time.Time) string { return b.Sub(a).Round(time.Millisecond).String() },
}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Readiness report: {{.R.Site}}</title>
<style>
body{font:15px/1.45 system-ui,sans-serif;max-width:60em;margin:2em auto;padding:0 1em;color:#222}
h1{font-size:1.5em}h2{font-size:1.15em;margin-top:1.8em}
table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #ddd;padding:.3em .5em;text-align:left;vertical-align:top}
td.url{word-break:break-all}.found{color:#176e2c}.missing{color:#8a6d00}.disallowed{color:#555}.blocked,.error{color:#b3261e}
.usage-contradiction{color:#b3261e}.sum td{font-size:1.3em;text-align:center}.sum th{text-align:center;font-weight:normal}
</style></head><body>
<h1>Readiness report: {{.R.Site}}</h1>
<p>Checked {{time .R.Started}} by <code>{{.R.Agent}}</code>, {{.S.URLs}} URLs in {{dur .R.Started .R.Finished}}.</p>
<table class="sum"><tr><th>found</th><th>missing</th><th>disallowed by robots.txt</th><th>blocked by bot protection</th><th>errors</th></tr>
<tr><td class="found">{{.S.Found}}</td><td class="missing">{{.S.Missing}}</td><td class="disallowed">{{.S.Disallowed}}</td><td class="blocked">{{.S.Blocked}}</td><td class="error">{{.S.Errors}}</td></tr></table>
{{range .Sections}}<h2>{{.Title}}</h2>
<table><tr><th>URL</th><th>status</th><th>result</th><th>why</th></tr>
{{range .Items}}<tr><td class="url">{{.URL}}</td><td>{{status .}}</td><td class="{{class .}}">{{verdict .}}</td><td>{{.Why}}</td></tr>
{{end}}</table>
{{end}}{{if .S.Blocked}}<p>A bot challenge looks like a dead site to a crawler that will not solve it. To let BothyBot in,
add a WAF rule that skips bot protection for requests whose user agent contains "BothyBot" and whose
Signature-Agent contains "bothy.tools".</p>{{end}}
</body></html>
`))

// WriteHTML writes the report as one self-contained HTML page.
func (r *Report) WriteHTML(w io.Writer) error {
	return page.Execute(w, struct {
		R        *Report
		S        Summary
		Sections []section
	}{r, r.Summary(), r.sections()})
}
