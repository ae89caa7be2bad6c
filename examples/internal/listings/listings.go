// Package listings reads DirectoriesBot's listings file and decides which
// listings are due for a check.
//
// A listings file is CSV with the header
//
//	listing_url,backlink,directory,schedule
//
// or JSON: an array of objects with the same four keys. The schedule is
// "daily", "weekly" or "monthly" (D12). A malformed row does not stop the
// others: Parse returns every good listing together with a *FileError that
// names each bad row by its line. In CSV every record is one line, so a
// quote left open spoils that line only.
package listings

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	"github.com/goodbot-go/goodbot/fetch"
)

// ErrMalformed is matched (errors.Is) by every *RowError.
var ErrMalformed = errors.New("listings: malformed row")

// MaxBytes bounds the size of a listings file Parse reads.
const MaxBytes = 64 << 20

// Schedule is how often a listing is checked (D12).
type Schedule int

// The schedules of the directory plans.
const (
	Monthly Schedule = iota // the zero value: the least frequent
	Weekly
	Daily
)

// ParseSchedule parses "daily", "weekly" or "monthly" (any case).
func ParseSchedule(s string) (Schedule, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "daily":
		return Daily, nil
	case "weekly":
		return Weekly, nil
	case "monthly":
		return Monthly, nil
	}
	return 0, fmt.Errorf("schedule %q is not daily, weekly or monthly", s)
}

func (s Schedule) String() string {
	switch s {
	case Daily:
		return "daily"
	case Weekly:
		return "weekly"
	default:
		return "monthly"
	}
}

// Next returns when a listing last checked at last is next due.
func (s Schedule) Next(last time.Time) time.Time {
	switch s {
	case Daily:
		return last.AddDate(0, 0, 1)
	case Weekly:
		return last.AddDate(0, 0, 7)
	default:
		return last.AddDate(0, 1, 0)
	}
}

// Listing is one row of the listings file.
type Listing struct {
	URL       string   // the exact page to fetch (D3)
	Backlink  string   // the URL the page must link to
	Directory string   // the directory's domain, named in the User-Agent (D1)
	Schedule  Schedule // D12
	Line      int      // line in the file where the row starts
}

// Due reports whether a listing last checked at last (zero: never) is due
// at now. A last check dated later than now (recorded under a clock that
// was ahead, or a damaged record) is due: when it really happened is
// unknown, and waiting for its date could skip the listing's checks for as
// long as the date lies ahead.
func (l Listing) Due(last, now time.Time) bool {
	return last.IsZero() || last.After(now) || !now.Before(l.Schedule.Next(last))
}

// RowError is one malformed row.
type RowError struct {
	Line int
	Err  error
}

func (e *RowError) Error() string {
	return fmt.Sprintf("listings: line %d: %v", e.Line, e.Err)
}

// Unwrap returns the cause.
func (e *RowError) Unwrap() error { return e.Err }

// Is makes every RowError match ErrMalformed.
func (e *RowError) Is(target error) bool { return target == ErrMalformed }

// FileError gathers the malformed rows of one file.
type FileError struct {
	Name string
	Rows []*RowError
}

func (e *FileError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "listings: %s: %d malformed row(s), skipped", e.Name, len(e.Rows))
	for _, r := range e.Rows {
		b.WriteString("\n  ")
		b.WriteString(r.Error())
	}
	return b.String()
}

// Unwrap returns the row errors.
func (e *FileError) Unwrap() []error {
	errs := make([]error, len(e.Rows))
	for i, r := range e.Rows {
		errs[i] = r
	}
	return errs
}

var header = []string{"listing_url", "backlink", "directory", "schedule"}

// Parse reads a listings file (CSV or JSON, told apart by the first
// non-blank byte) named name for messages. It returns the good listings; the
// error is a *FileError when some rows were malformed (the listings are still
// returned), or another error when the file as a whole cannot be read.
func Parse(r io.Reader, name string) ([]Listing, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("listings: %s: %w", name, err)
	}
	if len(data) > MaxBytes {
		return nil, fmt.Errorf("listings: %s: larger than %d bytes", name, MaxBytes)
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, nil
	}
	var (
		out  []Listing
		rows []*RowError
	)
	if trimmed[0] == '[' || trimmed[0] == '{' {
		out, rows, err = parseJSON(data)
	} else {
		out, rows, err = parseCSV(data)
	}
	if err != nil {
		return out, fmt.Errorf("listings: %s: %w", name, err)
	}
	if len(rows) > 0 {
		return out, &FileError{Name: name, Rows: rows}
	}
	return out, nil
}

// parseCSV reads the CSV form line by line: every record is one line (no
// listing field holds a newline, so a quoted field never spans lines), and
// a line that is not a record (an unbalanced or stray quote) is named by its
// own line number while the rows before and after it are still read. Blank
// lines and lines starting with '#' are skipped.
func parseCSV(data []byte) ([]Listing, []*RowError, error) {
	var (
		out  []Listing
		rows []*RowError
		cols map[string]int
	)
	line := 0
	for rest := data; len(rest) > 0; {
		var text []byte
		text, rest, _ = bytes.Cut(rest, []byte("\n"))
		line++
		if t := bytes.TrimSpace(text); len(t) == 0 || t[0] == '#' {
			continue
		}
		rec, err := csvLine(text)
		if err != nil {
			if cols == nil {
				return nil, nil, fmt.Errorf("line %d: header: %v", line, err)
			}
			rows = append(rows, &RowError{Line: line, Err: err})
			continue
		}
		if cols == nil {
			cols = map[string]int{}
			for i, h := range rec {
				cols[strings.ToLower(strings.TrimSpace(h))] = i
			}
			for _, h := range header {
				if _, ok := cols[h]; !ok {
					return nil, nil, fmt.Errorf("line %d: header must be %s (missing %q)", line, strings.Join(header, ","), h)
				}
			}
			continue
		}
		get := func(h string) string {
			if i := cols[h]; i < len(rec) {
				return strings.TrimSpace(rec[i])
			}
			return ""
		}
		if len(rec) < len(cols) {
			rows = append(rows, &RowError{Line: line, Err: fmt.Errorf("%d fields, want %d", len(rec), len(cols))})
			continue
		}
		l, err := build(get("listing_url"), get("backlink"), get("directory"), get("schedule"))
		if err != nil {
			rows = append(rows, &RowError{Line: line, Err: err})
			continue
		}
		l.Line = line
		out = append(out, l)
	}
	if cols == nil {
		return nil, nil, fmt.Errorf("no header line (%s)", strings.Join(header, ","))
	}
	return out, rows, nil
}

// csvLine reads text, one line, as one CSV record. Its error names the
// column; the caller names the line.
func csvLine(text []byte) ([]string, error) {
	cr := csv.NewReader(bytes.NewReader(text))
	cr.FieldsPerRecord = -1
	cr.TrimLeadingSpace = true
	rec, err := cr.Read()
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return nil, fmt.Errorf("column %d: %w", pe.Column, pe.Err)
	}
	return rec, err
}

type jsonRow struct {
	ListingURL string `json:"listing_url"`
	Backlink   string `json:"backlink"`
	Directory  string `json:"directory"`
	Schedule   string `json:"schedule"`
}

func parseJSON(data []byte) ([]Listing, []*RowError, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	lineAt := func(off int64) int { return 1 + bytes.Count(data[:min(int(off), len(data))], []byte("\n")) }
	tok, err := dec.Token()
	if err != nil {
		return nil, nil, fmt.Errorf("line %d: %v", lineAt(dec.InputOffset()), err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return nil, nil, fmt.Errorf("line 1: JSON listings must be an array of objects")
	}
	var (
		out  []Listing
		rows []*RowError
	)
	for dec.More() {
		// The row starts at the first non-space byte after the offset.
		off := dec.InputOffset()
		for off < int64(len(data)) && strings.IndexByte(" \t\r\n,", data[off]) >= 0 {
			off++
		}
		line := lineAt(off)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			// Broken JSON: nothing after this point can be trusted.
			rows = append(rows, &RowError{Line: line, Err: err})
			return out, rows, nil
		}
		var r jsonRow
		rd := json.NewDecoder(bytes.NewReader(raw))
		rd.DisallowUnknownFields()
		if err := rd.Decode(&r); err != nil {
			rows = append(rows, &RowError{Line: line, Err: err})
			continue
		}
		l, err := build(r.ListingURL, r.Backlink, r.Directory, r.Schedule)
		if err != nil {
			rows = append(rows, &RowError{Line: line, Err: err})
			continue
		}
		l.Line = line
		out = append(out, l)
	}
	return out, rows, nil
}

func build(listing, backlink, directory, schedule string) (Listing, error) {
	if err := checkURL("listing_url", listing); err != nil {
		return Listing{}, err
	}
	if err := checkURL("backlink", backlink); err != nil {
		return Listing{}, err
	}
	directory = strings.ToLower(strings.TrimSpace(directory))
	if directory == "" {
		return Listing{}, errors.New("directory is empty")
	}
	if strings.ContainsAny(directory, " ;()/\"\\\t\r\n") {
		return Listing{}, fmt.Errorf("directory %q is not a domain name", directory)
	}
	s, err := ParseSchedule(schedule)
	if err != nil {
		return Listing{}, err
	}
	return Listing{URL: listing, Backlink: backlink, Directory: directory, Schedule: s}, nil
}

func checkURL(field, s string) error {
	if s == "" {
		return fmt.Errorf("%s is empty", field)
	}
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("%s %q: %v", field, fetch.Redact(s), errors.Unwrap(err))
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%s %q is not an http(s) URL", field, u.Redacted())
	}
	return nil
}

// ParseBlockList reads a block list: one domain a line, "#" comments and
// blank lines ignored. A domain blocks itself and its subdomains (D14).
func ParseBlockList(r io.Reader) ([]string, error) {
	var out []string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		line = strings.Trim(strings.ToLower(strings.TrimSpace(line)), ".")
		if line != "" {
			out = append(out, line)
		}
	}
	if err := sc.Err(); err != nil {
		return out, fmt.Errorf("listings: block list: %w", err)
	}
	return out, nil
}
